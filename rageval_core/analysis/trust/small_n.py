"""Intervals that stay honest with few labelled rows or perfect separation. Pure math, no I/O.

The percentile bootstrap collapses to a point when every resample gives the same value: 18 held-out rows
that a score separates perfectly give AUROC 1.000 [1.000, 1.000], a certainty 18 rows cannot carry. So
when the sample is small (fewer than ``SMALL_N`` labelled rows, or fewer than ``SMALL_CLASS`` of either
class) or the bootstrap interval has zero width, the report uses instead:

- AUROC: Newcombe's (2006) score interval, his method 5: the A with (A − Â)² = z²·V(A), where
  V(A) = A(1 − A)/(m·n) · [1 + (N* − 1)·((1 − A)/(2 − A) + A/(1 + A))], N* = (m + n)/2 (Hanley–McNeil's
  variance with the variance evaluated at the candidate A, as Wilson does for a proportion). At Â = 1
  it gives a lower bound below 1 (m = n = 9: 0.780).
- Balanced accuracy: the mean of the Wilson 95% intervals of the true-positive and true-negative rates
  (each rate's own Wilson interval, bounds averaged): at 9 of 9 and 9 of 9 it is [0.701, 1].
  Conservative: averaging two 95% bounds covers the mean at 95% or more.
- Kappa: a smoothed bootstrap: the 2 × 2 table of (verdict, label) drawn from its Dirichlet posterior
  with half a count added to every cell (Jeffreys' prior), so an empty cell can still occur in a draw;
  widened to include the observed kappa, which the smoothing pulls the draws away from.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rageval_core.analysis.trust.estimate import Z95, wilson_interval

SMALL_N = 30  # fewer labelled rows than this: small-sample intervals
SMALL_CLASS = 10  # or fewer rows than this of one class
BOOTSTRAP = "bootstrap"
NEWCOMBE = "newcombe"
WILSON_MEAN = "wilson_mean"
DIRICHLET = "smoothed_bootstrap"

Interval = tuple[float, float]


def is_small(n_pos: int, n_neg: int) -> bool:
    """Whether the labelled rows are too few for the percentile bootstrap (module docstring)."""
    return n_pos + n_neg < SMALL_N or min(n_pos, n_neg) < SMALL_CLASS


def _auc_variance(a: float, m: int, n: int) -> float:
    star = (m + n) / 2.0
    return a * (1 - a) / (m * n) * (1 + (star - 1) * ((1 - a) / (2 - a) + a / (1 + a)))


def _bisect(f: Callable[[float], float], lo: float, hi: float, iterations: int = 80) -> float:
    """A root of ``f`` in [lo, hi], where f(lo) and f(hi) differ in sign (or one is 0)."""
    f_lo = f(lo)
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        f_mid = f(mid)
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def newcombe_auroc(auc: float, n_pos: int, n_neg: int, z: float = Z95) -> Interval | None:
    """Newcombe's score interval for AUROC (module docstring); ``None`` when a class is empty."""
    if n_pos == 0 or n_neg == 0:
        return None
    g = lambda a: (auc - a) ** 2 - z * z * _auc_variance(a, n_pos, n_neg)  # noqa: E731
    low = 0.0 if auc <= 0.0 else _bisect(g, 0.0, auc)
    high = 1.0 if auc >= 1.0 else _bisect(g, 1.0, auc)
    return float(low), float(high)


def wilson_mean_bacc(tp: int, fn: int, tn: int, fp: int) -> Interval | None:
    """Balanced accuracy's interval as the mean of the Wilson intervals of TPR and TNR. With one class
    only, balanced accuracy is that class's rate (``stats.balanced_accuracy``) and this is its Wilson
    interval; ``None`` with no rows."""
    rates = [wilson_interval([1.0] * hit + [0.0] * miss) for hit, miss in ((tp, fn), (tn, fp)) if hit + miss]
    if not rates:
        return None
    return float(np.mean([r.low for r in rates])), float(np.mean([r.high for r in rates]))


def kappa_of_cells(tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (verdict, label) tables given as cell shares (arrays: one table per element);
    NaN where chance agreement is 1."""
    po = tp + tn
    pe = (tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1 - 1e-12, (po - pe) / (1 - pe), np.nan)


def smoothed_kappa(tp: int, fn: int, tn: int, fp: int, *, draws: int = 2000, seed: int = 0) -> Interval | None:
    """Kappa's 95% interval from Dirichlet(cells + ½) draws of the table (seeded); ``None`` with no rows."""
    if tp + fn + tn + fp == 0:
        return None
    rng = np.random.default_rng(seed)
    cells = rng.dirichlet(np.array([tp, fn, fp, tn], dtype=float) + 0.5, size=draws)
    k = kappa_of_cells(cells[:, 0], cells[:, 1], cells[:, 2], cells[:, 3])
    k = k[~np.isnan(k)]
    if len(k) == 0:
        return None
    lo, hi = np.quantile(k, [0.025, 0.975])
    total = float(tp + fn + fp + tn)
    point = kappa_of_cells(*(np.array([x / total]) for x in (tp, fn, fp, tn)))[0]
    if not np.isnan(point):  # the smoothing pulls the draws inward; the interval keeps the observed kappa
        lo, hi = min(lo, point), max(hi, point)
    return float(lo), float(hi)


def degenerate(interval: Interval | None) -> bool:
    """A zero-width interval (the bootstrap's collapse) or none at all."""
    return interval is None or math.isclose(interval[0], interval[1], abs_tol=1e-12)


__all__ = [
    "BOOTSTRAP",
    "DIRICHLET",
    "NEWCOMBE",
    "SMALL_CLASS",
    "SMALL_N",
    "WILSON_MEAN",
    "degenerate",
    "is_small",
    "kappa_of_cells",
    "newcombe_auroc",
    "smoothed_kappa",
    "wilson_mean_bacc",
]
