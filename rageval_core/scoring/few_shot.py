"""Few-shot examples for the one-call judge: clear-cut passes and fails drawn from the rows people labelled
in the train split, carried by the rubric (``metadata["few_shot"]``) and rendered where a judge template
has ``{examples}``.

Why the rubric carries them: a saved rubric version then holds its examples, its content hash (and so every
request and cache key) changes when they change, and two versions can be compared as text. Examples are
data from the user's dataset, so each is rendered through the ``judge_example`` template of the rubric's
language, whose untrusted fields are delimited and cannot close their delimiters. With no examples the
``{examples}`` value is empty and the prompt is byte-for-byte the prompt without the placeholder (the
shipped recordings keep replaying).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rageval_core.core.types import Sample
from rageval_core.scoring.metrics.steps import sample_language
from rageval_core.scoring.prompts import PromptTemplate, load_template
from rageval_core.scoring.rubric import Rubric, judge_phrases

METADATA_KEY = "few_shot"
EXAMPLE_TEMPLATE = "judge_example"
REASON_CHARS = 120  # the example's reason: its level description, cut here (a small model copies long reasons)


@dataclass(frozen=True)
class FewShotExample:
    """One labelled row shown to the judge with the raw score per criterion that its labels imply."""

    row_id: str
    question: str
    contexts: tuple[str, ...]
    answer: str
    ground_truth: str
    scores: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"row_id": self.row_id, "question": self.question, "contexts": list(self.contexts),
                "answer": self.answer, "ground_truth": self.ground_truth, "scores": dict(self.scores)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FewShotExample:
        return cls(str(data["row_id"]), str(data.get("question") or ""), tuple(str(c) for c in data.get("contexts") or ()),
                   str(data.get("answer") or ""), str(data.get("ground_truth") or ""),
                   {str(k): int(v) for k, v in dict(data.get("scores") or {}).items()})


def _size(sample: Sample) -> int:
    return len(sample.question or "") + len(sample.answer or "") + sum(len(c) for c in sample.contexts)


def choose_examples(
    samples: Sequence[Sample],
    labels: Mapping[str, Mapping[str, int]],
    rubric: Rubric,
    train_ids: Collection[str],
    *,
    passes: int = 1,
    fails: int = 1,
) -> list[FewShotExample]:
    """Clear-cut examples from the train rows in the rubric's language: a pass is labelled 1 on every criterion
    of the rubric, a fail 0 on at least one (one fault preferred, each failing criterion covered in turn).

    ``labels`` is ``{criterion: {row_id: 0/1}}``. Rows missing a label of any criterion, an answer or another
    language are never examples. Shortest rows first (a shorter fixed prefix is cheaper on every call); the
    result alternates pass, fail, so the model does not see one class first.
    """
    ids = rubric.ids
    train = set(train_ids)
    candidates = [s for s in samples if s.id in train and (s.answer or "").strip()
                  and sample_language(s) == rubric.language and all(s.id in labels.get(c, {}) for c in ids)]
    candidates.sort(key=lambda s: (_size(s), s.id))
    good = [s for s in candidates if all(labels[c][s.id] == 1 for c in ids)][:passes]
    bad_all = [s for s in candidates if any(labels[c][s.id] == 0 for c in ids)]
    bad_all.sort(key=lambda s: sum(labels[c][s.id] == 0 for c in ids))  # stable: one fault first, then size
    bad: list[Sample] = []
    for criterion in list(ids) * max(1, fails):  # round robin over the criteria that fail
        if len(bad) >= fails:
            break
        pick = next((s for s in bad_all if s not in bad and labels[criterion][s.id] == 0), None)
        if pick is not None:
            bad.append(pick)
    bad.extend(s for s in bad_all if s not in bad and len(bad) < fails)
    ordered = [s for pair in zip(good, bad) for s in pair] + good[len(bad):] + bad[len(good):]
    return [_example(s, rubric, labels) for s in ordered]


def _example(sample: Sample, rubric: Rubric, labels: Mapping[str, Mapping[str, int]]) -> FewShotExample:
    scores = {c.id: c.max if labels[c.id][sample.id] == 1 else c.min for c in rubric.criteria}
    return FewShotExample(sample.id, sample.question or "", tuple(sample.contexts), sample.answer or "",
                          sample.ground_truth or "", scores)


def with_examples(rubric: Rubric, examples: Sequence[FewShotExample]) -> Rubric:
    """A copy of ``rubric`` carrying ``examples`` (none: the key is dropped, so the rubric hashes as before)."""
    metadata = {k: v for k, v in rubric.metadata.items() if k != METADATA_KEY}
    if examples:
        metadata[METADATA_KEY] = [e.to_dict() for e in examples]
    return replace(rubric, metadata=metadata)


def examples_of(rubric: Rubric) -> list[FewShotExample]:
    """The examples a rubric carries (empty when none)."""
    return [FewShotExample.from_dict(e) for e in rubric.metadata.get(METADATA_KEY) or ()]


def example_output(example: FewShotExample, rubric: Rubric) -> str:
    """The judge JSON the example's labels imply, for the rubric's criteria that the example scores; the reason
    is the level description of that score, so it says why in the rubric's own words."""
    out: dict[str, Any] = {}
    for c in rubric.criteria:
        if c.id in example.scores and c.min <= example.scores[c.id] <= c.max:
            score = example.scores[c.id]
            out[f"{c.id}_score"] = score
            out[f"{c.id}_reason"] = c.levels.get(score, "")[:REASON_CHARS]
    return json.dumps(out, ensure_ascii=False)


def example_template(language: str) -> PromptTemplate:
    return load_template(EXAMPLE_TEMPLATE, language)


def render_examples(rubric: Rubric) -> str:
    """The ``{examples}`` value: empty with no examples, else a blank line, the heading and each example."""
    examples = [e for e in examples_of(rubric) if any(c in e.scores for c in rubric.ids)]
    if not examples:
        return ""
    phrases = judge_phrases(rubric.language)
    template = example_template(rubric.language)
    blocks = [
        template.render(index=i, question=e.question, contexts=list(e.contexts),
                        ground_truth=e.ground_truth or phrases["no_ground_truth"], answer=e.answer,
                        output=example_output(e, rubric))
        for i, e in enumerate(examples, 1)
    ]
    return "\n\n" + phrases["examples_heading"] + "\n\n" + "\n\n".join(blocks)
