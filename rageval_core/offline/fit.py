"""Fitting the offline claim model on labelled answers (pure numpy; ``bench/fit_offline.py`` does the I/O).

Labels are per answer, the model is per claim, and the product's decomposed faithfulness is the
length-weighted mean of claim supports, so the weights are fitted through that mean: minimise the
weighted cross-entropy of ``value_a = Σ_i L_i m_i σ(w·x_i) / Σ_i L_i`` against the answer label
(``m_i = 0`` for a vetoed claim, whose support is 0), with a small ridge on every weight but the bias.
Row weights make each file and each class count equally, so a file with more rows or a skewed label mix
does not decide the bias alone. The answer threshold is the value that maximises the mean balanced
accuracy over the files; the frame gate is chosen by the caller from a grid on the same dev rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RIDGE = 1e-3  # fitting hyper-parameter (not a model constant): keeps weights finite under separation
STEPS = 1500
LEARNING_RATE = 0.05


@dataclass
class Claims:
    """Flattened claims of many answers: features ``x`` (claims x features), owning answer ``answer``,
    length ``length`` and ``keep`` (0 for a vetoed claim)."""

    x: np.ndarray
    answer: np.ndarray
    length: np.ndarray
    keep: np.ndarray
    answers: int


def answer_values(w: np.ndarray, c: Claims, floor: np.ndarray | None = None, full: np.ndarray | None = None) -> np.ndarray:
    """The decomposed faithfulness value of every answer under weights ``w``, as the product computes it:
    each claim's sigmoid divided by that of ``full`` (a verbatim claim's features) and capped at 1, then
    raised to ``floor`` (the paraphrase rule's cosine; a vetoed claim stays 0)."""
    s = 1.0 / (1.0 + np.exp(-(c.x @ w)))
    if full is not None:
        s = np.minimum(1.0, s * (1.0 + np.exp(-(full @ w))))
    if floor is not None:
        s = np.maximum(s, floor)
    num = np.bincount(c.answer, weights=c.length * c.keep * s, minlength=c.answers)
    den = np.bincount(c.answer, weights=c.length, minlength=c.answers)
    return num / np.maximum(den, 1e-12)


def balanced_weights(labels: Sequence[int], groups: Sequence[str]) -> np.ndarray:
    """Per answer 1 / (answers of its group and class), scaled to sum to the number of answers."""
    y = np.asarray(labels)
    g = np.asarray(groups)
    w = np.zeros(len(y))
    for key in set(zip(g.tolist(), y.tolist())):
        idx = (g == key[0]) & (y == key[1])
        w[idx] = 1.0 / idx.sum()
    return w * len(y) / w.sum() if w.sum() else w


def fit_weights(c: Claims, labels: Sequence[int], row_weights: np.ndarray, *, ridge: float = RIDGE,
                steps: int = STEPS, lr: float = LEARNING_RATE, nonpositive: Sequence[int] = ()) -> np.ndarray:
    """Adam on the weighted cross-entropy of the answer values (feature 0 is the bias, not penalised).
    The weights at ``nonpositive`` are kept at or below 0 (projected after each step): a number or name
    the evidence lacks can lower a claim's support, never raise it, however few dev claims show one."""
    y = np.asarray(labels, dtype=float)
    w = np.zeros(c.x.shape[1])
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    den = np.maximum(np.bincount(c.answer, weights=c.length, minlength=c.answers), 1e-12)
    penal = np.ones_like(w)
    penal[0] = 0.0
    total = row_weights.sum() or 1.0
    for t in range(1, steps + 1):
        s = 1.0 / (1.0 + np.exp(-(c.x @ w)))
        value = np.bincount(c.answer, weights=c.length * c.keep * s, minlength=c.answers) / den
        value = np.clip(value, 1e-6, 1 - 1e-6)
        dvalue = row_weights * (value - y) / (value * (1 - value)) / total
        per_claim = dvalue[c.answer] * c.length * c.keep * s * (1 - s) / den[c.answer]
        grad = c.x.T @ per_claim + 2 * ridge * penal * w
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        if len(nonpositive):
            w[list(nonpositive)] = np.minimum(w[list(nonpositive)], 0.0)
    return w


def balanced_accuracy_at(values: Sequence[float], labels: Sequence[int], threshold: float) -> float | None:
    """(TPR + TNR) / 2 of ``value >= threshold`` against the labels; ``None`` with one class only."""
    x = np.asarray(values)
    y = np.asarray(labels)
    pos, neg = y == 1, y == 0
    if not pos.any() or not neg.any():
        return None
    pred = x >= threshold
    return float((pred[pos].mean() + (~pred[neg]).mean()) / 2)


def choose_threshold(values: Sequence[float], labels: Sequence[int], groups: Sequence[str]) -> float:
    """The cut maximising the mean balanced accuracy over the groups (files); the midpoint between the
    two neighbouring values, so the choice does not sit on a dev row's own value."""
    x = np.asarray(values, dtype=float)
    y = np.asarray(labels)
    g = np.asarray(groups)
    uniq = np.unique(x)
    cuts = np.concatenate([[uniq[0] - 1e-9], (uniq[:-1] + uniq[1:]) / 2, [uniq[-1] + 1e-9]]) if len(uniq) else [0.5]
    best, best_score = 0.5, -1.0
    for cut in cuts:
        scores = [balanced_accuracy_at(x[g == k], y[g == k], cut) for k in np.unique(g)]
        kept = [s for s in scores if s is not None]
        score = sum(kept) / len(kept) if kept else 0.0
        if score > best_score + 1e-12:
            best, best_score = float(cut), score
    return best


def auroc_se(a: float, positives: int, negatives: int) -> float:
    """Hanley & McNeil (1982) standard error of an AUROC ``a`` from ``positives`` and ``negatives``."""
    if positives <= 0 or negatives <= 0:
        return 0.0
    q1 = a / (2 - a)
    q2 = 2 * a * a / (1 + a)
    var = (a * (1 - a) + (positives - 1) * (q1 - a * a) + (negatives - 1) * (q2 - a * a)) / (positives * negatives)
    return float(np.sqrt(max(var, 0.0)))


def most_sensitive_within(scores: dict[float, float], floor: float) -> float:
    """The lowest gate (most sensitive check) whose dev score is at least ``floor``; the caller sets the
    floor one standard error below the best score with every check off (the one-standard-error rule, once
    for all gates, so their costs cannot add up past it). A check the dev data cannot show to cost more than
    noise stays on; with no gate at the floor, the best-scoring one."""
    ok = [g for g, v in scores.items() if v >= floor]
    return min(ok) if ok else max(scores, key=lambda g: scores[g])
