"""The share that passes, corrected for a pass/fail verdict's sensitivity and specificity (Rogan & Gladen,
1978), beside the prediction-powered estimate. Pure math, no I/O.

The verdict passes a share p̂ of all N judged rows. On the n labelled rows, sensitivity Se is the share of
people's passes the verdict passes and specificity Sp the share of people's fails it fails. Then

    π̂ = (p̂ + Sp − 1) / (Se + Sp − 1),   clipped to [0, 1]

(E[p̂] = Se·π + (1 − Sp)·(1 − π), solved for π). It is undefined when Se + Sp ≤ 1: such a verdict is no
better than a coin, and dividing by a number near 0 would give any answer. The 95% interval is a
percentile bootstrap that resamples the N judged verdicts and, independently, the labelled rows within
each class (so every resample keeps both classes); a resampled share of 0/1 values is drawn directly as
Binomial(m, share) / m, the same distribution without a row-sized draw. Resamples where Se + Sp ≤ 1 are
dropped and counted.
A verdict is the score at or above the pass threshold (for a binary judge: its own 0 / 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from rageval_core.core.messages import say


@dataclass(frozen=True)
class RoganGladen:
    """π̂ with its bootstrap interval; ``value`` ``None`` and ``note`` set when undefined."""

    value: float | None
    low: float | None
    high: float | None
    apparent: float | None  # p̂: the share of all judged rows the verdict passes
    sensitivity: float | None
    specificity: float | None
    n_judged: int
    n_labelled: int
    undefined_resamples: int = 0
    note: str | None = None

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["note"] = None if self.note is None else str(self.note)
        return out


def corrected_share(apparent: np.ndarray | float, se: np.ndarray | float, sp: np.ndarray | float) -> np.ndarray:
    """π̂ = (p̂ + Sp − 1)/(Se + Sp − 1) clipped to [0, 1]; NaN where Se + Sp ≤ 1 (works on arrays)."""
    p, se, sp = np.asarray(apparent, float), np.asarray(se, float), np.asarray(sp, float)
    denom = se + sp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 1e-12, np.clip((p + sp - 1.0) / denom, 0.0, 1.0), np.nan)


def rogan_gladen(
    verdicts: Sequence[int],
    labelled_verdicts: Sequence[int],
    labels: Sequence[int],
    *,
    iterations: int = 1000,
    seed: int = 0,
) -> RoganGladen:
    """π̂ from the 0/1 verdicts on all N judged rows and, on the n labelled rows, the verdicts and labels
    (same order). Vectorised: one draw matrix per resampled quantity."""
    v = np.asarray(verdicts, dtype=float)
    fv = np.asarray(labelled_verdicts, dtype=float)
    y = np.asarray(labels, dtype=int)
    n_big, n = len(v), len(y)
    pos, neg = fv[y == 1], fv[y == 0]
    if n_big == 0 or len(pos) == 0 or len(neg) == 0:
        note = say("rg.one_class") if n_big and n else None
        return RoganGladen(None, None, None, float(v.mean()) if n_big else None, None, None, n_big, n, 0, note)
    p_hat, se, sp = float(v.mean()), float(pos.mean()), float(1.0 - neg.mean())
    point = corrected_share(p_hat, se, sp)
    if np.isnan(point):
        return RoganGladen(None, None, None, p_hat, se, sp, n_big, n, 0,
                           say("rg.undefined", sensitivity=f"{se:.3f}", specificity=f"{sp:.3f}"))
    rng = np.random.default_rng(seed)
    # resampling m values of 0/1 with replacement: the mean of a draw is Binomial(m, share) / m, so the draws
    # need no (iterations × rows) index matrix (100,000 rows would take 800 MB)
    p_star = rng.binomial(n_big, p_hat, iterations) / n_big
    se_star = rng.binomial(len(pos), se, iterations) / len(pos)
    sp_star = rng.binomial(len(neg), sp, iterations) / len(neg)
    draws = corrected_share(p_star, se_star, sp_star)
    kept = draws[~np.isnan(draws)]
    low, high = (float(q) for q in np.quantile(kept, [0.025, 0.975])) if len(kept) else (None, None)
    return RoganGladen(float(point), low, high, p_hat, se, sp, n_big, n, int(iterations - len(kept)))


__all__ = ["RoganGladen", "corrected_share", "rogan_gladen"]
