"""The pure, pandas-free part of the analytics: the agreement statistics of two methods' paired values (run
summaries and call costs are the runner's, ``run.tallies``).

``compare`` re-exports all of it; it lives apart so that what a CLI run needs once it is over (the summary,
the cost tables, the agreement lines of ``run_tables``) never imports pandas: importing it took about 75 MB of
the CLI's peak memory, more than any table of a 12,000-row run.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rageval_core.core.stats import Numbers, cohen_kappa, pearson, spearman

def _nan(value: float | None) -> float:
    """A table cell: NaN where a statistic is undefined (``None``)."""
    return math.nan if value is None else value


def agreement_stats(
    x: Numbers, y: Numbers, threshold: float = 0.5, names: tuple[str, str] = ("A", "B")
) -> dict[str, Any]:
    """One agreement line over paired values scored by both methods: n, pearson, spearman, mad (mean absolute
    difference), kappa at ``threshold`` and the note saying why a statistic is NaN. ``compare.agreement`` (a
    pandas pivot) and ``run_tables`` (a streamed pass over the store) both end here, so they cannot differ."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    return {
        "n": int(len(a)),
        "pearson": _nan(pearson(a, b)),
        "spearman": _nan(spearman(a, b)),
        "mad": float(np.mean(np.abs(a - b))) if len(a) else math.nan,
        "kappa": _nan(cohen_kappa(a, b, threshold)),
        "note": agreement_note(a, b, threshold, names),
    }


def agreement_note(
    x: Numbers, y: Numbers, threshold: float = 0.5, names: tuple[str, str] = ("A", "B")
) -> str | None:
    """Why a statistic in an agreement row is undefined (NaN), in words; None when every one is defined."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    if len(a) == 0:
        return "no row scored by both methods: every statistic undefined"
    notes = []
    if len(a) < 2:
        notes.append("n < 2: Pearson and Spearman undefined")
    else:
        constant = [f"{name} constant ({vals[0]:.3f} on every row)" for name, vals in zip(names, (a, b)) if np.ptp(vals) == 0]
        if constant:
            notes.append(" and ".join(constant) + ": Pearson and Spearman undefined")
    side_a, side_b = a >= threshold, b >= threshold
    if (side_a.all() or not side_a.any()) and (side_b.all() or not side_b.any()) and side_a[0] == side_b[0]:
        where = "at or above" if side_a[0] else "below"
        notes.append(f"both put every row {where} {threshold:g}: kappa undefined (they agree on all {len(a)})")
    return "; ".join(notes) or None


HEURISTIC_ONLY_NOTE = (
    "both methods come from the offline heuristic (no LLM on either side), so agreement between them measures "
    "nothing about an LLM judge: it compares the heuristic with itself. Judge with a real model, or replay a recording."
)
