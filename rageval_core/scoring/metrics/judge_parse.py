"""Reading one judge response: a pure function from text to one verdict per criterion.

Code fences and prose around the JSON are tolerated, flat ``<id>_score``/``<id>_reason`` and nested
``{"<id>": {"score", "reason"}}`` are both read, and anything else makes only that criterion unscored
(``parse_error``, raw text kept) — never clamped, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rageval_core.core.jsonparse import ParseError, parse_json_object
from rageval_core.core.messages import say
from rageval_core.scoring.rubric import Criterion
from rageval_core.core.types import Unscored

UNSUPPORTED_KEY = "_unsupported"
# ``{"_unscored": {id: reason}}``: the offline judge's way to say a row is beyond its heuristic (a bare
# yes / no answer, ...). Only these reasons are taken; anything else a model writes there is ignored.
UNSCORED_KEY = "_unscored"
DECLARABLE_REASONS = frozenset(
    {Unscored.NO_CLAIMS, Unscored.EMPTY_ANSWER, Unscored.MISSING_FIELD, Unscored.UNCHECKABLE, Unscored.OFFLINE_UNSUPPORTED}
)


@dataclass(frozen=True)
class CriterionVerdict:
    """What one response said about one criterion: a raw score and reason, or why it is unscored."""

    criterion: str
    score: int | None
    reason: str | None = None
    unscored_reason: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion,
            "score": self.score,
            "reason": self.reason,
            "unscored_reason": self.unscored_reason,
            "error": self.error,
        }


@dataclass
class JudgeParse:
    """A parsed judge response: one verdict per criterion plus the raw text and the JSON object read."""

    raw: str
    parsed: dict[str, Any] | None
    verdicts: dict[str, CriterionVerdict]
    error: str | None = None


_INT_TEXT = re.compile(r"^\s*[+-]?\d+\s*$")


def _as_int(value: Any) -> int | None:
    """An integer score as written: int, a float with no fraction (JSON ``4.0``) or a digit string ``"4"``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_TEXT.match(value):
        return int(value)
    return None


def _reason_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _find(parsed: Mapping[str, Any], cid: str) -> tuple[bool, Any, Any]:
    """(found, score, reason) from the flat or the nested shape; flat wins when both are present."""
    if f"{cid}_score" in parsed:
        return True, parsed[f"{cid}_score"], parsed.get(f"{cid}_reason")
    nested = parsed.get(cid)
    if isinstance(nested, Mapping) and "score" in nested:
        return True, nested["score"], nested.get("reason")
    return False, None, parsed.get(f"{cid}_reason")


def parse_judge_output(text: str | None, criteria: Sequence[Criterion]) -> JudgeParse:
    """Read one judge response. Each criterion is scored or unscored on its own; nothing is clamped.

    - no JSON object → every criterion ``parse_error``;
    - ``"_unsupported": [ids]`` (the offline judge) → those criteria ``offline_unsupported``;
    - ``"_unscored": {id: reason}`` with a known reason (``uncheckable``, ...) and no score → that reason;
    - a missing criterion, a non-integer or an out-of-range score → that criterion ``parse_error``.
    """
    raw = text or ""
    try:
        parsed = parse_json_object(raw)
    except ParseError as exc:
        message = f"{exc}: no JSON object could be read"
        failed = {c.id: CriterionVerdict(c.id, None, None, Unscored.PARSE_ERROR, message) for c in criteria}
        return JudgeParse(raw, None, failed, str(exc))
    unsupported_raw = parsed.get(UNSUPPORTED_KEY) or []
    unsupported = {str(x) for x in unsupported_raw} if isinstance(unsupported_raw, (list, tuple)) else set()
    declared_raw = parsed.get(UNSCORED_KEY) or {}
    declared = {
        str(k): str(v) for k, v in (declared_raw.items() if isinstance(declared_raw, Mapping) else ())
        if str(v) in DECLARABLE_REASONS
    }
    verdicts: dict[str, CriterionVerdict] = {}
    for c in criteria:
        found, value, reason_value = _find(parsed, c.id)
        reason = _reason_text(reason_value)
        if c.id in unsupported and _as_int(value) is None:
            verdicts[c.id] = CriterionVerdict(
                c.id, None, reason, Unscored.OFFLINE_UNSUPPORTED, say("judge.offline_unsupported")
            )
            continue
        if c.id in declared and not found:
            verdicts[c.id] = CriterionVerdict(
                c.id, None, reason, declared[c.id], say("judge.declared", reason=declared[c.id], criterion=c.id)
            )
            continue
        if not found:
            verdicts[c.id] = CriterionVerdict(
                c.id, None, reason, Unscored.PARSE_ERROR, say("judge.score_missing", criterion=c.id)
            )
            continue
        score = _as_int(value)
        if score is None:
            verdicts[c.id] = CriterionVerdict(
                c.id, None, reason, Unscored.PARSE_ERROR, say("judge.not_integer", criterion=c.id, value=repr(value))
            )
        elif not (c.min <= score <= c.max):
            verdicts[c.id] = CriterionVerdict(
                c.id, None, reason, Unscored.PARSE_ERROR, say("judge.out_of_range", criterion=c.id, score=score, min=c.min, max=c.max)
            )
        else:
            verdicts[c.id] = CriterionVerdict(c.id, score, reason)
    return JudgeParse(raw, parsed, verdicts)
