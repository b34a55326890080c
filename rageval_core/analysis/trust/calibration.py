"""The pass threshold per metric × method, chosen on the dev split and reported on test. Pure math, no I/O.

A score that ranks answers well can still give a useless verdict at the fixed 0.5 (jafaithsum's offline
faithfulness: AUROC 0.74, balanced accuracy 0.500 at 0.5). The threshold that maximises balanced
accuracy on dev (``stats.best_threshold``: the distinct scores as candidates, the one nearest 0.5 among
ties) is used instead, with balanced accuracy at that threshold on dev (optimistic: it was chosen
there) and on test (honest: those rows played no part), each with its interval. Where dev has one
class only, nothing is calibrated and the default applies; every figure says which applies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rageval_core.analysis.trust import small_n
from rageval_core.core import stats
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD

CALIBRATED = "calibrated on dev"
DEFAULT = "default"
SETTINGS_KEY = "calibrated_thresholds"  # the run's settings: {"metric|method": {...}}


@dataclass(frozen=True)
class BaccAt:
    """Balanced accuracy of ``score >= threshold`` on some rows, with its 95% interval and how it was made."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    interval: str = small_n.BOOTSTRAP

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n, "interval": self.interval}


@dataclass(frozen=True)
class Calibration:
    """A metric × method's threshold chosen on dev, with balanced accuracy on dev and (when shown) test."""

    metric: str
    method: str
    threshold: float
    dev: BaccAt
    dev_at_default: BaccAt  # the same dev rows at the default threshold, for comparison
    test: BaccAt | None = None  # None while test is hidden

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric, "method": self.method, "threshold": self.threshold, "source": CALIBRATED,
            "dev": self.dev.to_dict(), "dev_at_default": self.dev_at_default.to_dict(),
            "test": None if self.test is None else self.test.to_dict(),
        }


def bacc_at(
    scores: Sequence[float], labels: Sequence[int], threshold: float, *, iterations: int = DEFAULT_ITERATIONS, seed: int = 0
) -> BaccAt:
    """Balanced accuracy at a fixed threshold: the bootstrap interval, or the Wilson-mean interval when
    the rows are few or the bootstrap collapses (``small_n``)."""
    pred = stats.binarize(scores, threshold)
    y = [int(v) for v in labels]
    value = stats.balanced_accuracy(pred, y)
    if value is None:
        return BaccAt(None, None, None, 0)
    n_pos = sum(y)
    n_neg = len(y) - n_pos
    small = small_n.is_small(n_pos, n_neg)
    ci = None if small else stats.bootstrap_ci(
        lambda idx: stats.balanced_accuracy([pred[i] for i in idx], [y[i] for i in idx]), len(y),
        iterations=iterations, seed=seed)
    if small or small_n.degenerate(ci):
        tp = sum(1 for p, v in zip(pred, y) if p and v)
        tn = sum(1 for p, v in zip(pred, y) if not p and not v)
        wilson = small_n.wilson_mean_bacc(tp, n_pos - tp, tn, n_neg - tn)
        if wilson is not None:
            return BaccAt(value, wilson[0], wilson[1], len(y), small_n.WILSON_MEAN)
    low, high = ci if ci is not None else (None, None)
    return BaccAt(value, low, high, len(y))


def calibrate(
    metric: str,
    method: str,
    values: Mapping[str, float],
    labels: Mapping[str, int],
    dev_rows: Sequence[str],
    test_rows: Sequence[str] | None = None,
    *,
    default: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> Calibration | None:
    """The threshold of best balanced accuracy on the dev rows (scored and labelled), or ``None`` when dev
    lacks a class. ``test_rows`` (only when test is shown) get the chosen threshold's balanced accuracy."""
    dev = [r for r in dev_rows if r in values and r in labels]
    s, y = [float(values[r]) for r in dev], [int(labels[r]) for r in dev]
    threshold = stats.best_threshold(s, y)
    if threshold is None:
        return None
    test = None
    if test_rows is not None:
        held = [r for r in test_rows if r in values and r in labels]
        test = bacc_at([values[r] for r in held], [labels[r] for r in held], threshold, iterations=iterations, seed=seed)
    return Calibration(metric, method, threshold, bacc_at(s, y, threshold, iterations=iterations, seed=seed),
                       bacc_at(s, y, default, iterations=iterations, seed=seed), test)


def thresholds_of(calibrations: Sequence[Calibration]) -> dict[tuple[str, str], float]:
    """``{(metric, method): threshold}``: what the agreement tables and ``--fail-under`` use."""
    return {(c.metric, c.method): c.threshold for c in calibrations}


def stored_thresholds(settings: Mapping[str, Any] | None) -> dict[tuple[str, str], float]:
    """The calibrated thresholds a run's settings keep (``SETTINGS_KEY``), as ``thresholds_of`` gives them."""
    out: dict[tuple[str, str], float] = {}
    for key, entry in ((settings or {}).get(SETTINGS_KEY) or {}).items():
        metric, _, method = str(key).partition("|")
        if isinstance(entry, Mapping) and entry.get("threshold") is not None:
            out[(metric, method)] = float(entry["threshold"])
    return out


def settings_entry(calibrations: Sequence[Calibration], split_seed: int) -> dict[str, Any]:
    """What the run's settings store: per ``metric|method`` the threshold and the dev figures behind it."""
    return {f"{c.metric}|{c.method}": {"threshold": c.threshold, "chosen_on": "dev", "split_seed": split_seed,
                                       "dev_balanced_accuracy": c.dev.value, "n_dev": c.dev.n}
            for c in calibrations}


__all__ = [
    "CALIBRATED",
    "DEFAULT",
    "SETTINGS_KEY",
    "BaccAt",
    "Calibration",
    "bacc_at",
    "calibrate",
    "settings_entry",
    "stored_thresholds",
    "thresholds_of",
]
