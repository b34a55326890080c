"""The trust report of a stored run: reads the run's results, its dataset's label columns, a labels file
and the inspector's 👍 / 👎 from the store, and hands them to the pure ``rageval_core.analysis.trust`` package.

A computed report is saved beside the run (``store.trust_reports``) so the run's export JSON carries it as its
``trust`` block. Labels never enter the dataset file, so its hash never changes.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from rageval_core.store import label_splits
from rageval_core.store.trust_reports import save_report
from rageval_core.store.runs import RowInfo, RunInfo, Store
from rageval_core.analysis.trust.labels import FILE, HumanLabels, Label, dataset_labels, inspector_labels, merge_labels
from rageval_core.analysis.trust.report import (
    DEFAULT_ITERATIONS,
    DEFAULT_THRESHOLD,
    TrustReport,
    build_report,
    labels_in,
    scores_by,
)
from rageval_core.analysis.trust.bias import bias_report
from rageval_core.analysis.trust.calibration_run import run_calibration
from rageval_core.analysis.trust.shipped import shipped_thresholds
from rageval_core.analysis.trust.split_report import split_report, withhold
from rageval_core.analysis.trust.split_run import SplitState, current_split, ensure_split
from rageval_core.analysis.trust.splits import TEST, split_rows
from rageval_core.analysis.trust.probes import PARALLEL_SUFFIX
from rageval_core.analysis.trust.ranking import LabelCandidate, label_next
from rageval_core.core.types import Sample

Rows = list[tuple[str, Mapping[str, Any]]]


def sample_rows(samples: Sequence[Sample]) -> Rows:
    """``(row id, metadata)`` of dataset samples: where label columns are kept."""
    return [(s.id, s.metadata) for s in samples]


def read_label_rows(path: str | Path) -> Rows:
    """Rows of a labels file: a dataset file (JSON, JSONL, CSV) or a labels-only one with an ``id``
    column and label columns (see ``rageval_core.analysis.trust.labels``)."""
    from rageval_core.data.datasets import load_dataset

    loaded = load_dataset(path)
    if loaded.samples and not loaded.errors:
        return sample_rows(loaded.samples)
    text = Path(path).read_text(encoding="utf-8-sig")
    records: Any
    if text.lstrip()[:1] in ("[", "{"):
        try:
            records = json.loads(text)
        except json.JSONDecodeError:  # JSON Lines
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        if isinstance(records, Mapping):
            records = records.get("rows") or records.get("labels") or [records]
    else:
        records = list(csv.DictReader(io.StringIO(text)))
    rows: Rows = []
    for rec in records:
        if isinstance(rec, Mapping):
            rid = rec.get("id", rec.get("sample_id"))
            if rid not in (None, ""):
                rows.append((str(rid), rec))
    return rows


def samples_of_run(store: Store, info: RunInfo) -> list[Sample] | None:
    """The rows the run scored, as it keeps them; for a run stored before runs kept their rows, its dataset file
    when it is still there unchanged (found by its content hash: ``dataset_of_run``), else None."""
    kept = store.samples(info.id)
    return list(kept.values()) if kept else dataset_of_run(info)


def dataset_of_run(info: RunInfo) -> list[Sample] | None:
    """The dataset of a run stored before runs kept their rows, when the file it was run on is still there
    unchanged (same content hash). Only for such runs: every other reader reads the run (``samples_of_run``)."""
    from rageval_core.data.datasets import ColumnMap, load_dataset

    data = (info.settings or {}).get("data")
    if not data or not Path(str(data)).is_file():
        return None
    try:
        loaded = load_dataset(str(data), column_map=ColumnMap.from_settings((info.settings or {}).get("column_map")))
    except (OSError, ValueError):
        return None
    return loaded.samples if loaded.content_hash == info.dataset_hash else None


def merged_labels(
    samples: Sequence[Sample] | None,
    stored: Mapping[str, Mapping[str, float | None]],
    label_rows: Rows | None = None,
) -> HumanLabels:
    """Dataset columns, a labels file and the inspector's labels, merged (inspector > file > dataset)."""
    rows = sample_rows(samples or [])
    file_labels: list[Label] = dataset_labels(label_rows, source=FILE) if label_rows else []
    return merge_labels(dataset_labels(rows), file_labels, inspector_labels(stored), rows=rows + list(label_rows or []))


def run_split(
    store: Store,
    dataset_hash: str | None,
    run_rows: Sequence[RowInfo],
    labels: HumanLabels,
    fractions: Mapping[str, float] | None,
    seed: int,
    dataset_name: str | None = None,
) -> SplitState | None:
    """The split the report uses: dealt (or re-dealt) now when ``fractions`` are given, else the stored one
    extended to the run's new rows; ``None`` when the dataset was never split (or has no hash). An edited
    version of a split dataset (same name, most rows shared) keeps its split and looks (``inherit_split``)."""
    if not dataset_hash:
        return None
    stored = current_split(store, dataset_hash, dataset_name=dataset_name, row_ids=[r.sample_id for r in run_rows])
    if fractions is None:
        if stored is None:
            return None
        fractions, seed = stored.fractions, stored.seed
    categories = {r.sample_id: r.category for r in run_rows}
    by_criterion = {c: labels.for_criterion(c) for c in labels.criteria()}
    rows = split_rows([r.sample_id for r in run_rows], categories, by_criterion, labels.groups, PARALLEL_SUFFIX)
    return ensure_split(store, dataset_hash, rows, fractions, seed)


