"""Which rows go to the annotation queue and who gets each: pure choices, no I/O.

Rows are picked by the label-next ranking (most informative first), by a filter the caller applies, or as a
seeded random sample; ``deal`` hands each row to ``per_row`` annotators in turn (two by default, so every
row can measure agreement between people), keeping everyone's share within one row of the others.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from rageval_core.analysis.trust_defaults import QUEUE_MODES as MODES
from rageval_core.core.errors import ConfigError


def pick_rows(rows: Sequence[str], mode: str, n: int, *, ranked: Sequence[str] = (), keep: Callable[[str], bool] | None = None,
              seed: int = 0) -> list[str]:
    """Up to ``n`` rows: ``label_next`` in ``ranked`` order (then the rest in order), ``filter`` those ``keep``
    accepts, ``random`` a sample drawn with ``seed`` (the same seed, the same rows)."""
    if mode not in MODES:
        raise ConfigError(f"unknown queue mode {mode!r}; use one of {', '.join(MODES)}")
    if n < 1:
        return []
    if mode == "label_next":
        present = set(rows)
        order = list(dict.fromkeys([r for r in ranked if r in present] + list(rows)))
        return order[:n]
    if mode == "filter":
        return [r for r in rows if keep is None or keep(r)][:n]
    picked = random.Random(seed).sample(list(rows), min(n, len(rows)))
    return [r for r in rows if r in set(picked)]


def deal(rows: Sequence[str], annotators: Sequence[str], per_row: int = 2) -> dict[str, list[str]]:
    """``{annotator: [rows]}``: row i goes to ``per_row`` consecutive annotators starting at ``i * per_row``
    (mod their number), so loads differ by at most one. ``per_row`` is capped at the number of annotators."""
    names = list(dict.fromkeys(a for a in annotators if a))
    if not names:
        raise ConfigError("name at least one annotator")
    k = max(1, min(per_row, len(names)))
    out: dict[str, list[str]] = {a: [] for a in names}
    for i, row in enumerate(rows):
        for j in range(k):
            out[names[(i * k + j) % len(names)]].append(row)
    return out
