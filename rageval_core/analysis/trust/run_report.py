"""The trust report of a stored run: reads the run's results, its dataset's label columns, a labels file
and the inspector's 👍 / 👎 from the store, and hands them to the pure ``rageval_core.analysis.trust`` package.

A computed report is saved beside the run (table ``trust_reports``, owned here) so the run's export JSON
carries it as its ``trust`` block. Labels never enter the dataset file, so its hash never changes.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rageval_core.store import db, label_splits
from rageval_core.store.runs import RowInfo, Store
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
from rageval_core.core.types import Sample

_DDL = """
CREATE TABLE IF NOT EXISTS trust_reports (
    run_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    report TEXT NOT NULL
);
"""

Rows = list[tuple[str, Mapping[str, Any]]]


def _conn(store: Store) -> Any:
    conn = db.connect(store.path)
    db.ensure_schema(conn, _DDL)
    return conn


def save_report(store: Store, run_id: str, report: Mapping[str, Any]) -> None:
    """Keep the latest trust report of a run (what ``run_to_dict`` exports as ``trust``)."""
    _conn(store).execute(
        "INSERT INTO trust_reports (run_id, created_at, report) VALUES (?,?,?) ON CONFLICT (run_id) DO UPDATE SET"
        " created_at = excluded.created_at, report = excluded.report",
        (run_id, time.time(), json.dumps(report, ensure_ascii=False, default=str)),
    )


def saved_report(store: Store, run_id: str) -> dict[str, Any] | None:
    """The last saved trust report of a run, or ``None`` when none was computed."""
    row = _conn(store).execute("SELECT report FROM trust_reports WHERE run_id = ?", (run_id,)).fetchone()
    return None if row is None else json.loads(row["report"])


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


def dataset_of_run(info: Any) -> list[Sample] | None:
    """The run's dataset when the file it was run on is still there unchanged (same content hash)."""
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
) -> SplitState | None:
    """The split the report uses: dealt (or re-dealt) now when ``fractions`` are given, else the stored one
    extended to the run's new rows; ``None`` when the dataset was never split (or has no hash)."""
    if not dataset_hash:
        return None
    if fractions is None:
        stored = current_split(store, dataset_hash)
        if stored is None:
            return None
        fractions, seed = stored.fractions, stored.seed
    categories = {r.sample_id: r.category for r in run_rows}
    by_criterion = {c: labels.for_criterion(c) for c in labels.criteria()}
    rows = split_rows([r.sample_id for r in run_rows], categories, by_criterion, labels.groups, PARALLEL_SUFFIX)
    return ensure_split(store, dataset_hash, rows, fractions, seed)


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
    labels = merged_labels(samples if samples is not None else dataset_of_run(info), store.labels(info.dataset_hash or ""))
    return run_split(store, info.dataset_hash, [r for r in store.rows(info.id) if r.valid], labels, fractions, seed)


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
    """The trust report of a stored run (``samples``: its dataset, else re-read from the run's file).

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
        samples = dataset_of_run(info)
    label_rows = read_label_rows(labels_file) if labels_file else None
    labels = merged_labels(samples, store.labels(info.dataset_hash or ""), label_rows)
    run_rows = [r for r in store.rows(info.id) if r.valid]
    rows = [r.sample_id for r in run_rows]
    results = store.results(info.id)
    state = run_split(store, info.dataset_hash, run_rows, labels, split, seed if split_seed is None else split_seed)
    used = labels
    if state is not None:
        looks = state.test_looks
        if show_test and look is not None:
            looks = label_splits.record_test_look(store, info.dataset_hash or "", look)
        else:
            used = withhold(labels, {r for r, s in state.assignment.items() if s == TEST})
    calibrations, thresholds = run_calibration(store, info, scores_by(results), labels, state, show_test=show_test,
                                               threshold=threshold, iterations=iterations, seed=seed)
    if state is None:  # no split: the offline judge's shipped calibrated verdict where nothing else is calibrated
        for key, shipped in shipped_thresholds(info, results).items():
            thresholds.setdefault(key, shipped)
    report = build_report(
        results, used, row_ids=rows or None, run_id=info.id, threshold=threshold, iterations=iterations, seed=seed,
        thresholds=thresholds,
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
