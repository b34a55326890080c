"""Two stored runs on the same rows, compared with the judge's, the labels' and the corrected difference
(``paired.compare_paired``) for every metric × method both runs scored. Reads the runs and each run's own
labels (its dataset columns and the inspector's labels of its dataset hash) from the store.

Each run is labelled on its own answers: run B's answers differ from run A's, so a label of A's row says
nothing about B's. Rows pair by id; only rows labelled in both runs correct the difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust.labels import HumanLabels
from rageval_core.analysis.trust.paired import PairedComparison, compare_paired
from rageval_core.analysis.trust.report import scores_by
from rageval_core.analysis.trust.run_report import merged_labels, samples_of_run
from rageval_core.core.types import Sample
from rageval_core.store.runs import Store


@dataclass
class RunsComparison:
    """Run A − run B per metric × method. ``primary`` is the first with labels in both runs (decomposed
    before judges, metrics in the standard order); its three differences are repeated at the top level
    of ``to_dict`` so a one-metric comparison reads ``comparison.corrected``."""

    run_a: str
    run_b: str
    comparisons: list[PairedComparison] = field(default_factory=list)

    @property
    def primary(self) -> PairedComparison | None:
        labelled = [c for c in self.comparisons if c.n_labelled]
        return (labelled or self.comparisons or [None])[0]

    def to_dict(self) -> dict[str, Any]:
        first = self.primary
        top: dict[str, Any] = {} if first is None else {
            k: v for k, v in first.to_dict().items() if k in ("metric", "method", "judge_only", "labels_only", "corrected",
                                                               "disagree", "n_shared", "n_labelled")
        }
        return {"run_a": self.run_a, "run_b": self.run_b, "difference": "A - B", **top,
                "by_method": [c.to_dict() for c in self.comparisons]}


def _run_inputs(store: Store, run_id: str, samples: Sequence[Sample] | None) -> tuple[str, dict[str, Any], HumanLabels]:
    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    rows = {r.sample_id for r in store.rows(info.id) if r.valid}
    scores = scores_by([r for r in store.results(info.id) if not rows or r.sample_id in rows])
    labels = merged_labels(samples if samples is not None else samples_of_run(store, info), store.labels(info.dataset_hash or ""))
    return info.id, scores, labels


def compare_runs(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    samples_a: Sequence[Sample] | None = None,
    samples_b: Sequence[Sample] | None = None,
) -> RunsComparison:
    """Run A − run B for every metric × method scored in both (``samples_*``: the runs' datasets, else
    re-read from each run's file)."""
    id_a, scores_a, labels_a = _run_inputs(store, run_a, samples_a)
    id_b, scores_b, labels_b = _run_inputs(store, run_b, samples_b)
    out = RunsComparison(id_a, id_b)
    for metric, by_method in scores_a.items():
        for method, values in by_method.items():
            other = scores_b.get(metric, {}).get(method)
            if other is None:
                continue
            out.comparisons.append(compare_paired(metric, method, values, other, labels_a.for_criterion(metric),
                                                  labels_b.for_criterion(metric)))
    return out


__all__ = ["RunsComparison", "compare_runs"]
