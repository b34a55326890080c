"""The decomposed metrics' step templates as the Prompts page edits them: which steps there are, the shipped
text, checking an edit against what the step supplies, and a preview of the filled prompt for one row.

An edited step reaches a run as ``options["templates"]`` (``{"ja/extract_claims": text}``), which every
metric reads through ``metrics.steps.get_template``; the edit changes the rendered messages and so the
request key (cache and replay), and the run records the template's hash (``run.plan``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rageval_core.scoring.prompts import PromptTemplate, load_template
from rageval_core.core.text import split_sentences
from rageval_core.core.types import Sample

# Step → the metrics that send it (the judge's template is edited beside the rubric, not here).
STEPS: dict[str, tuple[str, ...]] = {
    "extract_claims": ("faithfulness", "answer_correctness"),
    "verify_claims": ("faithfulness",),
    "verify_claims_with_reference": ("faithfulness", "answer_correctness"),
    "generate_questions": ("answer_relevancy",),
    "context_verdicts": ("context_precision",),
    "attribute_reference": ("context_recall",),
    "extract_relevant_sentences": ("context_relevance",),
    "classify_correctness": ("answer_correctness",),
}


def key(task: str, language: str) -> str:
    """The ``options["templates"]`` key of a step in a language."""
    return f"{language}/{task}"


def shipped(task: str, language: str) -> PromptTemplate:
    return load_template(task, language)


def check(task: str, language: str, text: str) -> PromptTemplate:
    """Parse an edited step template; raises ``TemplateError`` when it declares or uses a variable the step does
    not supply (the step's variables are the shipped template's)."""
    return PromptTemplate.from_text(text, name=task, language=language, variables=shipped(task, language).variables)


def preview_values(task: str, sample: Sample, language: str, n_questions: int = 3) -> dict[str, Any]:
    """Values to fill a step's template for one row. Inputs a step gets from an earlier step (the claims) are
    stood in for by the sentences of the answer / ground truth, which is what a claim extraction starts from."""
    lang: Any = language
    answer_sentences = split_sentences(sample.answer or "", lang) or [sample.answer or ""]
    reference = sample.ground_truth or ""
    reference_sentences = split_sentences(reference, lang) if reference else []
    values: dict[str, Any] = {
        "question": sample.question,
        "answer": sample.answer,
        "contexts": list(sample.contexts),
        "claims": answer_sentences,
        "answer_claims": answer_sentences,
        "reference": reference or sample.answer,
        "reference_kind": "ground_truth" if reference else "answer",
        "reference_claims": reference_sentences,
        "reference_sentences": reference_sentences,
        "n": n_questions,
    }
    return {name: values[name] for name in shipped(task, language).variables if name in values}


def render_preview(task: str, sample: Sample, language: str, text: str | None = None) -> str:
    """The filled prompt of ``task`` for ``sample`` with the edited ``text`` (or the shipped template)."""
    template = check(task, language, text) if text is not None else shipped(task, language)
    return template.render(**preview_values(task, sample, language))


def overrides(edited: Mapping[str, str], language: str) -> dict[str, str]:
    """The edited steps of one language as run options (``{"ja/extract_claims": text}``), shipped text left out."""
    out: dict[str, str] = {}
    for name, text in edited.items():
        task = name.split("/", 1)[-1]
        if name.startswith(f"{language}/") and task in STEPS and text != (shipped(task, language).source or ""):
            out[name] = text
    return out
