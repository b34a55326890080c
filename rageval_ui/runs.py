"""Stored runs as the Compare, Inspect and History pages read them.

A run keeps the rows it scored (question, contexts, answer, ground truth, metadata) with its results and call
log; the pages read them from the run. A run stored before runs kept their rows is found by hash (the dataset
loaded in the session, the run's own file, a shipped sample file with the same content hash), and the page says so.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from rageval_core.analysis import compare, export
from rageval_core.data import datasets
from rageval_core.views import run_summary
from rageval_core.store.runs import CallEntry, RunInfo, Store
from rageval_core.core.types import DECOMPOSED, MetricResult, Sample
from rageval_ui import data
from rageval_ui.i18n import t, t_opt
from rageval_ui.widgets import counted, metric_label

T = TypeVar("T")


@dataclass
class RunView:
    """One run with its results as a frame (categories as the sample data's labels when the data has them)."""

    info: RunInfo
    frame: pd.DataFrame
    categories: dict[str, str | None]
    samples: dict[str, Sample] = field(default_factory=dict)
    samples_source: str | None = None
    store: Store | None = None  # where ``results_for`` reads one row's full results
    scope: str = ""  # a filtered view's filter: part of its cached tables' keys, so they are not the whole run's
    only_methods: tuple[str, ...] = ()  # a method filter ``results_for`` applies to the row it reads
    keep_rows: frozenset[str] | None = None  # a filtered view's rows (``results`` narrows to them)
    base_results: list[MetricResult] | None = None  # the run's results when there is no store to read them from
    stamp: tuple[Any, ...] | None = None  # the run's ``run_summary.stamp`` when loaded: what ``cached`` keys on
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def results(self) -> list[MetricResult]:
        """The view's results in dataset order, details cut to the judge id (``run_summary.light_results``),
        built on first use: the pages draw from ``frame``, and a 10,000-row run has 100,000 results. The
        inspector's claims, verdicts and prompts come from ``results_for``."""
        if "results" not in self._memo:
            rows = self.base_results if self.base_results is not None or self.store is None else _ordered_results(self)
            rows = rows or []
            if self.keep_rows is not None:
                rows = [r for r in rows if r.sample_id in self.keep_rows]
            if self.only_methods:
                rows = [r for r in rows if r.method in self.only_methods]
            self._memo["results"] = rows
        return self._memo["results"]

    @property
    def run_id(self) -> str:
        return self.info.id

    def cached(self, what: str, build: Callable[[], T]) -> T:
        """``build()`` kept with the run's frame until its results change, under this view's texts and filter
        (``run_summary.cached``); a page that changes what it gets must change a copy."""
        if self.store is None:
            return build()
        return run_summary.cached(self.store, self.run_id, f"{what}:{self.samples_source}:{self.scope}", build,
                                  at=self.stamp)

    def _once(self, what: str, build: Callable[[], T]) -> T:
        if what not in self._memo:
            self._memo[what] = build()
        return self._memo[what]

    def methods(self) -> list[str]:
        return self._once("methods", lambda: compare.methods_in(self.frame) if not self.frame.empty else [])

    def judges(self) -> list[str]:
        return [m for m in self.methods() if m != DECOMPOSED]

    def sample_ids(self) -> list[str]:
        """Rows with results, in dataset order (the store's row positions)."""
        def build() -> list[str]:
            present = set(compare.first_seen(self.frame["sample_id"])) if not self.frame.empty else set()
            return [sid for sid in self.categories if sid in present]

        return list(self._once("sample_ids", build))

    def category_order(self) -> list[str]:
        """Categories in dataset order, as the RAGAS-vs-judge article's tables list them."""
        return list(dict.fromkeys((self.categories.get(sid) or "(none)") for sid in self.sample_ids()))

    def category_table(self, method: str) -> pd.DataFrame:
        """``compare.category_table`` with rows in dataset order (kept with the run's cached frame)."""
        def build() -> pd.DataFrame:
            table = compare.category_table(self.frame, method)
            return table.reindex([c for c in self.category_order() if c in table.index])

        return self.cached(f"category:{method}", build).copy()

    def results_for(self, sample_id: str) -> list[MetricResult]:
        """One row's results with their details (read from the store: the run's list has none)."""
        if self.store is not None:
            rows = run_summary.row_results(self.store, self.run_id, sample_id)
        else:
            rows = [r for r in self.base_results or [] if r.sample_id == sample_id]
        return [r for r in rows if r.method in self.only_methods] if self.only_methods else rows

    def question_snippet(self, sample_id: str, limit: int) -> str:
        """The row's question cut to ``limit`` characters ("…" marks a cut); "" when its text is not loaded."""
        sample = self.samples.get(sample_id)
        if sample is None:
            return ""
        return sample.question[:limit] + "…" if len(sample.question) > limit else sample.question

    def side_by_side(self, judge: str) -> pd.DataFrame:
        """``compare.side_by_side`` of the view and ``judge``, kept with the run (the per-row table and the scatter
        both start from it; treat it as read-only)."""
        return self.cached(f"side_by_side:{judge}", lambda: compare.side_by_side(self.frame, judge, table=self.wide()))

    def wide(self) -> pd.DataFrame:
        """``compare.wide`` of the view (a pivot of every result), kept with the run: the per-row table, the
        scatter and the agreement table read it (treat it as read-only)."""
        return self.cached("wide", lambda: compare.wide(self.frame))

    def per_row(self, judge: str | None) -> pd.DataFrame:
        """One line per row: decomposed vs ``judge`` side by side, or (no judge) a column per metric with
        readable labels, rows in dataset order."""
        if judge:
            return self.side_by_side(judge)
        wide = self.frame.pivot_table(index="sample_id", columns="metric", values="value", aggfunc="mean")
        return wide.reindex(self.sample_ids()).rename(columns=metric_label).reset_index()


def store() -> Store:
    """The workbench store (RAGEVAL_HOME or .rageval/), opened per call: connections are per thread."""
    return Store()


def run_status(status: str) -> str:
    """A run's status ("done", "cancelled", "running", ...) in the UI language."""
    return t_opt(f"status.{status}", status)


def run_label(info: RunInfo) -> str:
    when = datetime.fromtimestamp(info.created_at, tz=UTC).strftime("%Y-%m-%d %H:%M")
    named = f"{info.name} · " if info.name else ""
    return named + t("runs.label", id=info.id, dataset=info.dataset_name or "?", provider=info.provider, model=info.model,
                     rows=info.n_rows, status=run_status(info.status), when=when)


RUN_ROWS = "run"  # ``samples_source`` of a run that keeps the rows it scored


def find_samples(store: Store, info: RunInfo, current: data.Workset | None) -> tuple[dict[str, Sample], str | None]:
    """The run's rows with their texts (label columns included) and where they came from: the run's own rows, kept
    with it (``RUN_ROWS``). A run stored before runs kept their rows is found by hash, as it always was
    (``rows_note`` says so on the page): the session's dataset when the hash matches, else the file the run was
    made on when unchanged (what ``trust RUN`` reads), else a sample file by hash."""
    kept = run_summary.cached(store, info.id, "samples", lambda: store.samples(info.id))
    if kept:
        return kept, RUN_ROWS
    return _found_by_hash(info, current)


def rows_note(source: str | None) -> str | None:
    """What a page says of where the run's rows came from: nothing for a run that keeps its rows; for a run stored
    before, that they were found by hash (and where), or that they were not found."""
    if source == RUN_ROWS:
        return None
    if source is None:
        return t("runs.rows_not_found")
    kind, _, name = source.partition(":")
    if kind == "loaded":
        return t("runs.rows_by_hash.loaded", name=name)
    if kind == "file":
        return t("runs.rows_by_hash.file", name=name)
    if kind == "sample":
        return t("runs.rows_by_hash.sample", name=name)
    return t("runs.rows_by_hash.other", name=name)


def _found_by_hash(info: RunInfo, current: data.Workset | None) -> tuple[dict[str, Sample], str | None]:
    """The hash hunt for a run stored before runs kept their rows (sources ``kind:name``, said by ``rows_note``)."""
    dataset_hash = info.dataset_hash
    if current is not None and (dataset_hash is None or current.content_hash == dataset_hash):
        return current.by_id(), f"loaded:{current.name}"
    own = _run_file(info)
    if own is not None:
        return own
    if dataset_hash:
        for name in data.sample_files():
            loaded = _sample_file(name, (data.SAMPLE_DIR / name).stat().st_mtime_ns)
            if loaded.content_hash == dataset_hash:
                return {s.id: s for s in loaded.samples}, f"sample:sample_data/{name}"
    if current is not None:  # a different version of the data: ids may still match, marked as such
        return current.by_id(), f"other:{current.name}"
    return {}, None


def _run_file(info: RunInfo) -> tuple[dict[str, Sample], str] | None:
    """The rows of the file the run was made on (a CLI run records it), when it is there with the run's hash."""
    path = Path(str((info.settings or {}).get("data") or ""))
    if not info.dataset_hash or not path.name or not path.is_file():
        return None
    loaded = _dataset_file(str(path.resolve()), path.stat().st_mtime_ns)
    if loaded is None or loaded.content_hash != info.dataset_hash:
        return None
    return {s.id: s for s in loaded.samples}, f"file:{path.name}"


@functools.lru_cache(maxsize=8)
def _dataset_file(path: str, mtime_ns: int) -> datasets.LoadedDataset | None:
    """A run's own dataset file, loaded once per version (read-only: the pages share it)."""
    try:
        return datasets.load_dataset(path)
    except (OSError, ValueError):
        return None


@functools.lru_cache(maxsize=32)
def _sample_file(name: str, mtime_ns: int) -> datasets.LoadedDataset:
    """A shipped sample file, loaded once per version of the file: every run not on the session's data looks its
    hash up among them, on every page and rerun (read-only: the pages share it)."""
    return datasets.load_dataset(data.SAMPLE_DIR / name)


def load(run_id: str, current: data.Workset | None = None, run_store: Store | None = None) -> RunView | None:
    """A stored run with results frame and row texts, or None when it no longer exists. The frame is kept per
    run until its results change (``run_summary.cached``): the pages rerun on every click. It has the columns the
    pages read (``run_summary.PAGE_COLUMNS``: no reason, tokens, calls, cost or latency)."""
    s = run_store or store()
    info = s.get_run(run_id)
    if info is None:
        return None
    samples, source = find_samples(s, info, current)

    def build() -> tuple[pd.DataFrame, dict[str, str | None]]:
        categories = run_summary.row_categories(s, info.id)  # in dataset order
        if samples:
            for sid, stored in categories.items():
                sample = samples.get(sid)
                categories[sid] = data.category_label(sample) if sample is not None else stored
        return run_summary.run_frame(s, info.id, categories, run_summary.PAGE_COLUMNS), categories

    now = run_summary.stamp(s, info.id)
    frame, categories = run_summary.cached(s, info.id, f"view:{source}", build, at=now)
    return RunView(info=info, frame=frame.copy(), categories=categories, samples=samples, samples_source=source, store=s,
                   stamp=now)


def _ordered_results(view: RunView) -> list[MetricResult]:
    """The run's light results in dataset order (the store's row positions), not completion order; cached."""
    assert view.store is not None
    store = view.store

    def build() -> list[MetricResult]:
        position = {r.sample_id: i for i, r in enumerate(store.rows(view.run_id))}
        return sorted(run_summary.light_results(store, view.run_id), key=lambda r: position.get(r.sample_id, len(position)))

    return run_summary.cached(store, view.run_id, "results:ordered", build)


def calls_for(run_id: str, sample_id: str, run_store: Store | None = None) -> list[CallEntry]:
    return run_summary.row_calls(run_store or store(), run_id, sample_id)


def category_comparison(view: RunView, criterion: str, judge: str) -> pd.DataFrame:
    """``compare.category_comparison`` of decomposed and ``judge`` on one shared criterion, categories in dataset
    order: the criterion's column of each method's (cached) category table, so nothing is grouped again."""
    side = pd.DataFrame({m: view.category_table(m)[criterion] for m in (DECOMPOSED, judge)})
    side.index.name = "category"
    return side


def scatter_frame(frame: pd.DataFrame, judge: str, side: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per shared criterion, decomposed value vs judge value of the rows scored by both, one line per distinct
    point: rows at the same (criterion, category, decomposed, judge) are drawn as one dot, so ``rows`` counts
    them and ``sample_id`` is the first of them in dataset order. Identical dots on top of each other show
    nothing more than one (scores such as 1.0 / 1.0 repeat over a large run), and every dot is a mark the
    browser draws. ``side`` is ``compare.side_by_side(frame, judge)`` when the caller has it."""
    side = compare.side_by_side(frame, judge) if side is None else side
    columns = ["sample_id", "category", "criterion", "decomposed", "judge", "rows"]
    parts = []
    for criterion in compare.shared_criteria(frame, DECOMPOSED, judge):
        part = side[["sample_id", "category", f"{criterion}|{DECOMPOSED}", f"{criterion}|{judge}"]].dropna(
            subset=[f"{criterion}|{DECOMPOSED}", f"{criterion}|{judge}"])
        part.columns = ["sample_id", "category", "decomposed", "judge"]
        parts.append(part.assign(criterion=criterion))
    if not parts:
        return pd.DataFrame(columns=columns)
    points = pd.concat(parts, ignore_index=True).astype({"decomposed": float, "judge": float})
    same = points.groupby(["criterion", "category", "decomposed", "judge"], sort=False, dropna=False)["sample_id"]
    out = same.first().to_frame().assign(rows=same.size()).reset_index()
    return out[columns].astype({"rows": int})


@dataclass
class RunDiff:
    """Run A vs run B as the Compare page shows it."""

    methods: dict[str, str]  # a judge of B lined up with a differently named judge of A (B → A)
    summary: pd.DataFrame  # mean per (metric, method) in A and B, delta, changed rows
    changed: pd.DataFrame  # (row, metric, method) results that differ, or exist in one run only
    only_a: list[str]  # "metric (method)" computed by A only
    only_b: list[str]
    rows_only_a: list[str]  # rows scored in A only (left out of summary and changes when rows are shared)
    rows_only_b: list[str]
    shared_rows: int
    differences: list[tuple[str, Any, Any]]  # provider, model, settings and prompt versions that differ


def _identity(info: RunInfo) -> dict[str, Any]:
    return {"provider": info.provider, "model": info.model, "base_url": info.base_url, "dataset": info.dataset_hash,
            "settings": info.settings or {}, "versions": info.versions or {}}


def diff_runs(a: RunView, b: RunView) -> RunDiff:
    """Pair the judges, compare the results on the rows both runs scored (so a mean's delta compares the
    same rows) and list what differs between the two runs' set-ups."""
    rows_a, rows_b = a.sample_ids(), b.sample_ids()
    shared = set(rows_a) & set(rows_b)
    keep = lambda rows, frame: frame if not shared or len(rows) == len(shared) else \
        frame[frame["sample_id"].isin(list(shared))]  # noqa: E731 - rows all shared: nothing to cut
    frame_a, frame_b = keep(rows_a, a.frame), keep(rows_b, b.frame)
    methods = compare.pair_methods(frame_a, frame_b)
    only_a, only_b = compare.one_sided(frame_a, frame_b, methods)
    delta = compare.run_delta(frame_a, frame_b, methods=methods)  # once for the summary and the changes
    return RunDiff(
        methods=methods,
        summary=compare.delta_summary(delta),
        changed=delta[delta["changed"]].reset_index(drop=True),
        only_a=only_a,
        only_b=only_b,
        rows_only_a=[r for r in rows_a if r not in shared],
        rows_only_b=[r for r in rows_b if r not in shared],
        shared_rows=len(shared),
        differences=compare.version_changes(_identity(a.info), _identity(b.info)),
    )


def cached_diff(a: RunView, b: RunView) -> RunDiff:
    """``diff_runs(a, b)``, kept until either run's results change (Compare reruns on every click)."""
    if a.store is None or b.store is None:
        return diff_runs(a, b)
    what = f"diff:{b.run_id}:{b.stamp or run_summary.stamp(b.store, b.run_id)}:{a.samples_source}:{b.samples_source}"
    return run_summary.cached(a.store, a.run_id, what, lambda: diff_runs(a, b), at=a.stamp)


def diff_note(diff: RunDiff) -> str:
    """What run A vs run B compares: the shared rows (and the rows left out), paired judges, one-sided results."""
    rows = lambda n: counted(n, t("unit.row"), t("unit.rows"))  # noqa: E731
    if diff.shared_rows:
        notes = [t("diff.shared", rows=rows(diff.shared_rows))]
        if diff.rows_only_a or diff.rows_only_b:
            notes.append(t("diff.left_out", a=rows(len(diff.rows_only_a)), b=rows(len(diff.rows_only_b))))
    else:
        notes = [t("diff.no_shared")]
    notes += [t("diff.paired", b=b, a=a) for b, a in diff.methods.items()]
    if diff.only_a:
        notes.append(t("diff.only_a", what=", ".join(diff.only_a)))
    if diff.only_b:
        notes.append(t("diff.only_b", what=", ".join(diff.only_b)))
    return " ".join(notes)


def differences_frame(differences: list[tuple[str, Any, Any]]) -> pd.DataFrame:
    """What differs between two runs' set-ups, one line per setting (values shortened for display)."""
    def show(value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= 120 else text[:117] + "…"

    return pd.DataFrame([{"setting": path, "run A": show(va), "run B": show(vb)} for path, va, vb in differences],
                        columns=["setting", "run A", "run B"])


@dataclass(frozen=True)
class ExportFile:
    """One download; ``make`` builds the file when it is downloaded (a 1,000-row run's files take seconds)."""

    label: str
    make: Callable[[], str]
    file_name: str
    mime: str

    @property
    def data(self) -> str:
        return self.make()


def export_files(run_id: str, run_store: Store | None = None, current: data.Workset | None = None) -> list[ExportFile]:
    """The run as the export contract's JSON, the wide CSV (with question, answer and reasons: the run's own rows,
    or for a run stored before runs kept them the rows found by hash) and the call log (JSON Lines), built on
    download."""
    s = run_store or store()

    def as_json() -> str:
        return json.dumps(export.run_to_dict(s, run_id, include_details=False), ensure_ascii=False, indent=2)

    def calls() -> str:
        return "".join(export.call_lines(s, run_id))

    def wide_csv() -> str:
        info = s.get_run(run_id)
        samples = find_samples(s, info, current)[0] if info is not None else {}
        return export.run_to_csv(s, run_id, samples)  # a run keeping its rows exports them; ``samples`` for older ones

    return [
        ExportFile(t("runs.export_json"), as_json, f"{run_id}.json", "application/json"),
        ExportFile(t("runs.export_csv"), wide_csv, f"{run_id}.csv", "text/csv"),
        ExportFile(t("runs.export_calls"), calls, f"{run_id}-calls.jsonl", "application/jsonl"),
    ]
