"""Two stored runs on the same rows, compared with the judge's, the labels' and the corrected difference
(``paired.compare_paired``, run B − run A) for every metric × method both runs scored. Reads the runs and each
run's own labels (its dataset columns and the inspector's labels of its dataset hash) from the store.

Each run is labelled on its own answers: run B's answers differ from run A's, so a label of A's row says
nothing about B's. Rows pair by id; only rows labelled in both runs correct the difference. Every comparison
names the judge that scored each side (provider / model): the same method judged by two models compares the
judges as much as the answers, and a note says so. When the runs share no metric × method, or no row, the
comparison is empty and its notes say why (never an "agree" over 0 rows); rows only one run has are counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust.labels import HumanLabels
from rageval_core.analysis.trust.paired import PairedComparison, compare_paired
from rageval_core.analysis.trust.report import scores_by
from rageval_core.analysis.trust.run_report import samples_of_run, merged_labels
from rageval_core.core.messages import say
from rageval_core.core.method_labels import result_method
from rageval_core.core.types import Sample
from rageval_core.store.runs import Store

DIFFERENCE = "B - A"  # the one sign convention: positive when run B scores higher (Compare's delta too)
SHOWN = 8


@dataclass
class RunsComparison:
    """Run B − run A per metric × method. ``primary`` is the first with labels in both runs (decomposed
    before judges, metrics in the standard order); its three differences are repeated at the top level
    of ``to_dict`` so a one-metric comparison reads ``comparison.corrected``. ``judges`` names who scored each
    method in each run; ``notes`` say what was not compared and why."""

    run_a: str
    run_b: str
    comparisons: list[PairedComparison] = field(default_factory=list)
    judges: dict[str, tuple[str, str]] = field(default_factory=dict)  # method -> (judge in A, judge in B)
    only_a: list[str] = field(default_factory=list)  # "metric (method)" scored by A only
    only_b: list[str] = field(default_factory=list)
    rows_a: int = 0
    rows_b: int = 0
    shared_rows: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def primary(self) -> PairedComparison | None:
        labelled = [c for c in self.comparisons if c.n_labelled]
        first = labelled or self.comparisons
        return first[0] if first else None

    def judge_of(self, method: str) -> str:
        """"offline/heuristic-v3" when both runs used one judge for ``method``, else "A: x · B: y"."""
        a, b = self.judges.get(method, ("?", "?"))
        return a if a == b else f"A: {a} · B: {b}"

    def to_dict(self) -> dict[str, Any]:
        first = self.primary
        top: dict[str, Any] = {} if first is None else {
            k: v for k, v in first.to_dict().items() if k in ("metric", "method", "judge_only", "labels_only", "corrected",
                                                               "disagree", "n_shared", "n_labelled")
        }
        return {"run_a": self.run_a, "run_b": self.run_b, "difference": DIFFERENCE, **top,
                "rows": {"a": self.rows_a, "b": self.rows_b, "shared": self.shared_rows},
                "only_a": self.only_a, "only_b": self.only_b, "notes": [str(n) for n in self.notes],
                "by_method": [{**c.to_dict(), "judge_a": self.judges.get(c.method, ("?", "?"))[0],
                               "judge_b": self.judges.get(c.method, ("?", "?"))[1]} for c in self.comparisons]}


@dataclass
class _Run:
    id: str
    rows: set[str]
    scores: dict[str, Any]
    labels: HumanLabels
    judges: dict[str, str]


def _run_inputs(store: Store, run_id: str, samples: Sequence[Sample] | None) -> _Run:
    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    rows = {r.sample_id for r in store.rows(info.id) if r.valid}
    results = [r for r in store.results(info.id) if not rows or r.sample_id in rows]
    judges: dict[str, str] = {}
    for r in results:
        who = "/".join(str(x) for x in (getattr(r, "provider", None) or info.provider,
                                        getattr(r, "model", None) or info.model) if x)
        judges.setdefault(result_method(r), who or "?")
    labels = merged_labels(samples if samples is not None else samples_of_run(store, info), store.labels(info.dataset_hash or ""))
    return _Run(info.id, rows or {r.sample_id for r in results}, scores_by(results), labels, judges)


def _pairs(scores: dict[str, Any]) -> list[tuple[str, str]]:
    return [(metric, method) for metric, by in scores.items() for method in by]


def compare_runs(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    samples_a: Sequence[Sample] | None = None,
    samples_b: Sequence[Sample] | None = None,
) -> RunsComparison:
    """Run B − run A for every metric × method scored in both (``samples_*``: the runs' datasets, else
    re-read from each run's file), each judge named, and notes for what could not be compared."""
    a, b = _run_inputs(store, run_a, samples_a), _run_inputs(store, run_b, samples_b)
    out = RunsComparison(a.id, b.id, rows_a=len(a.rows), rows_b=len(b.rows), shared_rows=len(a.rows & b.rows))
    pairs_a, pairs_b = _pairs(a.scores), _pairs(b.scores)
    shared = [p for p in pairs_a if p in pairs_b]
    out.only_a = [f"{m} ({meth})" for m, meth in pairs_a if (m, meth) not in pairs_b]
    out.only_b = [f"{m} ({meth})" for m, meth in pairs_b if (m, meth) not in pairs_a]
    if not shared:
        out.notes.append(say("against.no_shared_method", a=_list(out.only_a), b=_list(out.only_b)))
        return out
    if not out.shared_rows:
        out.notes.append(say("against.no_shared_rows", a=out.rows_a, b=out.rows_b))
        return out
    if out.shared_rows < max(out.rows_a, out.rows_b):
        out.notes.append(say("against.some_rows", shared=out.shared_rows, only_a=len(a.rows - b.rows),
                             only_b=len(b.rows - a.rows)))
    for metric, method in shared:
        out.judges[method] = (a.judges.get(method, "?"), b.judges.get(method, "?"))
        out.comparisons.append(compare_paired(metric, method, a.scores[metric][method], b.scores[metric][method],
                                              a.labels.for_criterion(metric), b.labels.for_criterion(metric)))
    for method, (judge_a, judge_b) in out.judges.items():
        if judge_a != judge_b:
            out.notes.append(say("against.other_judge", method=method, a=judge_a, b=judge_b))
    if out.only_a or out.only_b:
        out.notes.append(say("against.one_sided", a=_list(out.only_a), b=_list(out.only_b)))
    return out


def _list(items: Sequence[str]) -> str:
    if not items:
        return "-"
    return ", ".join(items[:SHOWN]) + (f" (+{len(items) - SHOWN})" if len(items) > SHOWN else "")


__all__ = ["DIFFERENCE", "RunsComparison", "compare_runs"]
