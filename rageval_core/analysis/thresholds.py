"""``--fail-under``: parse thresholds, check them against a run summary, print the verdicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from rageval_core.core.errors import UsageError


@dataclass(frozen=True)
class Threshold:
    """``faithfulness=0.8`` (decomposed) or ``judge:rubric5:faithfulness=0.8`` (a judge's criterion)."""

    method: str
    metric: str
    minimum: float

    @property
    def label(self) -> str:
        return self.metric if self.method == "decomposed" else f"{self.method}:{self.metric}"


def parse_threshold(text: str) -> Threshold:
    target, sep, value = text.rpartition("=")
    if not sep or not target:
        raise UsageError(f"--fail-under {text!r}: expected metric=value, e.g. faithfulness=0.8 or judge:rubric5:faithfulness=0.8")
    try:
        minimum = float(value)
    except ValueError:
        raise UsageError(f"--fail-under {text!r}: {value!r} is not a number") from None
    if not 0.0 <= minimum <= 1.0:
        raise UsageError(f"--fail-under {text!r}: scores are in [0, 1]")
    if target.startswith(("judge:", "jury:")):
        method, _, metric = target.rpartition(":")
        if method in ("judge", "jury") or not metric:
            raise UsageError(f"--fail-under {text!r}: a judge threshold is judge:<rubric id>:<criterion>=value")
        return Threshold(method, metric, minimum)
    return Threshold("decomposed", target, minimum)


@dataclass
class ThresholdCheck:
    threshold: Threshold
    mean: float | None
    scored: int
    unscored: int

    @property
    def passed(self) -> bool:
        """A mean at or above the minimum; no scored row at all is a miss, never a pass."""
        return self.mean is not None and self.mean >= self.threshold.minimum - 1e-12


def check_thresholds(summary: dict[str, dict[str, dict[str, Any]]], thresholds: Sequence[Threshold]) -> list[ThresholdCheck]:
    out = []
    for t in thresholds:
        entry = summary.get(t.method, {}).get(t.metric) or {"mean": None, "scored": 0, "unscored": 0}
        out.append(ThresholdCheck(t, entry["mean"], entry["scored"], entry["unscored"]))
    return out
