"""Judge templates: which template a language uses, and the checks that tell a user what an edited template
breaks (unknown variables, an output format that no longer matches the rubric's criteria or scales) or
silently leaves out (edits to the rubric that the template would not send).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rageval_core.core.messages import say
from rageval_core.scoring.prompts import PromptTemplate, TemplateError, load_template
from rageval_core.scoring.rubric import Rubric
from rageval_core.core.errors import ConfigError

# Everything a judge template may use. ``context`` is the RAGAS-vs-judge article's name (contexts joined by newlines), so
# the article's prompt can be pasted into the raw-template editor unchanged.
JUDGE_VARIABLES: tuple[str, ...] = (
    "instructions",
    "overview",
    "rubric",
    "examples",
    "output_format",
    "question",
    "contexts",
    "context",
    "ground_truth",
    "answer",
)

class TemplateMismatchError(ConfigError):
    """A judge template that cannot serve its rubric; raised before any call. ``problems`` lists them all."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


# ---------------------------------------------------------------------------------------- templates


def judge_template(language: str) -> PromptTemplate:
    """The shipped judge template of a language (``prompts/templates/<lang>/judge.txt``)."""
    return load_template("judge", language)


def template_from_text(text: str, language: str, name: str = "judge-custom") -> PromptTemplate:
    """A raw template edited by the user; placeholders are checked against ``JUDGE_VARIABLES`` now."""
    return PromptTemplate.from_text(text, name=name, language=language, variables=JUDGE_VARIABLES)


_UNBRACE = re.compile(r"\{\{|\}\}")
_FLAT_KEY = re.compile(r'"([a-z][a-z0-9]*(?:_[a-z0-9]+)*?)_(score|reason)"\s*:')
_NESTED_KEY = re.compile(r'"([a-z][a-z0-9]*(?:_[a-z0-9]+)*)"\s*:\s*\{\s*"(score|reason)"')


def literal_output_keys(template: PromptTemplate) -> dict[str, set[str]]:
    """Criterion ids whose keys a template writes out literally, with the fields asked (``score``/``reason``).

    Reads both shapes the parser accepts: ``"<id>_score":`` and ``"<id>": {"score": ...}``.
    """
    text = _UNBRACE.sub(lambda m: m.group(0)[0], template.text)
    found: dict[str, set[str]] = {}
    for pattern in (_FLAT_KEY, _NESTED_KEY):
        for match in pattern.finditer(text):
            found.setdefault(match.group(1), set()).add(match.group(2))
    return found


# A score written out literally with its range: ``"faithfulness_score": <1-5の整数>`` or, nested,
# ``"faithfulness": {"score": <integer 1-5>``. The range is what the template asks the model for.
_LITERAL_SCORE = re.compile(
    r'"([a-z][a-z0-9]*(?:_[a-z0-9]+)*?)(?:_score"|"\s*:\s*\{\s*"score")\s*:\s*([^\n,}]*)'
)
_RANGE = re.compile(r"(-?\d+)\s*(?:-|–|〜|~|to|から)\s*(-?\d+)")


def literal_score_ranges(template: PromptTemplate) -> dict[str, tuple[int, int]]:
    """Score ranges a template writes out literally per criterion id (``<1-5の整数>`` → (1, 5))."""
    text = _UNBRACE.sub(lambda m: m.group(0)[0], template.text)
    found: dict[str, tuple[int, int]] = {}
    for match in _LITERAL_SCORE.finditer(text):
        bounds = _RANGE.search(match.group(2))
        if bounds:
            found.setdefault(match.group(1), (int(bounds.group(1)), int(bounds.group(2))))
    return found


def check_template(template: PromptTemplate | str, rubric: Rubric, *, per_criterion: bool = False) -> list[str]:
    """Problems that would make a judge template fail its rubric, found before any call.

    Placeholders must be judge variables; the answer must be shown; the inputs the criteria require
    (question, contexts, ground truth) must be shown; and the output keys the template asks for must
    match the rubric's criteria, either through ``{output_format}`` or written out literally.
    """
    if isinstance(template, str):
        try:
            template = template_from_text(template, rubric.language)
        except TemplateError as exc:
            return [str(exc)]
    problems: list[str] = []
    unknown = [v for v in template.variables if v not in JUDGE_VARIABLES]
    if unknown:
        problems.append(say("template.unknown_variables", unknown=unknown, known=", ".join(JUDGE_VARIABLES)))
    used = set(template.placeholders)
    if "answer" not in used:
        problems.append(say("template.no_answer"))
    shown = {"question": "question" in used, "ground_truth": "ground_truth" in used,
             "contexts": bool(used & {"contexts", "context"})}
    for c in rubric.criteria:
        for need in c.requires:
            if not shown[need]:
                placeholder = "{contexts}" if need == "contexts" else "{" + need + "}"
                problems.append(say("template.needs", criterion=repr(c.id), need=need, placeholder=placeholder))
    literal = literal_output_keys(template)
    rubric_ids = set(rubric.ids)
    for cid in sorted(set(literal) - rubric_ids):
        problems.append(
            f"the template asks for {cid}_{max(literal[cid])} but the rubric has no criterion {cid!r}"
        )
    if "output_format" not in used:
        missing = [cid for cid in rubric.ids if "score" not in literal.get(cid, set())]
        if missing:
            problems.append(
                f"the template never asks for {', '.join(f'{cid}_score' for cid in missing)}:"
                " add {output_format} or write those keys into the JSON block"
            )
    else:
        partial = [cid for cid in rubric.ids if cid in literal and "score" not in literal[cid]]
        problems.extend(f"the template asks for {cid}_reason but not {cid}_score" for cid in partial)
    ranges = literal_score_ranges(template)
    for c in rubric.criteria:
        if c.id in ranges and ranges[c.id] != (c.min, c.max):
            low, high = ranges[c.id]
            problems.append(
                f"the template asks for {c.id}_score on {low}-{high} but the rubric scores {c.id} on"
                f" {c.min}..{c.max}: every answer outside {c.min}..{c.max} would be a parse_error"
            )
    if per_criterion and len(rubric.criteria) > 1 and literal and "output_format" not in used:
        problems.append(
            "per-criterion mode sends one criterion a call, but this template's JSON block asks for every"
            " criterion at once: use {output_format} (and {rubric}) instead of writing the keys out"
        )
    return problems


def template_notes(template: PromptTemplate | str, rubric: Rubric) -> list[str]:
    """What a working template leaves out of the rubric: edits there will not change the prompt.

    Not errors (the RAGAS-vs-judge article's prompt pasted verbatim writes its levels out and is valid), but a user who
    edits a level description while such a template is active must be told the edit is not sent.
    """
    if isinstance(template, str):
        try:
            template = template_from_text(template, rubric.language)
        except TemplateError:
            return []
    used = set(template.placeholders)
    notes: list[str] = []
    if "rubric" not in used:
        notes.append(
            "the template has no {rubric}: criterion and level descriptions edited in the rubric are not sent;"
            " the prompt shows only the criteria the template writes out itself"
        )
    if "instructions" not in used and rubric.instructions:
        notes.append("the template has no {instructions}: the rubric's role line is not sent")
    if "examples" not in used and rubric.metadata.get("few_shot"):
        notes.append("the template has no {examples}: the rubric's few-shot examples are not sent")
    if "overview" not in used and "rubric" in used:
        notes.append("the template has no {overview}: the number of criteria and their scale are not stated")
    return notes
