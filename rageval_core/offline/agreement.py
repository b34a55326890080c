"""Agreement of a judge's scores with human labels: AUROC, balanced accuracy, Cohen's kappa,
pairwise preference share and bootstrap confidence intervals. Pure math, no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence

import numpy as np


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve (ties count half); ``None`` when one class is absent."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    pos, neg = s[y == 1], s[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        return None
    # rank-based (Mann-Whitney U) with average ranks for ties
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    allv = np.concatenate([pos, neg])[order]
    ranks = np.empty(len(allv), dtype=float)
    i = 0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1] == allv[i]:
            j += 1
        ranks[i : j + 1] = (i + j) / 2.0 + 1.0
        i = j + 1
    rank_of = np.empty(len(allv), dtype=float)
    rank_of[order] = ranks
    u = rank_of[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2.0
    return float(u / (len(pos) * len(neg)))


def balanced_accuracy(
    predictions: Sequence[int], labels: Sequence[int]
) -> float | None:
    """Mean of the recall on each class present; ``None`` for no rows."""
    p = np.asarray(predictions, dtype=int)
    y = np.asarray(labels, dtype=int)
    recalls = [float(np.mean(p[y == c] == c)) for c in (0, 1) if np.any(y == c)]
    return float(np.mean(recalls)) if recalls else None


def cohens_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two binary raters; 1.0 when both agree fully on a single class, ``None`` for no rows."""
    x = np.asarray(a, dtype=int)
    y = np.asarray(b, dtype=int)
    if len(x) == 0:
        return None
    observed = float(np.mean(x == y))
    expected = sum(float(np.mean(x == c)) * float(np.mean(y == c)) for c in (0, 1))
    if expected >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def pairwise_agreement(
    preferred: Sequence[float], other: Sequence[float]
) -> float | None:
    """Share of pairs where the judge scores the human-preferred side higher (ties count half)."""
    if len(preferred) != len(other):
        raise ValueError("pairs must have equal length")
    if not preferred:
        return None
    wins = sum(
        1.0 if p > o else 0.5 if p == o else 0.0 for p, o in zip(preferred, other)
    )
    return wins / len(preferred)


def bootstrap_ci(
    statistic: Callable[[list[int]], float | None],
    n_items: int,
    *,
    groups: Sequence[Hashable] | None = None,
    iterations: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``statistic(indices)`` over resampled row indices.

    With ``groups``, whole groups are resampled (e.g. HaluEval pairs stay together). Resamples where
    the statistic is undefined are skipped; ``None`` if none is defined.
    """
    rng = random.Random(seed)
    if groups is None:
        buckets = [[i] for i in range(n_items)]
    else:
        by_group: dict[Hashable, list[int]] = {}
        for i, g in enumerate(groups):
            by_group.setdefault(g, []).append(i)
        buckets = list(by_group.values())
    if not buckets:
        return None
    values: list[float] = []
    for _ in range(iterations):
        idx = [
            i for _ in range(len(buckets)) for i in buckets[rng.randrange(len(buckets))]
        ]
        v = statistic(idx)
        if v is not None:
            values.append(v)
    if not values:
        return None
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)
