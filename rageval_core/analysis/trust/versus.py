"""Two judge versions against people on the same rows: each version's agreement per criterion (AUROC, balanced
accuracy, TPR / TNR, kappa, with bootstrap intervals) and the paired difference, new minus old, on the rows
both scored. Pure math, no I/O (``rageval_core.session.versus_run`` runs the versions).

Why paired: the two versions judged the same rows, so their errors are correlated; resampling rows once and
computing both versions on each resample keeps that correlation, and the interval of the difference is far
narrower than two separate intervals would suggest (and honest, unlike comparing two overlapping intervals).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rageval_core.core import stats
from rageval_core.analysis.trust.report import MethodAgreement, Stat, method_agreement
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD
from rageval_core.core.messages import say

# A statistic of (scores, labels) at a threshold; ``None`` where undefined on a resample.
Statistic = Callable[[Sequence[float], Sequence[int]], "float | None"]
SMALL_N = 10  # below this many paired rows an interval says little; the report says so


def _rate(predictions: Sequence[int], labels: Sequence[int], cls: int) -> float | None:
    """Share of rows of class ``cls`` predicted as ``cls`` (TPR for 1, TNR for 0); ``None`` without that class."""
    hits = [p == cls for p, y in zip(predictions, labels) if y == cls]
    return sum(hits) / len(hits) if hits else None


def statistics(threshold: float = DEFAULT_THRESHOLD) -> dict[str, Statistic]:
    """The statistics compared between versions, by name; scores pass at ``score >= threshold``."""
    return {
        "auroc": lambda s, y: stats.auroc(s, y),
        "balanced_accuracy": lambda s, y: stats.balanced_accuracy(stats.binarize(s, threshold), y),
        "tpr": lambda s, y: _rate(stats.binarize(s, threshold), y, 1),
        "tnr": lambda s, y: _rate(stats.binarize(s, threshold), y, 0),
        "kappa": lambda s, y: stats.cohen_kappa(stats.binarize(s, threshold), y),
    }


def resamples(n_items: int, *, groups: Sequence[Any] | None = None, iterations: int = DEFAULT_ITERATIONS,
              seed: int = 0) -> list[list[int]]:
    """The row-index resamples ``stats.bootstrap_ci`` draws for these arguments, so a paired difference is
    resampled exactly as every other interval on the page (same seed, same rows drawn)."""
    drawn: list[list[int]] = []

    def record(idx: Sequence[int]) -> float:
        drawn.append(list(idx))
        return 0.0

    stats.bootstrap_ci(record, n_items, groups=groups, iterations=iterations, seed=seed)
    return drawn


def paired_difference(
    statistic: Statistic,
    old: Sequence[float],
    new: Sequence[float],
    labels: Sequence[int],
    draws: Iterable[Sequence[int]],
    *,
    alpha: float = 0.05,
    new_statistic: Statistic | None = None,
) -> Stat:
    """``statistic(new) − statistic(old)`` on the same rows, with the percentile interval of that difference over
    ``draws`` (row-index resamples; each draw scores both versions on the same rows). Draws where either side
    is undefined are skipped; every part ``None`` when the point difference is undefined. ``new_statistic``:
    the new version's own statistic (each version at its own calibrated threshold)."""
    if not (len(old) == len(new) == len(labels)):
        raise ValueError("old, new and labels must give one value per row")
    second = new_statistic or statistic
    a, b = statistic(old, labels), second(new, labels)
    if a is None or b is None:
        return Stat(None)
    diffs: list[float] = []
    for idx in draws:
        y = [labels[i] for i in idx]
        da, db = statistic([old[i] for i in idx], y), second([new[i] for i in idx], y)
        if da is not None and db is not None:
            diffs.append(db - da)
    if not diffs:
        return Stat(b - a)
    low, high = np.quantile(diffs, [alpha / 2, 1 - alpha / 2])
    return Stat(b - a, float(low), float(high))


@dataclass
class VersionAgreement:
    """One version on one criterion against the labels of the compared rows."""

    version: str
    criterion: str
    agreement: MethodAgreement
    tpr: Stat
    tnr: Stat

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "criterion": self.criterion, "tpr": self.tpr.to_dict(),
                "tnr": self.tnr.to_dict(), **{k: v for k, v in self.agreement.to_dict().items() if k not in ("metric", "method")}}


@dataclass
class VersionDifference:
    """New minus old on one criterion, paired on the ``n`` rows both versions scored and people labelled."""

    criterion: str
    n: int
    differences: dict[str, Stat]

    def excludes_zero(self, name: str) -> bool:
        d = self.differences.get(name)
        return d is not None and d.low is not None and d.high is not None and (d.low > 0 or d.high < 0)

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "n": self.n,
                **{k: {**v.to_dict(), "excludes_zero": self.excludes_zero(k)} for k, v in self.differences.items()}}


