"""The trust report of one run: for every metric × method, how far its scores agree with human labels,
the corrected estimate of the share that passes, and which rows to label next.

Built from in-memory results and merged labels (no I/O here; ``rageval_core.analysis.trust.run_report`` reads a run
and its labels from the store). Every dataclass has ``to_dict()`` for the export JSON and the page.
Any method appears (``decomposed``, each ``judge:*``, a future jury): nothing here names one.
Extra sections (repeat stability, probes) are added by their own modules under ``sections``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust import small_n
from rageval_core.core import stats
from rageval_core.core.stats import Interval
from rageval_core.analysis.trust.estimate import CorrectedEstimate, corrected_estimate
from rageval_core.analysis.trust.labels import ALL_CRITERIA, HumanLabels, LabelConflict
from rageval_core.analysis.trust.ranking import LabelCandidate, label_next
from rageval_core.analysis.trust.rogan_gladen import RoganGladen, rogan_gladen
from rageval_core.analysis.trust.shipped import RowThresholds, confusion_at, verdicts
from rageval_core.core.messages import say
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, MetricResult
from rageval_core.core.method_labels import result_method
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD


@dataclass(frozen=True)
class Stat:
    """A statistic with its bootstrap 95% interval; any part ``None`` when undefined on these rows."""

    value: float | None
    low: float | None = None
    high: float | None = None
    interval: str = small_n.BOOTSTRAP  # how the interval was made (``small_n``: newcombe, wilson_mean, ...)

    @classmethod
    def of(cls, value: float | None, interval: tuple[float, float] | None, method: str = small_n.BOOTSTRAP) -> "Stat":
        low, high = interval if interval is not None and value is not None else (None, None)
        return cls(value, low, high, method)

    def to_dict(self) -> dict[str, float | str | None]:
        return {"value": self.value, "low": self.low, "high": self.high, "interval": self.interval}


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
    notes: list[str] = field(default_factory=list)  # where a figure carries no (or little) information
    threshold_source: str = "default"  # or "calibrated on dev" (``calibration``), or ``shipped.SHIPPED``

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "method": self.method,
            "n_labelled": self.n_labelled,
            "n_positive": self.n_positive,
            "unscored_labelled": self.unscored_labelled,
            "threshold": float(self.threshold),
            "threshold_source": self.threshold_source,
            **({"threshold_detail": self.threshold.to_dict()} if isinstance(self.threshold, RowThresholds) else {}),
            "auroc": self.auroc.to_dict(),
            "balanced_accuracy": self.balanced_accuracy.to_dict(),
            "kappa": self.kappa.to_dict(),
            "best_threshold": self.best_threshold.to_dict(),
            "confusion": self.confusion.to_dict(),
            "pairwise": None if self.pairwise is None else self.pairwise.to_dict(),
            "n_pairs": self.n_pairs,
            "notes": [str(n) for n in self.notes],
        }


@dataclass
class CriterionEstimate:
    """The corrected (prediction-powered) share of passing rows for one criterion as scored by one method."""

    metric: str
    method: str
    estimate: CorrectedEstimate
    rogan_gladen: RoganGladen | None = None  # the verdict (score >= threshold) corrected by its Se / Sp
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "method": self.method, **self.estimate.to_dict(),
                "rogan_gladen": None if self.rogan_gladen is None else self.rogan_gladen.to_dict(),
                "notes": [str(n) for n in self.notes]}


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
    bias: list[Any] | None = None  # bias.BiasTest per metric × method × feature (None: no row texts to test)
    calibration: list[Any] | None = None  # calibration.Calibration per metric × method (None: no split)
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
            "bias": None if self.bias is None else [b.to_dict() for b in self.bias],
            "calibration": None if self.calibration is None else [c.to_dict() for c in self.calibration],
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
    threshold_source: str = "default",
) -> MethodAgreement:
    """Agreement of one method's scores with the labels: point values and bootstrap intervals (groups
    drawn whole), the confusion matrix at ``threshold`` and the threshold that maximises balanced accuracy."""
    ids = [rid for rid in labels if rid in values]
    s = [values[rid] for rid in ids]
    y = [int(labels[rid]) for rid in ids]
    pred = verdicts(ids, s, threshold)  # each row at its own threshold under a shipped per-language one
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
    matrix = confusion_at(ids, s, y, threshold)
    auroc_stat, bacc_stat, kappa_stat = small_sample_stats(
        matrix, auc, bacc, kappa,
        lambda: boot(lambda idx: stats.auroc(pick(s, idx), pick(y, idx))),
        lambda: boot(lambda idx: stats.balanced_accuracy(pick(pred, idx), pick(y, idx))),
        lambda: boot(lambda idx: stats.cohen_kappa(pick(pred, idx), pick(y, idx))),
        seed=seed,
    )
    return MethodAgreement(
        metric=metric,
        method=method,
        n_labelled=len(ids),
        n_positive=sum(y),
        unscored_labelled=unscored,
        threshold=threshold,
        auroc=auroc_stat,
        balanced_accuracy=bacc_stat,
        kappa=kappa_stat,
        best_threshold=Stat.of(best, boot(lambda idx: stats.best_threshold(pick(s, idx), pick(y, idx)))),
        confusion=matrix,
        pairwise=pairwise,
        n_pairs=len(scored_pairs),
        notes=agreement_notes(len(ids), sum(y)),
        threshold_source=threshold_source,
    )


def small_sample_stats(
    matrix: stats.Confusion, auc: float | None, bacc: float | None, kappa: float | None,
    auroc_boot: Callable[[], Interval | None], bacc_boot: Callable[[], Interval | None],
    kappa_boot: Callable[[], Interval | None], *, seed: int = 0,
) -> tuple[Stat, Stat, Stat]:
    """AUROC, balanced accuracy and kappa with their intervals: the bootstrap (``*_boot``, called only when
    needed: it is most of a report's time), or the small-sample interval (``small_n``) when the labelled
    rows are few or the bootstrap interval collapsed to a point."""
    c = matrix.counts
    n_pos, n_neg = c["tp"] + c["fn"], c["tn"] + c["fp"]
    small = small_n.is_small(n_pos, n_neg)

    def pick(value: float | None, boot: Callable[[], Interval | None], alternative: Callable[[], Interval | None],
             method: str) -> Stat:
        if value is None:
            return Stat(None)
        ci = None if small else boot()
        if not small and not small_n.degenerate(ci):
            return Stat.of(value, ci)
        alt = alternative()
        if alt is not None:
            return Stat.of(value, alt, method)
        return Stat.of(value, boot() if small else ci)

    return (
        pick(auc, auroc_boot, lambda: None if auc is None else small_n.newcombe_auroc(auc, n_pos, n_neg), small_n.NEWCOMBE),
        pick(bacc, bacc_boot, lambda: small_n.wilson_mean_bacc(c["tp"], c["fn"], c["tn"], c["fp"]), small_n.WILSON_MEAN),
        pick(kappa, kappa_boot, lambda: small_n.smoothed_kappa(c["tp"], c["fn"], c["tn"], c["fp"], seed=seed),
             small_n.DIRICHLET),
    )


def agreement_notes(n: int, n_positive: int) -> list[str]:
    """Plain notes where agreement carries no information (one class) or little (fewer than 10 rows)."""
    notes: list[str] = []
    if n and n_positive in (0, n):
        notes.append(say("note.one_class", verdict="pass" if n_positive else "fail"))
    if 0 < n < 10:
        notes.append(say("note.small_n", n=n))
    return notes


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
    thresholds: Mapping[tuple[str, str], float] | None = None,
) -> list[MethodAgreement]:
    """Agreement of every metric × method with the labels of ``rows`` (a run's rows, or one split's):
    the rows' labels and the preference pairs inside them. ``thresholds`` (``{(metric, method): t}``,
    calibrated on dev) replace ``threshold`` where given."""
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
            t, source = threshold_for(metric, method, threshold, thresholds)
            out.append(
                method_agreement(
                    metric, method, {r: v for r, v in values.items() if r in in_rows}, crit_labels, all_rows=rows,
                    groups=labels.groups, pairs=pairs, threshold=t, iterations=iterations, seed=seed,
                    threshold_source=source,
                )
            )
    return out


def threshold_for(
    metric: str, method: str, default: float, thresholds: Mapping[tuple[str, str], float] | None
) -> tuple[float, str]:
    """The pass threshold in use for one metric × method and where it comes from (a ``RowThresholds``, the
    offline judge's shipped per-language one, is returned as it is: each row at its own)."""
    if thresholds and (metric, method) in thresholds:
        t = thresholds[(metric, method)]
        return (t, t.source) if isinstance(t, RowThresholds) else (float(t), "calibrated on dev")
    return default, "default"


def criterion_estimate(
    metric: str,
    method: str,
    values: Mapping[str, float],
    labels: Mapping[str, int],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> CriterionEstimate:
    """The prediction-powered share, the Rogan-Gladen share of the verdict at ``threshold`` and the notes
    where they carry no information (every row labelled: both only repeat the labels)."""
    est = corrected_estimate(values, labels)
    both = [rid for rid in values if rid in labels]
    passed = verdicts(list(values), list(values.values()), threshold)
    rg = rogan_gladen(passed, verdicts(both, [values[r] for r in both], threshold), [int(labels[r]) for r in both],
                      iterations=iterations, seed=seed) if both else None
    notes: list[str] = []
    if both and len(both) == len(values):
        notes.append(say("note.every_row_labelled"))
    elif 0 < len(both) < 10:
        notes.append(say("note.small_n", n=len(both)))
    return CriterionEstimate(metric, method, est, rg, notes)


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
    thresholds: Mapping[tuple[str, str], float] | None = None,
    known: HumanLabels | None = None,
    not_next: Collection[str] = (),
) -> TrustReport:
    """The trust report of a run's results against merged human labels.

    ``row_ids``: the run's valid rows (default: every row with a result). Labels of rows outside the run
    are ignored. ``repeats`` (``{metric: {method: {row_id: [values]}}}``) feeds the label-next spread.
    Label next never proposes a row of ``not_next`` (a split's test rows, hidden or not) nor one labelled in
    ``known`` (every label, also those withheld from the figures: ``labels`` may hide a split's test labels).
    """
    rows = list(row_ids) if row_ids is not None else list(dict.fromkeys(r.sample_id for r in results))
    in_run = set(rows)
    scores = scores_by(results)
    label_map = labels_in(labels, in_run)
    agreement = agreements(scores, labels, rows, threshold=threshold, iterations=iterations, seed=seed,
                           thresholds=thresholds)
    estimates = [
        criterion_estimate(metric, method, values, label_map[metric], iterations=iterations, seed=seed,
                           threshold=threshold_for(metric, method, threshold, thresholds)[0])
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
    labelled = {rid: crits for rid, crits in (known or labels).by_row().items() if rid in in_run}
    skip = set(not_next)
    candidates = {m: {meth: {r: v for r, v in vals.items() if r not in skip} for meth, vals in by.items()}
                  for m, by in scores.items()} if skip else scores
    ranked = label_next(candidates, labelled, threshold=threshold, repeats=repeats, top=top)
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
