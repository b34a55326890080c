"""Agreement between people, and where the judge stands among them. Pure math, no I/O.

With one annotator there is no ceiling: a judge at kappa 0.6 with people may be as good as people are with
each other, or far worse. Here, per criterion: Cohen's kappa for each pair of annotators on the rows both
labelled (with a bootstrap interval), Krippendorff's alpha (nominal, any number of annotators, missing
labels allowed) when more than two labelled, the judge's kappa with each annotator, and a verdict on
whether the judge is within the people's range (``verdict``). Undefined statistics are ``None``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations

from rageval_core.core import stats

Interval = tuple[float, float]
WITHIN, BELOW, ABOVE, UNKNOWN = "within", "below", "above", "unknown"


def krippendorff_alpha(units: Sequence[Sequence[Hashable]]) -> float | None:
    """Krippendorff's alpha for nominal values: 1 − observed / expected disagreement over the coincidence
    matrix. ``units`` holds, per item, the values the annotators gave it (missing ones left out); items with
    fewer than two values are not pairable and count for nothing. ``None`` with no pairable item or when
    every value is the same (expected disagreement 0, as in Krippendorff's definition: 0/0)."""
    pairable = [list(u) for u in units if len(u) >= 2]
    if not pairable:
        return None
    coincidence: dict[tuple[Hashable, Hashable], float] = {}
    for values in pairable:
        m = len(values)
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidence[(a, b)] = coincidence.get((a, b), 0.0) + 1.0 / (m - 1)
    n_c: dict[Hashable, float] = {}
    for (a, _), w in coincidence.items():
        n_c[a] = n_c.get(a, 0.0) + w
    n = sum(n_c.values())
    observed = sum(w for (a, b), w in coincidence.items() if a != b)  # sum of o_ck over c != k
    expected = n * n - sum(v * v for v in n_c.values())  # sum of n_c * n_k over c != k
    if expected <= 1e-12:
        return None
    return 1.0 - (n - 1) * observed / expected


def overlap(a: Mapping[str, object], b: Mapping[str, object]) -> list[str]:
    """Rows both label maps hold, in ``a``'s order."""
    return [r for r in a if r in b]


def kappa_with_interval(a: Mapping[str, int], b: Mapping[str, int], *, iterations: int, seed: int,
                        groups: Mapping[str, str] | None = None) -> tuple[float | None, Interval | None, int]:
    """Cohen's kappa of two raters over their shared rows, its bootstrap interval (groups drawn whole) and
    the number of shared rows."""
    rows = overlap(a, b)
    x, y = [a[r] for r in rows], [b[r] for r in rows]
    value = stats.cohen_kappa(x, y) if rows else None
    if value is None:
        return None, None, len(rows)
    ci = stats.bootstrap_ci(
        lambda idx: stats.cohen_kappa([x[i] for i in idx], [y[i] for i in idx]), len(rows),
        groups=[(groups or {}).get(r, r) for r in rows], iterations=iterations, seed=seed,
    )
    return value, ci, len(rows)


def alpha_with_interval(by_annotator: Mapping[str, Mapping[str, int]], *, iterations: int, seed: int) -> tuple[float | None, Interval | None, int]:
    """Krippendorff's alpha over rows labelled by two or more annotators, its bootstrap interval over those
    rows, and their number."""
    rows = list(dict.fromkeys(r for labels in by_annotator.values() for r in labels))
    units = [[labels[r] for labels in by_annotator.values() if r in labels] for r in rows]
    units = [u for u in units if len(u) >= 2]
    value = krippendorff_alpha(units)
    if value is None:
        return None, None, len(units)
    ci = stats.bootstrap_ci(lambda idx: krippendorff_alpha([units[i] for i in idx]), len(units), iterations=iterations, seed=seed)
    return value, ci, len(units)


def pairs(annotators: Sequence[str]) -> list[tuple[str, str]]:
    return list(combinations(sorted(annotators), 2))


def verdict(judge: float | None, people: float | None, interval: Interval | None, spread: Interval | None) -> str:
    """Where the judge's agreement with people (its mean kappa with each annotator) stands: ``within`` the
    people's range (the interval of their agreement with each other, else the min–max over their pairs),
    ``below`` it (people agree with each other more than with the judge), ``above`` it, or ``unknown`` when
    either side is undefined."""
    band = interval or spread or ((people, people) if people is not None else None)
    if judge is None or band is None:
        return UNKNOWN
    low, high = band
    if judge < low:
        return BELOW
    if judge > high:
        return ABOVE
    return WITHIN


def disagreeing_rows(by_annotator: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """``{row: {annotator: label}}`` for the rows two annotators labelled differently."""
    rows = list(dict.fromkeys(r for labels in by_annotator.values() for r in labels))
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        given = {a: labels[r] for a, labels in by_annotator.items() if r in labels}
        if len(set(given.values())) > 1:
            out[r] = given
    return out


def majority(values: Sequence[int]) -> int | None:
    """The majority of 0/1 labels; ``None`` on a tie (a disagreement to settle, not a coin toss)."""
    ones = sum(1 for v in values if v)
    zeros = len(values) - ones
    return None if ones == zeros else int(ones > zeros)
