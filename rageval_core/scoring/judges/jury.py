"""A jury: one score per (row, criterion) from several judges' scores. Pure math, no I/O.

``mean`` and ``median`` combine the members' normalised scores; ``majority`` has each member vote pass
(score >= threshold) or fail and gives 1.0 or 0.0 when more than half of the voting members agree, and no
score (``no_majority``) on a tie. Members that left the row unscored do not vote; when none scored, the
jury is unscored with the members' most common reason, never a made-up value.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Literal, Sequence

from rageval_core.core.types import Unscored
from rageval_core.core.errors import ConfigError

JuryRule = Literal["mean", "median", "majority"]
RULES: tuple[str, ...] = ("mean", "median", "majority")


@dataclass(frozen=True)
class Verdict:
    """The jury's value (or ``None`` with ``unscored_reason``) and how many members it heard."""

    value: float | None
    unscored_reason: str | None
    voters: int
    passes: int | None = None  # majority only: members voting pass


def combine(values: Sequence[float | None], rule: str, *, threshold: float = 0.5,
            reasons: Sequence[str | None] = ()) -> Verdict:
    """The jury's verdict over the members' values (``None`` = that member left the row unscored)."""
    if rule not in RULES:
        raise ConfigError(f"jury rule must be one of {', '.join(RULES)}, not {rule!r}")
    scored = [float(v) for v in values if v is not None]
    if not scored:
        why = Counter(r for r in reasons if r).most_common(1)
        return Verdict(None, why[0][0] if why else Unscored.MISSING_FIELD, 0)
    if rule == "mean":
        return Verdict(sum(scored) / len(scored), None, len(scored))
    if rule == "median":
        return Verdict(float(statistics.median(scored)), None, len(scored))
    passes = sum(1 for v in scored if v >= threshold)
    fails = len(scored) - passes
    if passes * 2 > len(scored):
        return Verdict(1.0, None, len(scored), passes)
    if fails * 2 > len(scored):
        return Verdict(0.0, None, len(scored), passes)
    return Verdict(None, Unscored.NO_MAJORITY, len(scored), passes)


def jury_method(rule: str) -> str:
    """The jury's method string, listed like any method: ``jury:mean``, ``jury:median``, ``jury:majority``."""
    return f"jury:{rule}"
