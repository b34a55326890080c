"""How far a probe moved the scores: mean shift (probe − original) with its bootstrap 95% interval, the rows
that moved most, and whether the shift is beyond the probe's tolerance. Pure math, no I/O.

Per metric × method, over the probe cases where both the original row and the probe row are scored (a
pair with one side unscored is counted, not guessed). A probe is flagged when, for any metric × method,
the mean shift is beyond its tolerance: ``|shift| > tolerance``, or for the injection probes
``shift > tolerance`` (a score that falls when told to rise was not fooled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust.probes import DEFAULT_TOLERANCES, UPWARD_ONLY, ProbeSet
from rageval_core.core.stats import bootstrap_ci
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, MetricResult

TOP_ROWS = 3
MOVED = 0.001  # a row "moved" by at least this much (below: embedding noise, printed as ±0.000)


@dataclass(frozen=True)
class RowShift:
    """One case: the original row, the probe row (the same id except for the language probe), both scores."""

    row_id: str
    probe_row_id: str
    original: float
    probe: float

    @property
    def shift(self) -> float:
        return self.probe - self.original

    def to_dict(self) -> dict[str, Any]:
        return {
            "row_id": self.row_id, "probe_row_id": self.probe_row_id,
            "original": self.original, "probe": self.probe, "shift": self.shift,
        }


@dataclass
class ShiftStat:
    """One metric × method under one probe."""

    metric: str
    method: str
    n: int  # cases scored on both sides
    mean_shift: float | None
    low: float | None
    high: float | None
    max_shift: float | None  # the largest single-row shift upwards (injections) or in size (others), signed: probe − original
    top: list[RowShift]
    unscored_pairs: int  # cases with the original or the probe row unscored
    tolerance: float
    upward_only: bool
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric, "method": self.method, "n": self.n,
            "mean_shift": self.mean_shift, "low": self.low, "high": self.high, "max_shift": self.max_shift,
            "top": [r.to_dict() for r in self.top], "unscored_pairs": self.unscored_pairs,
            "tolerance": self.tolerance, "upward_only": self.upward_only, "flagged": self.flagged,
        }


@dataclass
class ProbeResult:
    """One probe over a dataset: its cases, what it skipped, and the shift per metric × method."""

    probe: str
    n_cases: int
    skipped: dict[str, int]
    note: str
    tolerance: float
    shifts: list[ShiftStat] = field(default_factory=list)
    run_id: str | None = None  # the run that scored the probe rows, when stored

    @property
    def flagged(self) -> bool:
        return any(s.flagged for s in self.shifts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "probe": self.probe, "run_id": self.run_id, "n_cases": self.n_cases, "skipped": dict(self.skipped),
            "note": self.note, "tolerance": self.tolerance, "upward_only": self.probe in UPWARD_ONLY,
            "flagged": self.flagged, "shifts": [s.to_dict() for s in self.shifts],
        }


def _values(results: Sequence[MetricResult]) -> dict[tuple[str, str], dict[str, float | None]]:
    """``{(metric, method): {row_id: value or None}}``."""
    out: dict[tuple[str, str], dict[str, float | None]] = {}
    for r in results:
        out.setdefault((r.metric, r.method), {})[r.sample_id] = None if r.value is None else float(r.value)
    return out


def _order(key: tuple[str, str]) -> tuple[int, str, int, str]:
    metric, method = key
    rank = {m: i for i, m in enumerate(METRIC_IDS)}
    return (0 if method == DECOMPOSED else 1, method, rank.get(metric, len(rank)), metric)


def is_flagged(mean_shift: float | None, tolerance: float, upward_only: bool) -> bool:
    """Beyond tolerance: ``shift > tol`` for upward-only probes, ``|shift| > tol`` for the others."""
    if mean_shift is None:
        return False
    return mean_shift > tolerance if upward_only else abs(mean_shift) > tolerance


def shift_stat(
    metric: str,
    method: str,
    pairs: Sequence[RowShift],
    *,
    unscored_pairs: int = 0,
    tolerance: float,
    upward_only: bool,
    iterations: int = 1000,
    seed: int = 0,
    top: int = TOP_ROWS,
) -> ShiftStat:
    """The mean shift of ``pairs`` with its seeded bootstrap 95% interval (cases resampled) and the rows
    that moved most (upwards for upward-only probes, in size otherwise; rows moved by less than ``MOVED``
    are never listed). ``max_shift`` is the shift of the row that moved most, with its sign (probe − original,
    the B − A of Compare and ``trust --against``)."""
    shifts = [p.shift for p in pairs]
    mean = sum(shifts) / len(shifts) if shifts else None
    interval = (
        bootstrap_ci(lambda idx: sum(shifts[i] for i in idx) / len(idx), len(shifts), iterations=iterations, seed=seed)
        if shifts
        else None
    )
    size = (lambda p: p.shift) if upward_only else (lambda p: abs(p.shift))
    moved = sorted((p for p in pairs if size(p) >= MOVED), key=lambda p: -size(p))
    return ShiftStat(
        metric=metric, method=method, n=len(pairs), mean_shift=mean,
        low=interval[0] if interval else None, high=interval[1] if interval else None,
        max_shift=max(pairs, key=size).shift if pairs else None,  # signed: a fall of 0.78 is -0.78, never +0.78
        top=moved[:top], unscored_pairs=unscored_pairs, tolerance=tolerance, upward_only=upward_only,
        flagged=is_flagged(mean, tolerance, upward_only),
    )


def probe_result(
    probe_set: ProbeSet,
    original: Sequence[MetricResult],
    probed: Sequence[MetricResult],
    *,
    tolerance: float | None = None,
    iterations: int = 1000,
    seed: int = 0,
    top: int = TOP_ROWS,
    run_id: str | None = None,
) -> ProbeResult:
    """Compare the probe rows' results with their original rows', per metric × method present in both."""
    tol = DEFAULT_TOLERANCES[probe_set.probe] if tolerance is None else float(tolerance)
    upward = probe_set.probe in UPWARD_ONLY
    before, after = _values(original), _values(probed)
    out = ProbeResult(probe_set.probe, len(probe_set.cases), probe_set.skipped_counts(), probe_set.note, tol, run_id=run_id)
    for key in sorted(set(before) & set(after), key=_order):
        pairs: list[RowShift] = []
        unscored = 0
        for case in probe_set.cases:
            a, b = before[key].get(case.original_id), after[key].get(case.sample.id)
            if case.original_id not in before[key] or case.sample.id not in after[key]:
                continue  # this metric did not score the row at all (not in the run)
            if a is None or b is None:
                unscored += 1
            else:
                pairs.append(RowShift(case.original_id, case.sample.id, a, b))
        out.shifts.append(
            shift_stat(key[0], key[1], pairs, unscored_pairs=unscored, tolerance=tol, upward_only=upward,
                       iterations=iterations, seed=seed, top=top)
        )
    return out


def flagged_probes(results: Sequence[ProbeResult] | Mapping[str, ProbeResult]) -> list[str]:
    """Names of the probes beyond tolerance."""
    items = results.values() if isinstance(results, Mapping) else results
    return [r.probe for r in items if r.flagged]
