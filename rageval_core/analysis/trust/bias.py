"""Bias in the user's own labelled rows: does the judge's error (score − label) move with answer length,
the number and length of the contexts, the language, the category or where the supporting context sits?
Pure math, no I/O (``row_features`` reads a ``Sample`` already in memory).

Per metric × method and feature, on the rows both scored and labelled:

- a number (answer length, context count, context length, support position): Spearman's ρ between the
  error and the feature (effect size: ρ; a judge that favours long answers gives ρ > 0 for length);
- a category (language, category): η² = SS_between / SS_total of the error across the groups (effect size:
  the share of the error's variance the groups explain), with each group's mean error beside it.

p-values are permutation tests up to ``ASYMPTOTIC_FROM`` rows (the error shuffled against the feature, two-sided on
|ρ| or η²; seeded, vectorised): exact over all n! orders when n! is at most the number of permutations, else
(1 + #as extreme) / (1 + permutations). From ``ASYMPTOTIC_FROM`` rows on they are the large-sample tests, whose
null distributions are exact enough there: ρ·√((n−2)/(1−ρ²)) against the normal (Student's t at n − 2 degrees of
freedom, n > 1000) and the one-way F of η² times its k − 1 degrees of freedom against χ²(k − 1). A permutation
p-value cannot go below 1 / (permutations + 1): the 200 permutations memory allowed at 10,000 rows gave 0.005, which
Holm's correction over the report's tests lifted above 0.05, so a planted length bias of ρ = 0.38 was never
flagged. They are adjusted with Holm's step-down method over every test of the report (every metric × method ×
feature), so ``flagged`` (adjusted p < 0.05) controls the chance of any false flag at 5%. A feature constant on
the rows (one language only) is not tested.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import cast
from dataclasses import asdict, dataclass, field

import numpy as np

from rageval_core.core.stats import average_ranks
from rageval_core.core.text import char_ngrams
from rageval_core.core.types import Sample
from rageval_core.scoring.metrics.steps import sample_language

NUMERIC = ("answer_length", "context_count", "context_length", "support_position")
CATEGORICAL = ("language", "category")
FEATURES = NUMERIC + CATEGORICAL
ALPHA = 0.05
PERMUTATIONS = 2000
MIN_ROWS = 6  # fewer labelled rows than this: no test (a permutation p-value cannot go below 1/n!)
ASYMPTOTIC_FROM = 1000  # rows: 2,000 permutations × 1,000 rows is the largest null kept in memory at once


@dataclass
class BiasTest:
    """One feature against one metric × method's error."""

    metric: str
    method: str
    feature: str
    kind: str  # "spearman" or "eta_squared"
    effect: float
    p_value: float
    n: int
    p_adjusted: float | None = None
    group_means: dict[str, float] = field(default_factory=dict)  # categorical: mean error per group
    null: str = "permutation"  # how p was found: exact, permutation, normal (ρ's t) or chi2 (η²'s F)

    @property
    def flagged(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < ALPHA

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "flagged": self.flagged}


def support_position(sample: Sample) -> float | None:
    """Where the context most like the answer sits, 0 (first) .. 1 (last), by character-trigram overlap
    with the answer; ``None`` with fewer than two contexts or an empty answer."""
    if len(sample.contexts) < 2 or not (sample.answer or "").strip():
        return None
    answer = char_ngrams(sample.answer)
    if not answer:
        return None
    overlap = [len(answer & char_ngrams(c)) / len(answer) for c in sample.contexts]
    return overlap.index(max(overlap)) / (len(sample.contexts) - 1)


