"""Agreement per label split, with the test split withheld until someone asks. Pure: no I/O.

While test is hidden, its rows' labels are taken out of the whole report (``withhold``), not only out of
the per-split table: the run-wide agreement, the corrected estimate and the bias table would otherwise
carry the test labels into every figure a person tunes a prompt against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust.labels import HumanLabels
from rageval_core.analysis.trust.report import MethodAgreement, agreements, labels_in
from rageval_core.analysis.trust.splits import SPLITS, TEST, rows_in, split_counts
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD
from rageval_core.core.messages import say


def withhold(labels: HumanLabels, rows: set[str]) -> HumanLabels:
    """``labels`` without any label, conflict or preference pair touching ``rows``."""
    return HumanLabels(
        labels={k: v for k, v in labels.labels.items() if k[0] not in rows},
        conflicts=[c for c in labels.conflicts if c.row_id not in rows],
        pairs=[p for p in labels.pairs if p.preferred not in rows and p.other not in rows],
        groups=dict(labels.groups),
    )


@dataclass
class SplitReport:
    """The split block of a trust report: how it was dealt, its sizes, agreement per split."""

    seed: int
    fractions: dict[str, float]
    rows: dict[str, int]  # run rows per split
    labelled: dict[str, dict[str, int]]  # {criterion: {split: labelled rows}}
    test_shown: bool
    test_looks: int
    agreement: dict[str, list[MethodAgreement]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "fractions": dict(self.fractions),
            "rows": dict(self.rows),
            "labelled": {c: dict(v) for c, v in self.labelled.items()},
            "test_shown": self.test_shown,
            "test_looks": self.test_looks,
            "agreement": {s: [a.to_dict() for a in rows] for s, rows in self.agreement.items()},
            "notes": list(self.notes),
        }


def split_report(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    labels: HumanLabels,
    run_rows: Sequence[str],
    assignment: Mapping[str, str],
    *,
    seed: int,
    fractions: Mapping[str, float],
    test_looks: int,
    show_test: bool,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    thresholds: Mapping[tuple[str, str], float] | None = None,
) -> SplitReport:
    """Agreement of every metric × method on each split's rows of the run (``labels``: all of them; test
    is only computed when ``show_test``). ``seed`` is the split's and the bootstrap's."""
    in_run = [r for r in run_rows if r in assignment]
    sub = {r: assignment[r] for r in in_run}
    label_map = labels_in(labels, set(in_run))
    labelled = {c: split_counts(sub, values) for c, values in label_map.items() if values}
    shown = [s for s in SPLITS if s != TEST or show_test]
    per_split = {
        s: agreements(scores, labels, rows_in(sub, s), threshold=threshold, iterations=iterations, seed=seed,
                      thresholds=thresholds)
        for s in shown
        if rows_in(sub, s)
    }
    notes: list[str] = [] if show_test else [say("split.test_hidden", looks=test_looks)]
    return SplitReport(seed, dict(fractions), split_counts(sub), labelled, show_test, test_looks, per_split, notes)


__all__ = ["SplitReport", "split_report", "withhold"]
