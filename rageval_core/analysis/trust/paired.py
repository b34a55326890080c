"""Did run B do better than run A on the same rows? The judge's difference, the labels' difference and the
prediction-powered difference, paired by row. Pure math, no I/O.

One sign convention across the workbench: every difference is run B − run A (positive: B scores higher), as
Compare's per-row delta. On the N rows both runs scored, d_f = f_B − f_A (the judge's per-row difference); on the n
of them people labelled in both runs, d_y = y_B − y_A. The judge-only difference mean_N(d_f) inherits every judge bias
that differs between the runs (a judge that prefers long answers favours the longer-answering version).
The labels-only difference mean_n(d_y) is unbiased but wide. The corrected difference applies
prediction-powered inference (Angelopoulos et al., 2023) to the paired differences:

    θ̂ = mean_N(d_f) − mean_n(d_f − d_y),   Var = σ²(d_f)/N + σ²(d_f − d_y)/n − 2 Cov(d_f, d_f − d_y)/N

(the same estimator as ``estimate.ppi_mean``, on differences in [−1, 1]; no clipping to [0, 1]). It is
unbiased for the true mean difference when the labelled rows are a uniform random subset of the N. The
rectifier d_f − d_y is given Agresti–Min's pseudo-counts too (half a pair at each of r̄ ± 1, i.e. ½ in each
discordant cell): when every labelled pair agrees and the judge's differences are constant its sample variance
is 0, and the interval collapsed to [0, 0] on a few rows.

The labels-only interval for 0/1 labels is Agresti–Min's adjusted Wald for paired proportions (0.5 added
to each cell of the 2 × 2 table of (y_A, y_B)): a plain Wald interval is [0, 0] when every labelled pair
agrees, which claims certainty 8 labelled rows cannot give.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rageval_core.analysis.trust.estimate import Z95
from rageval_core.core.messages import say
from rageval_core.core.stats import Numbers


@dataclass(frozen=True)
class Difference:
    """A difference B − A with its 95% interval over ``n`` paired rows (all ``None`` when undefined)."""

    value: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def excludes_zero(self) -> bool | None:
        """Whether the interval leaves 0 out (the difference is significant at 5%); ``None`` if undefined."""
        if self.low is None or self.high is None:
            return None
        return self.low > 0.0 or self.high < 0.0

    def to_dict(self) -> dict[str, object]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n, "excludes_zero": self.excludes_zero}


NONE = Difference(None, None, None, 0)


def _normal(value: float, variance: float, n: int) -> Difference:
    half = Z95 * math.sqrt(max(variance, 0.0))
    return Difference(value, value - half, value + half, n)


def mean_difference(d: Numbers) -> Difference:
    """Mean of paired differences with a normal 95% interval (sample variance, ddof 1)."""
    v = np.asarray(d, dtype=float)
    if len(v) == 0:
        return Difference(None, None, None, 0)
    var = float(np.var(v, ddof=1)) / len(v) if len(v) > 1 else 0.0
    return _normal(float(np.mean(v)), var, len(v))


def paired_proportion_difference(y_a: Sequence[int], y_b: Sequence[int]) -> Difference:
    """Share passing in ``y_a`` minus in ``y_b`` on the same rows (0/1 labels; ``compare_paired`` passes B first,
    for B − A), with the Agresti–Min (2005) adjusted
    Wald interval: with n12 = #(A pass, B fail) and n21 = #(A fail, B pass), p12 = (n12 + ½)/(n + 2),
    p21 = (n21 + ½)/(n + 2), interval (p12 − p21) ± z·√((p12 + p21 − (p12 − p21)²)/(n + 2)) clipped to
    [−1, 1]. The value itself is the plain (n12 − n21)/n."""
    a, b = np.asarray(y_a, dtype=int), np.asarray(y_b, dtype=int)
    n = len(a)
    if n == 0:
        return Difference(None, None, None, 0)
    n12, n21 = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
    p12, p21 = (n12 + 0.5) / (n + 2), (n21 + 0.5) / (n + 2)
    centre = p12 - p21
    half = Z95 * math.sqrt(max(p12 + p21 - centre * centre, 0.0) / (n + 2))
    return Difference((n12 - n21) / n, max(-1.0, centre - half), min(1.0, centre + half), n)


def corrected_difference(d_f_all: Numbers, d_f_labelled: Numbers, d_y: Numbers) -> Difference:
    """The prediction-powered mean difference (module docstring) from the judge's differences on all N
    shared rows, its differences on the n labelled rows and the labels' differences there (same order)."""
    n = len(d_y)
    if n == 0 or len(d_f_all) == 0:
        return Difference(None, None, None, n)
    value = float(np.mean(d_f_all)) - float(np.mean(np.asarray(d_f_labelled, float) - np.asarray(d_y, float)))
    return _normal(value, paired_ppi_variance(d_f_all, d_f_labelled, d_y), n)


