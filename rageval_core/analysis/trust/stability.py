"""Repeat-run stability: how much a score moves when the same rows are scored again. Pure math, no I/O.

Input: the results of each repeat of one run (``{repeat: results}``, as ``Store.results_by_repeat``
returns them). Per row × metric × method:

- ``sd``: the population standard deviation of the scored repeats (0 with one), ``range``: max − min;
- ``flip_rate``: the share of scored repeats whose verdict (``value >= threshold``) differs from the row's
  majority verdict (0 when all agree, 0.5 at most: 1 of 3 → 1/3, 2 of 4 → 1/2);
- ``value``: the repeats aggregated by ``mean``, ``median``, ``majority`` or ``majority_or_median``
  (``rageval_core.scoring.metrics.scoring.aggregate_repeats``); a majority that no value reaches leaves the row
  unscored ``no_majority``.

Per metric × method: the mean of the aggregated values over rows, with the seeded bootstrap 95% interval
of that mean across repeats (whole repeats resampled: how far another set of K repeats could move the
mean), each repeat's own mean, the mean sd, and how many rows flip at least once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rageval_core.scoring.metrics.scoring import aggregate_repeats
from rageval_core.core.stats import bootstrap_ci
from rageval_core.analysis.trust_defaults import DEFAULT_THRESHOLD
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, MetricResult, Unscored


def spread(values: Sequence[float]) -> tuple[float, float]:
    """(population sd, max − min) of the scored repeats of one row."""
    v = np.asarray(values, dtype=float)
    rng = float(v.max() - v.min())
    return (0.0, 0.0) if rng <= 1e-12 else (float(v.std()), rng)  # equal values: exactly 0, not float noise


def flip_rate(values: Sequence[float], threshold: float) -> float:
    """Share of repeats whose verdict at ``threshold`` differs from the majority verdict."""
    passed = sum(1 for v in values if v >= threshold)
    return min(passed, len(values) - passed) / len(values)


@dataclass(frozen=True)
class RowStability:
    """One row × metric × method over the repeats."""

    row_id: str
    metric: str
    method: str
    values: tuple[float | None, ...]  # per repeat, None where that repeat left it unscored
    sd: float | None
    range: float | None
    flip_rate: float | None
    value: float | None  # the aggregate
    unscored_reason: str | None = None

    @property
    def scored(self) -> list[float]:
        return [v for v in self.values if v is not None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "row_id": self.row_id, "metric": self.metric, "method": self.method, "values": list(self.values),
            "sd": self.sd, "range": self.range, "flip_rate": self.flip_rate, "value": self.value,
            "unscored_reason": self.unscored_reason,
        }


@dataclass
class MetricStability:
    """One metric × method over all rows and repeats."""

    metric: str
    method: str
    n_rows: int  # rows with an aggregated value
    unscored_rows: dict[str, int]  # rows without one, by reason
    mean: float | None
    low: float | None
    high: float | None
    repeat_means: list[float | None]  # each repeat's mean over its scored rows
    mean_sd: float | None
    max_range: float | None
    flip_rate: float | None  # mean of the rows' flip rates
    rows_flipping: int  # rows whose verdict is not the same in every repeat

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class StabilityReport:
    """Every row and metric over the repeats of one run."""

    repeats: int
    aggregate: str
    threshold: float
    metrics: list[MetricStability] = field(default_factory=list)
    rows: list[RowStability] = field(default_factory=list)
    note: str = ""  # what repeats mean on this provider (offline: 0 spread by construction)
    deterministic: bool = False

    def find(self, metric: str, method: str) -> MetricStability | None:
        return next((m for m in self.metrics if m.metric == metric and m.method == method), None)

    def repeat_values(self) -> dict[str, dict[str, dict[str, list[float]]]]:
        """``{metric: {method: {row_id: [scored values]}}}``, the shape ``trust.ranking.label_next`` reads."""
        out: dict[str, dict[str, dict[str, list[float]]]] = {}
        for r in self.rows:
            if r.scored:
                out.setdefault(r.metric, {}).setdefault(r.method, {})[r.row_id] = r.scored
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats, "aggregate": self.aggregate, "threshold": self.threshold,
            "note": self.note, "deterministic": self.deterministic,
            "metrics": [m.to_dict() for m in self.metrics], "rows": [r.to_dict() for r in self.rows],
        }


def _order(key: tuple[str, str]) -> tuple[int, str, int, str]:
    metric, method = key
    rank = {m: i for i, m in enumerate(METRIC_IDS)}
    return (0 if method == DECOMPOSED else 1, method, rank.get(metric, len(rank)), metric)


def row_stability(
    row_id: str, metric: str, method: str, values: Sequence[float | None], *, threshold: float, aggregate: str,
    unscored_reason: str | None = None,
) -> RowStability:
    """One row over its repeats (``None`` values: unscored repeats, left out of every figure)."""
    scored = [float(v) for v in values if v is not None]
    if not scored:
        return RowStability(row_id, metric, method, tuple(values), None, None, None, None,
                            unscored_reason or Unscored.PARSE_ERROR)
    sd, rng = spread(scored)
    value = aggregate_repeats(scored, aggregate)
    return RowStability(
        row_id, metric, method, tuple(values), sd, rng, flip_rate(scored, threshold), value,
        None if value is not None else Unscored.NO_MAJORITY,
    )


def _mean_over_rows(matrix: np.ndarray, columns: Sequence[int], aggregate: str) -> float | None:
    """Mean over rows of each row's aggregate over the given repeat columns (NaN = unscored; rows with none
    scored, or no majority, are skipped). Vectorised for mean and median: the bootstrap calls it often."""
    sub = matrix[:, list(columns)]
    if aggregate in ("mean", "median"):
        scored = ~np.all(np.isnan(sub), axis=1)
        if not scored.any():
            return None
        rows = sub[scored]
        per_row = np.nanmean(rows, axis=1) if aggregate == "mean" else np.nanmedian(rows, axis=1)
        return float(per_row.mean())
    vals = []
    for row in sub:
        got = [float(v) for v in row if not np.isnan(v)]
        v = aggregate_repeats(got, aggregate) if got else None
        if v is not None:
            vals.append(v)
    return sum(vals) / len(vals) if vals else None


def stability(
    results_by_repeat: Mapping[int, Sequence[MetricResult]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    aggregate: str = "mean",
    iterations: int = 1000,
    seed: int = 0,
    note: str = "",
    deterministic: bool = False,
    row_order: Sequence[str] | None = None,
) -> StabilityReport:
    """The stability report of one run's repeats (see the module docstring for every figure); rows in
    ``row_order`` (the dataset's) when given, else in the order they first appear."""
    aggregate_repeats([0.0], aggregate)  # validates the name before any work
    repeat_ids = sorted(results_by_repeat)
    k = len(repeat_ids)
    cells: dict[tuple[str, str], dict[str, list[float | None]]] = {}
    reasons: dict[tuple[str, str, str], str] = {}
    for col, rep in enumerate(repeat_ids):
        for r in results_by_repeat[rep]:
            row = cells.setdefault((r.metric, r.method), {}).setdefault(r.sample_id, [None] * k)
            row[col] = None if r.value is None else float(r.value)
            if r.value is None and r.unscored_reason:
                reasons.setdefault((r.metric, r.method, r.sample_id), r.unscored_reason)
    position = {rid: i for i, rid in enumerate(row_order or [])}
    report = StabilityReport(k, aggregate, threshold, note=note, deterministic=deterministic)
    for key in sorted(cells, key=_order):
        metric, method = key
        rows = [
            row_stability(rid, metric, method, vals, threshold=threshold, aggregate=aggregate,
                          unscored_reason=reasons.get((metric, method, rid)))
            for rid, vals in sorted(cells[key].items(), key=lambda kv: position.get(kv[0], len(position)))
        ]
        report.rows.extend(rows)
        matrix = np.array([[np.nan if v is None else v for v in r.values] for r in rows], dtype=float).reshape(len(rows), k)
        scored_rows = [r for r in rows if r.value is not None]
        unscored: dict[str, int] = {}
        for one in rows:
            if one.value is None:
                unscored[one.unscored_reason or Unscored.PARSE_ERROR] = unscored.get(one.unscored_reason or Unscored.PARSE_ERROR, 0) + 1
        mean = _mean_over_rows(matrix, range(k), aggregate)
        def mean_of(idx: Sequence[int], m: np.ndarray = matrix) -> float | None:
            return _mean_over_rows(m, idx, aggregate)

        interval = bootstrap_ci(mean_of, k, iterations=iterations, seed=seed) if k else None
        repeat_means: list[float | None] = []
        for col in range(k):
            vals = matrix[:, col][~np.isnan(matrix[:, col])]
            repeat_means.append(float(vals.mean()) if len(vals) else None)
        with_spread = [r for r in rows if r.sd is not None]
        report.metrics.append(
            MetricStability(
                metric=metric, method=method, n_rows=len(scored_rows), unscored_rows=unscored,
                mean=mean, low=interval[0] if interval and mean is not None else None,
                high=interval[1] if interval and mean is not None else None,
                repeat_means=repeat_means,
                mean_sd=float(np.mean([r.sd for r in with_spread])) if with_spread else None,
                max_range=max((r.range for r in with_spread if r.range is not None), default=None),
                flip_rate=float(np.mean([r.flip_rate for r in with_spread])) if with_spread else None,
                rows_flipping=sum(1 for r in with_spread if (r.flip_rate or 0) > 0),
            )
        )
    return report
