"""Label next: which unlabelled rows a person should label first. Pure function, no I/O.

A label tells most where the score is least sure: a judge score near the pass threshold (a label decides
the verdict), methods that disagree (decomposed vs a judge, or two judges: one of them is wrong there),
and a score that moves between repeats of the same judge. Each signal is in [0, 1]; the priority is
their weighted sum (weights 1, 1, 1 by default: none is known to matter more), and the row's reason
names the largest one so the page can say why it is suggested.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from rageval_core.core.messages import say


@dataclass(frozen=True)
class LabelCandidate:
    """One (row, criterion) without a human label and how much a label would tell."""

    row_id: str
    criterion: str
    priority: float
    uncertainty: float  # 1 at the threshold, 0 at the far end of the scale
    disagreement: float  # largest |a − b| between methods on this row
    spread: float  # 2 × the largest standard deviation over repeats (0..1)
    reason: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def uncertainty(score: float, threshold: float) -> float:
    """1 − distance to the threshold over the largest possible distance on [0, 1]."""
    span = max(threshold, 1.0 - threshold) or 1.0
    return max(0.0, 1.0 - abs(float(score) - threshold) / span)


def label_next(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    labelled: Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, object]],
    *,
    threshold: float = 0.5,
    repeats: Mapping[str, Mapping[str, Mapping[str, Sequence[float]]]] | None = None,
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0),
    top: int | None = None,
) -> list[LabelCandidate]:
    """Rank unlabelled (row, criterion) pairs, most informative first (ties: input order).

    ``scores``: ``{criterion: {method: {row_id: value}}}`` (scored rows only). ``labelled``:
    ``{row_id: criteria with a label}``. ``repeats``: ``{criterion: {method: {row_id: [values]}}}`` when
    repeat runs exist. Uncertainty uses the mean over methods; a row no method scored is skipped.
    """
    w_u, w_d, w_s = weights
    out: list[tuple[float, int, LabelCandidate]] = []
    order = 0
    for criterion, by_method in scores.items():
        rows = list(dict.fromkeys(r for values in by_method.values() for r in values))
        for rid in rows:
            if criterion in (labelled.get(rid) or ()):
                continue
            vals = [float(v[rid]) for v in by_method.values() if rid in v]
            if not vals:
                continue
            u = uncertainty(float(np.mean(vals)), threshold)
            d = float(max(vals) - min(vals)) if len(vals) > 1 else 0.0
            s = 0.0
            for per_method in (repeats or {}).get(criterion, {}).values():
                reps = per_method.get(rid)
                if reps is not None and len(reps) > 1:
                    s = max(s, min(1.0, 2.0 * float(np.std(np.asarray(reps, dtype=float)))))
            parts = {"rank.near_threshold": w_u * u, "rank.methods_disagree": w_d * d, "rank.repeats_differ": w_s * s}
            priority = sum(parts.values())
            reason = say(max(parts, key=lambda k: parts[k]) if priority > 0 else "rank.settled")
            cand = LabelCandidate(rid, criterion, round(priority, 6), round(u, 6), round(d, 6), round(s, 6), reason)
            out.append((-priority, order, cand))
            order += 1
    out.sort(key=lambda t: (t[0], t[1]))
    ranked = [c for _, _, c in out]
    return ranked[:top] if top is not None else ranked