def paired_ppi_variance(d_f_all: Numbers, d_f_labelled: Numbers, d_y: Numbers) -> float:
    """``estimate.ppi_variance`` with the rectifier's variance taken over its n values plus half a pseudo-pair at
    r̄ − 1 and at r̄ + 1 (module docstring): (SS + 1) / n instead of SS / (n − 1)."""
    f_all = np.asarray(d_f_all, dtype=float)
    f = np.asarray(d_f_labelled, dtype=float)
    rect = f - np.asarray(d_y, dtype=float)
    n, big_n = len(rect), len(f_all)
    var_f = float(np.var(f_all, ddof=1)) if big_n > 1 else 0.0
    var_r = (float(np.sum((rect - rect.mean()) ** 2)) + 1.0) / n
    cov = float(np.cov(f, rect, ddof=1)[0, 1]) if n > 1 else 0.0
    return max(var_f / big_n + var_r / n - 2.0 * cov / big_n, 0.0)


@dataclass
class PairedComparison:
    """One metric × method in runs A and B: the three differences B − A and what they say together."""

    metric: str
    method: str
    n_shared: int  # rows both runs scored
    n_labelled: int  # of which labelled in both runs
    judge_only: Difference
    labels_only: Difference
    corrected: Difference
    notes: list[str] = field(default_factory=list)

    @property
    def disagree(self) -> bool:
        """The judge's difference and the corrected one differ in sign or in significance."""
        return any(n.code in ("compare.sign", "compare.significance") for n in self.notes if hasattr(n, "code"))

    def to_dict(self) -> dict[str, object]:
        return {
            "metric": self.metric, "method": self.method, "n_shared": self.n_shared, "n_labelled": self.n_labelled,
            "judge_only": self.judge_only.to_dict(), "labels_only": self.labels_only.to_dict(),
            "corrected": self.corrected.to_dict(), "disagree": self.disagree, "notes": [str(n) for n in self.notes],
        }


def _sign(v: float | None) -> int:
    return 0 if v is None or abs(v) < 1e-12 else (1 if v > 0 else -1)


def judge_vs_corrected(judge: Difference, corrected: Difference) -> list[str]:
    """Notes when the judge's difference and the corrected one tell different stories."""
    notes: list[str] = []
    if judge.value is None or corrected.value is None:
        return notes
    sj, sc = _sign(judge.value), _sign(corrected.value)
    if sj and sc and sj != sc:
        notes.append(say("compare.sign", judge=f"{judge.value:+.3f}", corrected=f"{corrected.value:+.3f}"))
    if judge.excludes_zero is not None and corrected.excludes_zero is not None and judge.excludes_zero != corrected.excludes_zero:
        which = "compare.judge_only_significant" if judge.excludes_zero else "compare.corrected_only_significant"
        notes.append(say("compare.significance", detail=say(which)))
    return notes


def compare_paired(
    metric: str,
    method: str,
    judge_a: Mapping[str, float],
    judge_b: Mapping[str, float],
    labels_a: Mapping[str, int],
    labels_b: Mapping[str, int],
) -> PairedComparison:
    """The three differences B − A of one metric × method, paired by row id (``judge_*``: scores of the
    scored rows; ``labels_*``: 0/1 labels of each run's answers)."""
    shared = [r for r in judge_a if r in judge_b]
    d_f = np.array([float(judge_b[r]) - float(judge_a[r]) for r in shared], dtype=float)
    lab = [i for i, r in enumerate(shared) if r in labels_a and r in labels_b]
    y_a = [int(labels_a[shared[i]]) for i in lab]
    y_b = [int(labels_b[shared[i]]) for i in lab]
    d_y = np.asarray(y_b, float) - np.asarray(y_a, float)
    judge = mean_difference(d_f)
    labels = paired_proportion_difference(y_b, y_a)
    corrected = corrected_difference(d_f, d_f[lab], d_y)
    notes = judge_vs_corrected(judge, corrected)
    if not lab:
        notes.append(say("compare.no_shared_labels"))
    elif len(lab) == len(shared):
        notes.append(say("note.every_row_labelled"))
    elif len(lab) < 10:
        notes.append(say("note.small_n", n=len(lab)))
    return PairedComparison(metric, method, len(shared), len(lab), judge, labels, corrected, notes)


__all__ = [
    "Difference",
    "PairedComparison",
    "compare_paired",
    "corrected_difference",
    "judge_vs_corrected",
    "mean_difference",
    "paired_ppi_variance",
    "paired_proportion_difference",
]