def row_features(sample: Sample) -> dict[str, float | str | None]:
    """The features of one row (module docstring): lengths in characters."""
    return {
        "answer_length": float(len(sample.answer or "")),
        "context_count": float(len(sample.contexts)),
        "context_length": float(sum(len(c) for c in sample.contexts)),
        "support_position": support_position(sample),
        "language": sample_language(sample),
        "category": sample.category,
    }


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ (Pearson of average ranks); ``None`` when a side is constant."""
    rx, ry = average_ranks(x), average_ranks(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def eta_squared(values: Sequence[float], groups: Sequence[str]) -> float | None:
    """SS_between / SS_total of ``values`` across ``groups``; ``None`` with one group or no variance."""
    v = np.asarray(values, dtype=float)
    labels, idx = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    total = float(np.sum((v - v.mean()) ** 2))
    if len(labels) < 2 or total == 0:
        return None
    return float(_between(v[None, :], idx, len(labels))[0] / total)


def _between(values: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """SS_between of each row of ``values`` (one permutation of the values a row) across the fixed groups
    ``idx``: group sums by one matrix product with the groups' one-hot matrix (group sizes never change
    under a permutation)."""
    onehot = (idx[:, None] == np.arange(k)[None, :]).astype(float)
    counts = onehot.sum(axis=0)
    means = (values @ onehot) / counts
    return np.sum(counts * (means - values.mean(axis=1, keepdims=True)) ** 2, axis=1)


def _orders(n: int, permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """Every order of n items when n! <= ``permutations`` (exact), else seeded random orders."""
    if math.factorial(n) <= permutations:
        return np.array(list(itertools.permutations(range(n)))), True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((permutations, n)), axis=1), False


def _p(extreme: int, total: int, exact: bool) -> float:
    return extreme / total if exact else (1 + extreme) / (1 + total)


def normal_p(z: float) -> float:
    """Two-sided p of a standard normal statistic."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def chi2_sf(x: float, df: int) -> float:
    """P(χ²(df) ≥ x): the regularised upper incomplete gamma Q(df/2, x/2), by its finite sums (integer df)."""
    if x <= 0:
        return 1.0
    h = x / 2.0
    if df % 2 == 0:
        terms = [i * math.log(h) - math.lgamma(i + 1) - h for i in range(df // 2)]
        return min(1.0, sum(math.exp(t) for t in terms))
    terms = [(i - 0.5) * math.log(h) - math.lgamma(i + 0.5) - h for i in range(1, (df + 1) // 2)]
    return min(1.0, math.erfc(math.sqrt(h)) + sum(math.exp(t) for t in terms))


def spearman_test(error: Sequence[float], feature: Sequence[float], *, permutations: int = PERMUTATIONS,
                  seed: int = 0) -> tuple[float, float] | None:
    """(ρ, two-sided p) of error against a numeric feature; ``None`` if ρ is undefined. Permutations up to
    ``ASYMPTOTIC_FROM`` rows, Student's t (as the normal) beyond."""
    rho = spearman_rho(error, feature)
    if rho is None:
        return None
    n = len(error)
    if n >= ASYMPTOTIC_FROM:
        return rho, 0.0 if abs(rho) >= 1.0 else normal_p(rho * math.sqrt((n - 2) / (1.0 - rho * rho)))
    re, rf = average_ranks(error), average_ranks(feature)
    re, rf = (re - re.mean()) / np.linalg.norm(re - re.mean()), (rf - rf.mean()) / np.linalg.norm(rf - rf.mean())
    orders, exact = _orders(len(re), permutations, seed)
    null = re[orders] @ rf
    return rho, _p(int(np.sum(np.abs(null) >= abs(rho) - 1e-12)), len(orders), exact)


def eta_test(error: Sequence[float], groups: Sequence[str], *, permutations: int = PERMUTATIONS,
             seed: int = 0) -> tuple[float, float] | None:
    """(η², p) of error across the groups of a categorical feature; ``None`` if undefined. Permutations up to
    ``ASYMPTOTIC_FROM`` rows, the one-way F as χ²(k − 1) beyond."""
    eta = eta_squared(error, groups)
    if eta is None:
        return None
    v = np.asarray(error, dtype=float)
    labels, idx = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    n, k = len(v), len(labels)
    if n >= ASYMPTOTIC_FROM:
        if eta >= 1.0 or n <= k:
            return eta, 0.0
        f = (eta / (k - 1)) / ((1.0 - eta) / (n - k))
        return eta, chi2_sf(f * (k - 1), k - 1)
    orders, exact = _orders(len(v), permutations, seed)
    null = _between(v[orders], idx, len(labels)) / float(np.sum((v - v.mean()) ** 2))
    return eta, _p(int(np.sum(null >= eta - 1e-12)), len(orders), exact)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given): sorted p(i) × (m − i), running maximum,
    capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        out[i] = running
    return out


def bias_tests(
    metric: str,
    method: str,
    error: Mapping[str, float],
    features: Mapping[str, Mapping[str, float | str | None]],
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> list[BiasTest]:
    """Every feature against ``error`` (``{row_id: score − label}``), unadjusted (``adjust`` does that)."""
    out: list[BiasTest] = []
    for name in FEATURES:
        rows = [r for r in error if r in features and features[r].get(name) not in (None, "")]
        if len(rows) < MIN_ROWS:
            continue
        e = [float(error[r]) for r in rows]
        if name in NUMERIC:
            got = spearman_test(e, [float(cast(float, features[r][name])) for r in rows], permutations=permutations, seed=seed)
            if got is not None:
                out.append(BiasTest(metric, method, name, "spearman", got[0], got[1], len(rows), null=_null(len(rows), "normal",
                                                                                                             permutations)))
        else:
            groups = [str(features[r][name]) for r in rows]
            got = eta_test(e, groups, permutations=permutations, seed=seed)
            if got is not None:
                means = {g: float(np.mean([x for x, h in zip(e, groups) if h == g])) for g in sorted(set(groups))}
                out.append(BiasTest(metric, method, name, "eta_squared", got[0], got[1], len(rows), group_means=means,
                                    null=_null(len(rows), "chi2", permutations)))
    return out


def _null(n: int, asymptotic: str, permutations: int) -> str:
    if n >= ASYMPTOTIC_FROM:
        return asymptotic
    return "exact" if math.factorial(n) <= permutations else "permutation"


def adjust(tests: Sequence[BiasTest]) -> list[BiasTest]:
    """``tests`` with Holm-adjusted p-values over all of them."""
    for test, p in zip(tests, holm([t.p_value for t in tests])):
        test.p_adjusted = p
    return list(tests)


def bias_report(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    labels: Mapping[str, Mapping[str, int]],
    samples: Sequence[Sample],
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> list[BiasTest]:
    """Every metric × method (``scores``: ``{metric: {method: {row_id: value}}}``) against its criterion's
    labels (``{criterion: {row_id: 0/1}}``) and every feature of ``samples``, Holm-adjusted together."""
    labelled = {r for crit in labels.values() for r in crit}
    features = {s.id: row_features(s) for s in samples if s.id in labelled}  # only labelled rows are tested
    tests: list[BiasTest] = []
    for metric, by_method in scores.items():
        crit = labels.get(metric) or {}
        for method, values in by_method.items():
            error = {r: float(values[r]) - float(crit[r]) for r in values if r in crit}
            tests.extend(bias_tests(metric, method, error, features, permutations=permutations, seed=seed))
    return adjust(tests)


__all__ = [
    "ALPHA",
    "BiasTest",
    "FEATURES",
    "adjust",
    "bias_report",
    "bias_tests",
    "chi2_sf",
    "eta_squared",
    "eta_test",
    "holm",
    "row_features",
    "spearman_rho",
    "spearman_test",
    "support_position",
]