@dataclass
class VersusReport:
    """What the Prompts page's "vs people" panel shows: old and new version, per criterion."""

    old: str
    new: str
    rows: list[str]
    threshold: float
    iterations: int
    seed: int
    agreement: list[VersionAgreement] = field(default_factory=list)
    differences: list[VersionDifference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)  # {criterion: {version: threshold}}
    calibrated: bool = False  # thresholds chosen on the compared (dev) rows, each version its own

    def find(self, version: str, criterion: str) -> VersionAgreement | None:
        return next((a for a in self.agreement if a.version == version and a.criterion == criterion), None)

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "rows": list(self.rows), "threshold": self.threshold,
                "thresholds": self.thresholds, "calibrated_on": "dev" if self.calibrated else None,
                "bootstrap": {"iterations": self.iterations, "seed": self.seed, "level": 0.95},
                "agreement": [a.to_dict() for a in self.agreement],
                "differences": [d.to_dict() for d in self.differences], "notes": list(self.notes)}


def calibrated_threshold(values: Mapping[str, float], labels: Mapping[str, int], default: float) -> tuple[float, bool]:
    """The threshold of best balanced accuracy on these (dev) rows (``stats.best_threshold``, as the Trust page
    calibrates), and True; ``(default, False)`` where the rows hold one class or none."""
    ids = [r for r in labels if r in values]
    best = stats.best_threshold([values[r] for r in ids], [int(labels[r]) for r in ids])
    return (default, False) if best is None else (float(best), True)


def _version_agreement(version: str, criterion: str, values: Mapping[str, float], labels: Mapping[str, int], rows: Sequence[str],
                       groups: Mapping[str, str] | None, threshold: float, iterations: int, seed: int,
                       source: str = "default") -> VersionAgreement:
    agreement = method_agreement(criterion, version, values, labels, all_rows=rows, groups=groups, threshold=threshold,
                                 iterations=iterations, seed=seed, threshold_source=source)
    ids = [rid for rid in labels if rid in values]
    s, y = [values[r] for r in ids], [labels[r] for r in ids]
    grp = [(groups or {}).get(r, r) for r in ids]
    def rate(fn: Statistic) -> Stat:
        ci = stats.bootstrap_ci(lambda idx: fn([s[i] for i in idx], [y[i] for i in idx]), len(ids), groups=grp,
                                iterations=iterations, seed=seed) if ids else None
        return Stat.of(fn(s, y), ci)

    named = statistics(threshold)
    return VersionAgreement(version, criterion, agreement, rate(named["tpr"]), rate(named["tnr"]))


def compare_versions(
    old: tuple[str, Mapping[str, Mapping[str, float]]],
    new: tuple[str, Mapping[str, Mapping[str, float]]],
    labels: Mapping[str, Mapping[str, int]],
    rows: Sequence[str],
    *,
    groups: Mapping[str, str] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    calibrate: bool = False,
) -> VersusReport:
    """Old and new version (``(label, {criterion: {row_id: score}})``) against ``labels`` (``{criterion: {row_id:
    0/1}}``) on ``rows``: each version's agreement, then the paired differences on the rows both scored. With
    ``calibrate`` each version × criterion passes at its own threshold chosen on ``rows`` (the dev rows: a new
    prompt moves the score scale, so 0.5 is nobody's verdict point; ``threshold`` where a class is missing)."""
    in_rows = set(rows)
    report = VersusReport(old[0], new[0], list(rows), threshold, iterations, seed, calibrated=calibrate)
    criteria = [c for c in dict.fromkeys([*old[1], *new[1]]) if any(r in in_rows for r in labels.get(c, {}))]
    for criterion in criteria:
        crit_labels = {r: int(v) for r, v in labels[criterion].items() if r in in_rows}
        cuts: dict[str, float] = {}
        for label, scores in (old, new):
            values = scores.get(criterion, {})
            cut, chosen = calibrated_threshold(values, crit_labels, threshold) if calibrate else (threshold, False)
            cuts[label] = cut
            report.agreement.append(_version_agreement(label, criterion, values, crit_labels, rows, groups, cut,
                                                       iterations, seed, "calibrated on dev" if chosen else "default"))
        report.thresholds[criterion] = cuts
        a, b = old[1].get(criterion, {}), new[1].get(criterion, {})
        paired = [r for r in rows if r in crit_labels and r in a and r in b]
        y = [crit_labels[r] for r in paired]
        draws = resamples(len(paired), groups=[(groups or {}).get(r, r) for r in paired], iterations=iterations, seed=seed)
        at_old, at_new = statistics(cuts[old[0]]), statistics(cuts[new[0]])
        diffs = {name: paired_difference(fn, [a[r] for r in paired], [b[r] for r in paired], y, draws,
                                         new_statistic=at_new[name])
                 for name, fn in at_old.items()}
        report.differences.append(VersionDifference(criterion, len(paired), diffs))
        if len(paired) < SMALL_N:
            report.notes.append(say("versus.small_n", criterion=criterion, n=len(paired), small=SMALL_N))
        if len(set(y)) < 2 and paired:
            report.notes.append(say("versus.one_class", criterion=criterion, n=len(paired)))
        flat = [name for name, d in diffs.items() if d.value not in (None, 0.0) and d.low is not None and d.low == d.high]
        if flat:
            report.notes.append(say("versus.zero_width", criterion=criterion, n=len(paired), stats=", ".join(flat)))
    return report
