"""The trust report of one run: for every metric × method, how far its scores agree with human labels,
the corrected estimate of the share that passes, and which rows to label next.

Built from in-memory results and merged labels (no I/O here; ``rageval_core.analysis.trust.run_report`` reads a run
and its labels from the store). Every dataclass has ``to_dict()`` for the export JSON and the page.
Any method appears (``decomposed``, each ``judge:*``, a future jury): nothing here names one.
Extra sections (repeat stability, probes) are added by their own modules under ``sections``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust import stats
from rageval_core.analysis.trust.estimate import CorrectedEstimate, corrected_estimate
from rageval_core.analysis.trust.labels import ALL_CRITERIA, HumanLabels, LabelConflict
from rageval_core.analysis.trust.ranking import LabelCandidate, label_next
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, MetricResult
from rageval_core.core.method_labels import result_method
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD


@dataclass(frozen=True)
class Stat:
    """A statistic with its bootstrap 95% interval; any part ``None`` when undefined on these rows."""

    value: float | None
    low: float | None = None
    high: float | None = None

    @classmethod
    def of(cls, value: float | None, interval: tuple[float, float] | None) -> "Stat":
        return cls(value, *(interval if interval is not None and value is not None else (None, None)))

    def to_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass
class MethodAgreement:
    """One metric by one method against the human labels of that criterion (rows scored and labelled)."""

    metric: str
    method: str
    n_labelled: int  # labelled rows this method scored
    n_positive: int  # of which people passed
    unscored_labelled: int  # labelled rows the method left unscored
    threshold: float
    auroc: Stat
    balanced_accuracy: Stat
    kappa: Stat
    best_threshold: Stat
    confusion: stats.Confusion
    pairwise: Stat | None = None  # share of preference pairs ordered as people did
    n_pairs: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "method": self.method,
            "n_labelled": self.n_labelled,
            "n_positive": self.n_positive,
            "unscored_labelled": self.unscored_labelled,
            "threshold": self.threshold,
            "auroc": self.auroc.to_dict(),
            "balanced_accuracy": self.balanced_accuracy.to_dict(),
            "kappa": self.kappa.to_dict(),
            "best_threshold": self.best_threshold.to_dict(),
            "confusion": self.confusion.to_dict(),
            "pairwise": None if self.pairwise is None else self.pairwise.to_dict(),
            "n_pairs": self.n_pairs,
        }


@dataclass
class CriterionEstimate:
    """The corrected (prediction-powered) share of passing rows for one criterion as scored by one method."""

    metric: str
    method: str
    estimate: CorrectedEstimate

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "method": self.method, **self.estimate.to_dict()}


@dataclass
class Coverage:
    """How many rows carry a label of this criterion, per source, and how many of them pass."""

    criterion: str
    labelled: int
    rows: int
    positive: int
    sources: dict[str, int]
    conflicts: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class TrustReport:
    """Everything the Trust page and ``trust`` CLI show for one run."""

    run_id: str | None
    n_rows: int
    threshold: float
    iterations: int
    seed: int
    coverage: list[Coverage]
    agreement: list[MethodAgreement]
    estimates: list[CriterionEstimate]
    label_next: list[LabelCandidate]
    conflicts: list[LabelConflict]
    sections: dict[str, Any] = field(default_factory=dict)
    split: Any = None  # a split_report.SplitReport when the labels are split into train / dev / test
    comparison: Any = None  # a compare_run.RunsComparison against another run (trust --against)
    annotators: Any = None  # an annotator_report.AnnotatorsBlock when two or more people labelled a criterion

    def find(self, metric: str, method: str) -> MethodAgreement | None:
        return next((a for a in self.agreement if a.metric == metric and a.method == method), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "n_rows": self.n_rows,
            "threshold": self.threshold,
            "bootstrap": {"iterations": self.iterations, "seed": self.seed, "level": 0.95},
            "coverage": [c.to_dict() for c in self.coverage],
            "agreement": [a.to_dict() for a in self.agreement],
            "estimates": [e.to_dict() for e in self.estimates],
            "label_next": [c.to_dict() for c in self.label_next],
            "conflicts": [c.to_dict() for c in self.conflicts],
            "sections": {k: (v.to_dict() if hasattr(v, "to_dict") else v) for k, v in self.sections.items()},
            "split": None if self.split is None else self.split.to_dict(),
            **({} if self.comparison is None else {"comparison": self.comparison.to_dict()}),
            "annotators": None if self.annotators is None else self.annotators.to_dict(),
        }


def scores_by(results: Sequence[MetricResult]) -> dict[str, dict[str, dict[str, float]]]:
    """``{metric: {method: {row_id: value}}}`` over scored results (the last one wins on duplicates),
    metrics in the standard id order, decomposed first."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    rank = {m: i for i, m in enumerate(METRIC_IDS)}
    for r in results:
        by_method = out.setdefault(r.metric, {}).setdefault(result_method(r), {})
        if r.value is not None:
            by_method[r.sample_id] = float(r.value)
        else:
            by_method.pop(r.sample_id, None)
    ordered = dict(sorted(out.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    return {m: dict(sorted(v.items(), key=lambda kv: kv[0] != DECOMPOSED)) for m, v in ordered.items()}


def _sources(labels: HumanLabels, criterion: str, rows: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for (rid, crit), lab in labels.labels.items():
        if crit == criterion and rid in rows:
            out[lab.source] = out.get(lab.source, 0) + 1
    return out


def method_agreement(
    metric: str,
    method: str,
    values: Mapping[str, float],
    labels: Mapping[str, int],
    *,
    all_rows: Sequence[str] = (),
    groups: Mapping[str, str] | None = None,
    pairs: Sequence[tuple[str, str]] = (),
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> MethodAgreement:
    """Agreement of one method's scores with the labels: point values and bootstrap intervals (groups
    drawn whole), the confusion matrix at ``threshold`` and the threshold that maximises balanced accuracy."""
    ids = [rid for rid in labels if rid in values]
    s = [values[rid] for rid in ids]
    y = [int(labels[rid]) for rid in ids]
    pred = stats.binarize(s, threshold)
    grp = [(groups or {}).get(rid, rid) for rid in ids]

    def boot(fn: Any) -> tuple[float, float] | None:
        return stats.bootstrap_ci(fn, len(ids), groups=grp, iterations=iterations, seed=seed) if ids else None

    pick = lambda xs, idx: [xs[i] for i in idx]  # noqa: E731
    auc = stats.auroc(s, y)
    bacc = stats.balanced_accuracy(pred, y)
    kappa = stats.cohen_kappa(pred, y)
    best = stats.best_threshold(s, y)
    pairwise = None
    scored_pairs = [(a, b) for a, b in pairs if a in values and b in values]
    if scored_pairs:
        good = [values[a] for a, _ in scored_pairs]
        bad = [values[b] for _, b in scored_pairs]
        share = stats.pairwise_agreement(good, bad)
        ci = stats.bootstrap_ci(
            lambda idx: stats.pairwise_agreement(pick(good, idx), pick(bad, idx)), len(scored_pairs), iterations=iterations, seed=seed
        )
        pairwise = Stat.of(share, ci)
    unscored = sum(1 for rid in labels if rid not in values and (not all_rows or rid in all_rows))
    return MethodAgreement(
        metric=metric,
        method=method,
        n_labelled=len(ids),
        n_positive=sum(y),
        unscored_labelled=unscored,
        threshold=threshold,
        auroc=Stat.of(auc, boot(lambda idx: stats.auroc(pick(s, idx), pick(y, idx)))),
        balanced_accuracy=Stat.of(bacc, boot(lambda idx: stats.balanced_accuracy(pick(pred, idx), pick(y, idx)))),
        kappa=Stat.of(kappa, boot(lambda idx: stats.cohen_kappa(pick(pred, idx), pick(y, idx)))),
        best_threshold=Stat.of(best, boot(lambda idx: stats.best_threshold(pick(s, idx), pick(y, idx)))),
        confusion=stats.confusion(ids, s, y, threshold),
        pairwise=pairwise,
        n_pairs=len(scored_pairs),
    )


def labels_in(labels: HumanLabels, rows: set[str]) -> dict[str, dict[str, int]]:
    """``{criterion: {row_id: 0/1}}`` restricted to ``rows``."""
    return {c: {rid: v for rid, v in labels.for_criterion(c).items() if rid in rows} for c in labels.criteria()}


def agreements(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    labels: HumanLabels,
    rows: Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> list[MethodAgreement]:
    """Agreement of every metric × method with the labels of ``rows`` (a run's rows, or one split's):
    the rows' labels and the preference pairs inside them."""
    in_rows = set(rows)
    label_map = labels_in(labels, in_rows)
    out: list[MethodAgreement] = []
    for metric, by_method in scores.items():
        crit_labels = label_map.get(metric, {})
        pairs = [
            (p.preferred, p.other)
            for p in labels.pairs
            if p.criterion in (metric, ALL_CRITERIA) and p.preferred in in_rows and p.other in in_rows
        ]
        for method, values in by_method.items():
            if not crit_labels and not pairs:
                continue
            out.append(
                method_agreement(
                    metric, method, {r: v for r, v in values.items() if r in in_rows}, crit_labels, all_rows=rows,
                    groups=labels.groups, pairs=pairs, threshold=threshold, iterations=iterations, seed=seed,
                )
            )
    return out


def build_report(
    results: Sequence[MetricResult],
    labels: HumanLabels,
    *,
    row_ids: Sequence[str] | None = None,
    run_id: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    repeats: Mapping[str, Mapping[str, Mapping[str, Sequence[float]]]] | None = None,
    top: int = 20,
) -> TrustReport:
    """The trust report of a run's results against merged human labels.

    ``row_ids``: the run's valid rows (default: every row with a result). Labels of rows outside the run
    are ignored. ``repeats`` (``{metric: {method: {row_id: [values]}}}``) feeds the label-next spread.
    """
    rows = list(row_ids) if row_ids is not None else list(dict.fromkeys(r.sample_id for r in results))
    in_run = set(rows)
    scores = scores_by(results)
    label_map = labels_in(labels, in_run)
    agreement = agreements(scores, labels, rows, threshold=threshold, iterations=iterations, seed=seed)
    estimates = [
        CriterionEstimate(metric, method, corrected_estimate(values, label_map[metric]))
        for metric, by_method in scores.items()
        if label_map.get(metric)
        for method, values in by_method.items()
        if values
    ]
    coverage = [
        Coverage(
            criterion=c,
            labelled=len(label_map[c]),
            rows=len(rows),
            positive=sum(label_map[c].values()),
            sources=_sources(labels, c, in_run),
            conflicts=sum(1 for k in labels.conflicts if k.criterion == c and k.row_id in in_run),
        )
        for c in labels.criteria()
        if label_map.get(c)
    ]
    labelled = {rid: crits for rid, crits in labels.by_row().items() if rid in in_run}
    ranked = label_next(scores, labelled, threshold=threshold, repeats=repeats, top=top)
    return TrustReport(
        run_id=run_id,
        n_rows=len(rows),
        threshold=threshold,
        iterations=iterations,
        seed=seed,
        coverage=coverage,
        agreement=agreement,
        estimates=estimates,
        label_next=ranked,
        conflicts=[c for c in labels.conflicts if c.row_id in in_run],
        sections={},
    )
