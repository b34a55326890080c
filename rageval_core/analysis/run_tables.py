"""The CLI's closing tables of a stored run (per category per method, agreement of the decomposed metrics and
each judge) in one streamed pass over the store, without pandas.

``compare.category_table`` and ``compare.agreement`` give the same figures from a frame of every result; for a
12,000-row run that frame, its pivot and pandas itself were most of the CLI's peak memory once the run was over
(+56 MB for the tables, about 75 MB for importing pandas, at 100,000 results). Here the results are read in
dataset order with a cursor and folded as they go: a running sum and count per (method, category, criterion),
one row's values at a time for the pairs, and per judge and shared criterion the paired values as two float
arrays (16 bytes a row, all that Spearman's ranks need). The statistics come from ``tallies.agreement_stats``,
which ``compare.agreement`` uses too.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rageval_core.run.readback import _method_labels
from rageval_core.store.readback import values_in_row_order
from rageval_core.store.runs import Store
from rageval_core.analysis.tallies import agreement_stats
from rageval_core.core.types import DECOMPOSED, SEED_METRICS

NO_CATEGORY = "(none)"
THRESHOLD = 0.5  # kappa's pass line, as ``compare.agreement``'s default

@dataclass
class CategoryTable:
    """One method's means per category (rows, first-seen order) and criterion (columns); NaN: none scored."""

    method: str
    metrics: list[str]
    rows: list[tuple[str, list[float]]]


@dataclass
class Agreement:
    """The decomposed metrics against one judge: a line per shared criterion (``tallies.agreement_stats``)."""

    judge: str
    heuristic_only: bool  # both sides from the offline heuristic (``compare.heuristic_only``)
    lines: list[dict[str, Any]]


@dataclass
class ClosingTables:
    """What ``evaluate`` prints once a run is over; empty lists when the run has no result."""

    methods: list[str] = field(default_factory=list)
    categories: list[CategoryTable] = field(default_factory=list)
    agreements: list[Agreement] = field(default_factory=list)


def _criterion_order(metrics: Iterable[str]) -> list[str]:
    """The article's criteria first, then the others in first-seen order (``compare._metric_order``)."""
    seen = list(metrics)
    return sorted(seen, key=lambda m: (SEED_METRICS.index(m) if m in SEED_METRICS else len(SEED_METRICS), seen.index(m)))


class _Fold:
    """Running aggregates of the results as they stream by, one row's values held at a time."""

    def __init__(self, categories: Mapping[str, str | None]) -> None:
        self.labels = categories
        self.methods: dict[str, None] = {}
        self.metrics: dict[str, None] = {}
        self.by_method: dict[str, dict[str, None]] = {}
        self.cats: dict[str, None] = {}
        self.sums: dict[tuple[str, str, str], list[float]] = {}
        self.offline: dict[str, bool] = {}
        self.pairs: dict[tuple[str, str], tuple[array, array]] = {}
        self._row: str | None = None
        self._values: dict[tuple[str, str], list[float]] = {}

    def add(self, sample_id: str, method: str, metric: str, value: float | None, provider: str | None) -> None:
        if sample_id != self._row:
            self.end_row()
            self._row = sample_id
        label = self.labels.get(sample_id)
        cat = NO_CATEGORY if label is None else label
        self.methods.setdefault(method)
        self.metrics.setdefault(metric)
        self.by_method.setdefault(method, {}).setdefault(metric)
        self.cats.setdefault(cat)
        self.offline[method] = self.offline.get(method, True) and provider == "offline"
        acc = self.sums.setdefault((method, cat, metric), [0.0, 0])
        mine = self._values.setdefault((method, metric), [0.0, 0])
        if value is not None and not math.isnan(value):
            acc[0] += value
            acc[1] += 1
            mine[0] += value
            mine[1] += 1

    def end_row(self) -> None:
        """The finished row's decomposed value of each criterion against each judge's (means, as a pivot takes)."""
        for (method, metric), (total, count) in self._values.items():
            if method == DECOMPOSED or not count:
                continue
            own = self._values.get((DECOMPOSED, metric))
            if own is None or not own[1]:
                continue
            xs, ys = self.pairs.setdefault((method, metric), (array("d"), array("d")))
            xs.append(own[0] / own[1])
            ys.append(total / count)
        self._values = {}

    def tables(self) -> ClosingTables:
        self.end_row()
        methods = sorted(self.methods, key=lambda m: (m != DECOMPOSED, list(self.methods).index(m)))
        out = ClosingTables(methods=methods)
        for method in methods:
            metrics = _criterion_order(self.by_method[method])
            rows = []
            for cat in self.cats:
                cells = []
                for metric in metrics:
                    total, count = self.sums.get((method, cat, metric), (0.0, 0))
                    cells.append(total / count if count else math.nan)
                rows.append((cat, cells))
            out.categories.append(CategoryTable(method, metrics, rows))
        if DECOMPOSED not in self.methods:
            return out
        for judge in (m for m in methods if m != DECOMPOSED):
            shared = set(self.by_method[DECOMPOSED]) & set(self.by_method[judge])
            lines = []
            for metric in _criterion_order(m for m in self.metrics if m in shared):
                xs, ys = self.pairs.get((judge, metric), (array("d"), array("d")))
                lines.append({"criterion": metric, **agreement_stats(xs, ys, THRESHOLD, (DECOMPOSED, judge))})
            if lines:
                out.agreements.append(Agreement(judge, self.offline[DECOMPOSED] and self.offline[judge], lines))
        return out


def closing_tables(store: Store, run_id: str, categories: Mapping[str, str | None] | None = None) -> ClosingTables:
    """The per-category tables (``categories``: row id → category label) and the agreement lines of repeat 0,
    read in one pass: memory O(methods × categories × criteria) plus two floats a row per judge and criterion."""
    fold = _Fold(categories or {})
    label = _method_labels()
    # valid rows in dataset order, each row's results in stored order (the order the frame was sorted in)
    for sample_id, method, judge, metric, value, provider in values_in_row_order(store, run_id):
        fold.add(sample_id, label(method, judge), metric, value, provider)
    return fold.tables()