def label_next_for_run(store: Store, info: RunInfo, samples: Sequence[Sample] | None, results: Sequence[Any],
                       rows: Collection[str]) -> list[LabelCandidate]:
    """Label next for a stored run without the whole report (Inspect's button, ``annotate --hand-out``): every
    label known counts as labelled, and the rows of the dataset's split's test set are never proposed."""
    labels = merged_labels(samples, store.labels(info.dataset_hash or ""))
    in_run = set(rows)
    state = current_split(store, info.dataset_hash, dataset_name=info.dataset_name, row_ids=list(in_run)) \
        if info.dataset_hash else None
    hidden = {r for r, s in state.assignment.items() if s == TEST} if state is not None else set()
    scores = {m: {meth: {r: v for r, v in vals.items() if r in in_run and r not in hidden} for meth, vals in by.items()}
              for m, by in scores_by(results).items()}
    return label_next(scores, {rid: crits for rid, crits in labels.by_row().items() if rid in in_run})


def deal_split(
    store: Store,
    run_id: str,
    fractions: Mapping[str, float],
    seed: int = 0,
    *,
    samples: Sequence[Sample] | None = None,
) -> SplitState | None:
    """Deal (or re-deal) the labels of a stored run's dataset into train / dev / test and store the split;
    ``None`` when the run has no dataset hash to key it by."""
    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    labels = merged_labels(samples if samples is not None else samples_of_run(store, info), store.labels(info.dataset_hash or ""))
    return run_split(store, info.dataset_hash, [r for r in store.rows(info.id) if r.valid], labels, fractions, seed,
                     info.dataset_name)


def run_report(
    store: Store,
    run_id: str,
    *,
    samples: Sequence[Sample] | None = None,
    labels_file: str | Path | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    save: bool = False,
    split: Mapping[str, float] | None = None,
    split_seed: int | None = None,
    show_test: bool = False,
    look: str | None = "cli",
) -> TrustReport:
    """The trust report of a stored run (``samples``: its dataset, else the rows the run keeps: ``samples_of_run``).

    ``split`` (fractions) deals the labels into train / dev / test, or re-deals them under another
    ``split_seed`` (default ``seed``); without it a split stored earlier for the dataset is used. With a
    split, test labels stay out of every figure unless ``show_test``, which counts one look (``look``
    says where; ``None`` when the caller already counted this look, e.g. a page redrawn). With a split,
    each metric × method's pass threshold is calibrated on dev (``calibration_run``). ``save`` keeps the
    report for the run's export; callers that add sections save after."""
    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    if samples is None:
        samples = samples_of_run(store, info)
    label_rows = read_label_rows(labels_file) if labels_file else None
    labels = merged_labels(samples, store.labels(info.dataset_hash or ""), label_rows)
    run_rows = [r for r in store.rows(info.id) if r.valid]
    rows = [r.sample_id for r in run_rows]
    results = store.results(info.id)
    state = run_split(store, info.dataset_hash, run_rows, labels, split, seed if split_seed is None else split_seed,
                      info.dataset_name)
    used = labels
    if state is not None:
        looks = state.test_looks
        if show_test and look is not None:
            looks = label_splits.record_test_look(store, info.dataset_hash or "", look)
        else:
            used = withhold(labels, {r for r, s in state.assignment.items() if s == TEST})
    calibrations, thresholds = run_calibration(store, info, scores_by(results), labels, state, show_test=show_test,
                                               threshold=threshold, iterations=iterations, seed=seed)
    hidden = {r for r, s in state.assignment.items() if s == TEST} if state is not None else set()
    if state is None:  # no split: the offline judge's shipped calibrated verdict where nothing else is calibrated
        for key, shipped in shipped_thresholds(info, results).items():
            thresholds.setdefault(key, shipped)
    report = build_report(
        results, used, row_ids=rows or None, run_id=info.id, threshold=threshold, iterations=iterations, seed=seed,
        thresholds=thresholds, known=labels, not_next=hidden,
    )
    report.calibration = calibrations
    if samples:
        in_run = set(rows) if rows else {s.id for s in samples}
        report.bias = bias_report(scores_by(results), labels_in(used, in_run), [s for s in samples if s.id in in_run],
                                  seed=seed)
    if state is not None:
        report.split = split_report(
            scores_by(results), labels, rows, state.assignment, seed=state.seed, fractions=state.fractions,
            test_looks=looks, show_test=show_test, threshold=threshold, iterations=iterations, thresholds=thresholds,
        )
    withheld = {r for r, s in state.assignment.items() if s == TEST} if state is not None and not show_test else set()
    report.annotators = annotators_block(
        store, info.dataset_hash or "", samples, label_rows, scores_by(results), set(rows) - withheld,
        threshold=threshold, iterations=iterations, seed=seed, groups=labels.groups,
    )
    if save:
        save_report(store, info.id, report.to_dict())
    return report


def annotators_block(store: Store, dataset_hash: str, samples: Sequence[Sample] | None, label_rows: Rows | None,
                     scores: Mapping[str, Mapping[str, Mapping[str, float]]], rows: set[str], *, threshold: float,
                     iterations: int, seed: int, groups: Mapping[str, str] | None = None) -> Any:
    """Human–human agreement beside each judge's (``annotator_report``): the named annotators' labels from the
    dataset's columns, the labels file and the inspector, with the settled disagreements marked."""
    from rageval_core.analysis.trust.annotator_report import build_annotators
    from rageval_core.analysis.trust.labels import annotator_label_map, inspector_annotator_labels
    from rageval_core.store import annotations

    named = [
        *dataset_labels(sample_rows(samples or [])),
        *(dataset_labels(label_rows, source=FILE) if label_rows else []),
        *inspector_annotator_labels(store.annotator_labels(dataset_hash)),
    ]
    return build_annotators(annotator_label_map(named), scores, rows=rows, threshold=threshold, iterations=iterations,
                            seed=seed, groups=groups, settled=annotations.settlements(store, dataset_hash))
