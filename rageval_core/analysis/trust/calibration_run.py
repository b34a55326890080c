"""Calibrated thresholds of a stored run: chosen on its dataset's dev split (``calibration.calibrate``),
kept in the run's settings (``calibrated_thresholds``) so its export, the report and ``trust --fail-under``
use the same thresholds, and read back from there when the dataset is not split (any more)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rageval_core.analysis.trust.calibration import (
    SETTINGS_KEY,
    Calibration,
    calibrate,
    settings_entry,
    stored_thresholds,
    thresholds_of,
)
from rageval_core.analysis.trust.labels import HumanLabels
from rageval_core.analysis.trust.split_run import SplitState
from rageval_core.analysis.trust.splits import DEV, TEST, rows_in
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD
from rageval_core.store.run_rows import finish_run_dataset
from rageval_core.store.runs import Store

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo


def run_calibration(
    store: Store,
    info: RunInfo,
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    labels: HumanLabels,
    state: SplitState | None,
    *,
    show_test: bool = False,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> tuple[list[Calibration] | None, dict[tuple[str, str], float]]:
    """(calibrations, ``{(metric, method): threshold}``) of a run. With a split: chosen on dev now (test
    figures only when ``show_test``) and stored in the run's settings; without one: the thresholds its
    settings kept (no figures), or none."""
    if state is None:
        return None, stored_thresholds(info.settings)
    dev = rows_in(state.assignment, DEV)
    test = rows_in(state.assignment, TEST) if show_test else None
    out = []
    for metric, by_method in scores.items():
        crit = labels.for_criterion(metric)
        if not crit:
            continue
        for method, values in by_method.items():
            c = calibrate(metric, method, values, crit, dev, test, default=threshold, iterations=iterations, seed=seed)
            if c is not None:
                out.append(c)
    if out or stored_thresholds(info.settings):
        finish_run_dataset(store, info.id, dataset_hash=None, settings={SETTINGS_KEY: settings_entry(out, state.seed)})
    return out, thresholds_of(out)


__all__ = ["run_calibration"]
