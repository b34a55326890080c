"""The corrected estimate of a share users report (prediction-powered inference). Pure math, no I/O.

A judge scored all N rows; people labelled n of them (a uniformly random subset, or the estimate is
biased). The judge mean alone is biased by the judge's error; the labels alone are unbiased but wide.
The prediction-powered estimate (Angelopoulos et al., 2023) keeps the judge's N rows and removes its
bias with the labelled rows:

    θ̂ = mean_N(f) − mean_n(f − y)

It is unbiased for the share of passing answers, E[y], whatever the judge. With the labelled rows part
of the N judged rows, its variance is

    Var(θ̂) = σ²_f / N + σ²_Δ / n − 2 Cov(f, Δ) / N,   Δ = f − y

(it tends to the labels-only σ²_y / n when every row is labelled). The 95% interval is θ̂ ± 1.96·√Var.
The labels-only share beside it uses the Wilson interval (it stays honest when every label agrees).
"As tight as k labels alone": labels alone give variance σ²_y / k, so k = σ²_y / Var(θ̂), which is
n · (labels-only variance / PPI variance). A judge no better than noise gives k < n: then trust the
labels-only interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from rageval_core.core.stats import Numbers

Z95 = 1.959963984540054


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its 95% normal-approximation interval over ``n`` values (interval clipped to [0, 1])."""

    value: float | None
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


@dataclass(frozen=True)
class CorrectedEstimate:
    """The prediction-powered estimate beside the judge-only and labels-only means.

    ``effective_labels`` is k in "as tight as k labels alone" (``None`` when undefined: every label equal,
    so the labels' own variance estimate is 0).
    """

    corrected: MeanEstimate
    judge_only: MeanEstimate
    labels_only: MeanEstimate
    n_labelled: int
    n_judged: int
    judge_bias: float | None  # mean (judge − human) on the labelled rows
    effective_labels: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "corrected": self.corrected.to_dict(),
            "judge_only": self.judge_only.to_dict(),
            "labels_only": self.labels_only.to_dict(),
            "n_labelled": self.n_labelled,
            "n_judged": self.n_judged,
            "judge_bias": self.judge_bias,
            "effective_labels": self.effective_labels,
        }


def _interval(value: float, variance: float, n: int) -> MeanEstimate:
    half = Z95 * math.sqrt(max(variance, 0.0))
    return MeanEstimate(value, max(0.0, value - half), min(1.0, value + half), n)


def mean_interval(values: Sequence[float]) -> MeanEstimate:
    """Mean of ``values`` with a normal 95% interval (sample variance, ddof 1); empty → all ``None``."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return MeanEstimate(None, None, None, 0)
    var = float(np.var(v, ddof=1)) / len(v) if len(v) > 1 else 0.0
    return _interval(float(np.mean(v)), var, len(v))


def wilson_interval(values: Sequence[float]) -> MeanEstimate:
    """Share of 1s among 0/1 labels with the Wilson score 95% interval: unlike the normal one it does not
    collapse to a point when every label agrees (16 of 16 passing gives [0.806, 1])."""
    v = np.asarray(values, dtype=float)
    n = len(v)
    if n == 0:
        return MeanEstimate(None, None, None, 0)
    p = float(np.mean(v))
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return MeanEstimate(p, max(0.0, centre - half), min(1.0, centre + half), n)


def ppi_variance(judged: Numbers, labelled_judge: Numbers, labels: Numbers) -> float:
    """Variance of the prediction-powered mean (module docstring) from the N judged and n labelled rows."""
    f_all = np.asarray(judged, dtype=float)
    f = np.asarray(labelled_judge, dtype=float)
    y = np.asarray(labels, dtype=float)
    n, big_n = len(y), len(f_all)
    delta = f - y
    var_f = float(np.var(f_all, ddof=1)) if big_n > 1 else 0.0
    var_d = float(np.var(delta, ddof=1)) if n > 1 else 0.0
    cov = float(np.cov(f, delta, ddof=1)[0, 1]) if n > 1 else 0.0
    return var_f / big_n + var_d / n - 2.0 * cov / big_n


def ppi_mean(judged: Sequence[float], labelled_judge: Sequence[float], labels: Sequence[float]) -> MeanEstimate:
    """The prediction-powered mean with its 95% interval, from arrays: the judge on all N rows, the
    judge on the n labelled rows and their labels (same order)."""
    n = len(labels)
    if n == 0 or len(judged) == 0:
        return MeanEstimate(None, None, None, n)
    value = float(np.mean(judged)) - float(np.mean(np.asarray(labelled_judge, float) - np.asarray(labels, float)))
    return _interval(value, ppi_variance(judged, labelled_judge, labels), n)


def corrected_estimate(judged: Mapping[str, float], labels: Mapping[str, float]) -> CorrectedEstimate:
    """PPI estimate of the share of passing rows from judge scores per row id and human labels (0/1)
    per row id. Labelled rows the judge did not score count for labels-only but not for the correction.
    """
    ids = list(judged)
    f_all = [float(judged[i]) for i in ids]
    both = [i for i in ids if i in labels]
    f_lab = [float(judged[i]) for i in both]
    y_lab = [float(labels[i]) for i in both]
    judge_only = mean_interval(f_all)
    label_values = [float(v) for v in labels.values()]
    binary = all(v in (0.0, 1.0) for v in label_values)
    labels_only = wilson_interval(label_values) if binary else mean_interval(label_values)
    corrected = ppi_mean(f_all, f_lab, y_lab)
    n, big_n = len(both), len(f_all)
    if corrected.value is None:
        return CorrectedEstimate(corrected, judge_only, labels_only, n, big_n, None, None)
    bias = float(np.mean(np.asarray(f_lab) - np.asarray(y_lab)))
    var = ppi_variance(f_all, f_lab, y_lab)
    var_y = float(np.var(y_lab, ddof=1)) if n > 1 else 0.0
    k = var_y / var if var > 0 and var_y > 0 else None
    return CorrectedEstimate(corrected, judge_only, labels_only, n, big_n, bias, k)
