"""Agreement statistics between a score and human labels (or between two methods). Pure math, no I/O.

One rule for every undefined statistic: the function returns ``None`` (never NaN, never a made-up 0 or
1). Kappa is undefined when both raters are constant on the same class (chance agreement is 1, so kappa
is 0/0, as in scikit-learn); correlations are undefined with fewer than two pairs or a constant side;
AUROC is undefined when one class is absent. Pandas tables built on these show ``None`` as NaN.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

Interval = tuple[float, float]
# Values a statistic reads: a sequence, or a numpy array (the analysis passes frame columns as arrays).
Numbers = Sequence[float] | np.ndarray


def average_ranks(values: Numbers) -> np.ndarray:
    """1-based ranks; tied values share the mean of their ranks (what AUROC and Spearman need). Vectorised
    (runs of equal sorted values, each NaN a run of its own): a loop over 10,000 rows took a second."""
    v = np.asarray(values, dtype=float)
    n = len(v)
    order = np.argsort(v, kind="mergesort")
    sorted_v = v[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_v[1:] != sorted_v[:-1]))) if n else np.array([], int)
    ends = np.append(starts[1:], n) - 1
    ranks = np.empty(n, dtype=float)
    ranks[order] = np.repeat((starts + ends) / 2.0 + 1.0, ends - starts + 1)
    return ranks


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve: the chance a random positive scores above a random negative, ties
    counting half (Mann-Whitney U with average ranks). ``None`` when one class is absent."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    n_pos, n_neg = int(np.sum(y == 1)), int(np.sum(y == 0))
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(s)
    u = float(ranks[y == 1].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def binarize(values: Sequence[float], threshold: float) -> list[int]:
    """1 where ``value >= threshold`` (a pass), else 0."""
    return [1 if float(v) >= threshold else 0 for v in values]


def balanced_accuracy(predictions: Sequence[int], labels: Sequence[int]) -> float | None:
    """Mean of the recall on each class present (so a judge that passes everything scores 0.5 on a
    mixed set, not the base rate); ``None`` for no rows."""
    p = np.asarray(predictions, dtype=int)
    y = np.asarray(labels, dtype=int)
    recalls = [float(np.mean(p[y == c] == c)) for c in (0, 1) if np.any(y == c)]
    return float(np.mean(recalls)) if recalls else None


def cohen_kappa(a: Numbers, b: Numbers, threshold: float | None = None) -> float | None:
    """Cohen's kappa of two binary raters: agreement beyond chance, (po − pe) / (1 − pe).

    With ``threshold``, both sides are first binarised at ``value >= threshold``. ``None`` with no rows
    and when chance agreement is 1 (both raters constant on the same class: 0/0). One constant rater
    against a split one is defined (0: no agreement beyond chance).
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if threshold is not None:
        x, y = (x >= threshold).astype(float), (y >= threshold).astype(float)
    if len(x) == 0:
        return None
    xi, yi = x.astype(int), y.astype(int)
    po = float(np.mean(xi == yi))
    pa, pb = float(np.mean(xi == 1)), float(np.mean(yi == 1))
    pe = pa * pb + (1 - pa) * (1 - pb)
    if pe >= 1.0 - 1e-12:
        return None
    return (po - pe) / (1.0 - pe)


def pearson(x: Numbers, y: Numbers) -> float | None:
    """Pearson correlation; ``None`` with fewer than two pairs or a constant side (undefined, not 0)."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    if len(a) != len(b):
        raise ValueError("pearson needs two sequences of equal length")
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def spearman(x: Numbers, y: Numbers) -> float | None:
    """Spearman rank correlation (Pearson of average ranks); ``None`` when Pearson of the ranks is."""
    if len(x) < 2:
        return None
    return pearson(average_ranks(x), average_ranks(y))


def mean_difference(x: Numbers, y: Numbers) -> float | None:
    """Mean of ``y - x`` over the pairs: which side scores higher and by how much on average (the mean absolute
    difference hides the direction); ``None`` with no pairs."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    if len(a) != len(b):
        raise ValueError("mean_difference needs two sequences of equal length")
    return float(np.mean(b - a)) if len(a) else None


def pass_agreement(x: Numbers, y: Numbers, threshold: float) -> float | None:
    """The share of pairs both sides put on the same side of ``threshold`` (``value >= threshold`` passes):
    the raw agreement kappa corrects for chance; ``None`` with no pairs."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    if len(a) != len(b):
        raise ValueError("pass_agreement needs two sequences of equal length")
    return float(np.mean((a >= threshold) == (b >= threshold))) if len(a) else None


@dataclass
class Confusion:
    """Predicted pass/fail vs the human label, with the row ids in each cell (so a page can link them).

    ``tp``: predicted pass, human pass; ``fp``: predicted pass, human fail; ``fn``: predicted fail,
    human pass; ``tn``: predicted fail, human fail.
    """

    threshold: float
    tp: list[str] = field(default_factory=list)
    fp: list[str] = field(default_factory=list)
    fn: list[str] = field(default_factory=list)
    tn: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return {"tp": len(self.tp), "fp": len(self.fp), "fn": len(self.fn), "tn": len(self.tn)}

    def to_dict(self) -> dict[str, object]:
        return {"threshold": self.threshold, **self.counts, "rows": {k: list(getattr(self, k)) for k in ("tp", "fp", "fn", "tn")}}


def confusion(ids: Sequence[str], scores: Sequence[float], labels: Sequence[int], threshold: float) -> Confusion:
    """The confusion matrix of ``score >= threshold`` against binary labels, keeping row ids per cell."""
    out = Confusion(threshold)
    for rid, s, y in zip(ids, scores, labels, strict=True):
        passed = float(s) >= threshold
        cell = ("tp" if y else "fp") if passed else ("fn" if y else "tn")
        getattr(out, cell).append(str(rid))
    return out


def pairwise_agreement(preferred: Sequence[float], other: Sequence[float]) -> float | None:
    """WikiEval protocol (RAGAS paper): over pairs of answers to the same question, the share where the
    metric scores the human-preferred answer higher; a tie counts half. ``None`` for no pairs."""
    if len(preferred) != len(other):
        raise ValueError("pairs must have equal length")
    if not preferred:
        return None
    wins = sum(1.0 if p > o else 0.5 if p == o else 0.0 for p, o in zip(preferred, other))
    return wins / len(preferred)


def bootstrap_ci(
    statistic: Callable[[list[int]], float | None],
    n_items: int,
    *,
    groups: Sequence[Hashable] | None = None,
    iterations: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> Interval | None:
    """Percentile bootstrap interval of ``statistic(indices)`` over resampled row indices (seeded, so
    the same data and seed give the same interval).

    With ``groups``, whole groups are drawn (the rows of a pair or of one question stay together, as
    their errors are not independent): as many groups are drawn as there are groups. Resamples where the
    statistic is undefined are skipped; ``None`` if none is defined.
    """
    rng = random.Random(seed)
    if groups is None:
        buckets = [[i] for i in range(n_items)]
    else:
        if len(groups) != n_items:
            raise ValueError("groups must give one group per item")
        by_group: dict[Hashable, list[int]] = {}
        for i, g in enumerate(groups):
            by_group.setdefault(g, []).append(i)
        buckets = list(by_group.values())
    if not buckets:
        return None
    values: list[float] = []
    for _ in range(iterations):
        idx = [i for _ in range(len(buckets)) for i in buckets[rng.randrange(len(buckets))]]
        v = statistic(idx)
        if v is not None and not math.isnan(v):
            values.append(float(v))
    if not values:
        return None
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The pass threshold (``score >= t``) that maximises balanced accuracy over the observed scores.

    Candidates are the distinct scores; among equally good ones the one nearest 0.5 wins (then the
    lower), so a plateau does not pick an extreme. ``None`` when one class is absent. Vectorised (sorted
    counts), as the bootstrap calls it a thousand times.
    """
    y = np.asarray(labels, dtype=int)
    s = np.asarray(scores, dtype=float)
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    if len(pos) == 0 or len(neg) == 0:
        return None
    cand = np.unique(s)
    tpr = (len(pos) - np.searchsorted(pos, cand, side="left")) / len(pos)
    tnr = np.searchsorted(neg, cand, side="left") / len(neg)
    bacc = np.round((tpr + tnr) / 2.0, 12)
    best = np.flatnonzero(bacc == bacc.max())
    pick = min(best, key=lambda i: (abs(float(cand[i]) - 0.5), float(cand[i])))
    return float(cand[pick])
