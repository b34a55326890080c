"""The dataset being worked on: loading sample files and uploads, table edits, pins.

The core (``rageval_core.data.datasets``) reads and validates; this module only keeps what the Dataset page
needs between reruns: the editable table, the validated samples it yields, and the file's own issues
(rows that never made it into the table).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rageval_core.data import datasets
from rageval_core.data.datasets import Issue, LoadedDataset
from rageval_core.core.types import Sample
from rageval_ui.i18n import core, t, t_opt
from rageval_ui.safe_text import md_code, md_link, safe_url
from rageval_core.core.errors import DataError

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"
PIN_COLUMN = "📌"
QUICK_ROWS = 3


@dataclass
class Workset:
    """What the Dataset page edits: the table shown, the samples it validates to, and load-time issues."""

    loaded: LoadedDataset
    frame: pd.DataFrame
    load_issues: list[Issue] = field(default_factory=list)
    table_issues: list[Issue] = field(default_factory=list)
    source: str = ""
    edited: bool = False

    @property
    def name(self) -> str:
        return self.loaded.name

    @property
    def samples(self) -> list[Sample]:
        return self.loaded.samples

    @property
    def content_hash(self) -> str:
        return self.loaded.content_hash

    @property
    def language(self) -> str:
        return self.loaded.language

    @property
    def issues(self) -> list[Issue]:
        return [*self.load_issues, *self.table_issues]

    def by_id(self) -> dict[str, Sample]:
        return {s.id: s for s in self.samples}

    def categories(self) -> dict[str, str | None]:
        """Sample id → category label (``category_label`` when the data has one, as the 12-row sample has)."""
        return {s.id: category_label(s) for s in self.samples}


def category_label(sample: Sample) -> str | None:
    label = sample.metadata.get("category_label")
    return str(label) if label else sample.category


def language_label(code: str) -> str:
    """"Japanese (ja)" (「日本語 (ja)」 in the Japanese UI) for a detected language code; the code itself when the
    catalogue has no name for it."""
    name = t_opt(f"language.{code}", "")
    return f"{name} ({code})" if name else code


def sample_files() -> list[str]:
    """Dataset files shipped in sample_data/, by name."""
    if not SAMPLE_DIR.is_dir():
        return []
    return sorted(p.name for p in SAMPLE_DIR.iterdir() if p.suffix.lower() in datasets.EXTENSIONS and p.is_file())


def _workset(loaded: LoadedDataset, source: str) -> Workset:
    return Workset(loaded=loaded, frame=datasets.samples_to_dataframe(loaded.samples), load_issues=list(loaded.issues), source=source)


def load_sample_file(name: str) -> Workset:
    """Load one of the shipped sample datasets (problems end up in the issues, never raised)."""
    return _workset(datasets.load_dataset(SAMPLE_DIR / Path(name).name), f"sample_data/{Path(name).name}")


def load_upload(name: str, data: bytes, column_map: datasets.ColumnMap | None = None) -> Workset:
    """Load uploaded bytes; the format comes from the file name or the content, the fields from ``column_map`` where
    given (the mapping step), else from the file's own names."""
    source = f"upload: {name}" + (f" ({column_map.describe()})" if column_map else "")
    return _workset(datasets.load_dataset(data, name, column_map=column_map), source)


TRACE_FORMATS = ("auto", "otel", "openinference", "langfuse", "phoenix")


class TraceUploadRefused(DataError):
    """An uploaded trace export that gives no rows; the message names the file and the reason (no Python names)."""


def load_trace_upload(name: str, upload: Any, fmt: str = "auto") -> Workset:
    """Rebuild a dataset from an uploaded trace export (one row per RAG answer); ``upload`` is the uploaded file
    (its ``size`` checked before a byte is read) or its bytes. The export's problems (naming the span or line)
    and the skipped traces by reason become warnings in the validation report; ``TraceUploadRefused`` when
    nothing can be read, or when no trace is a complete RAG answer."""
    from rageval_core.cli.traces import rows_to_samples
    from rageval_core.data.traces import SKIP_REASONS, TraceFormatError, import_traces
    from rageval_core.data.traces.detect import too_big
    from rageval_core.data.traces.limits import MAX_BYTES

    try:
        size = len(upload) if isinstance(upload, (bytes, bytearray)) else int(upload.size)
        refused = too_big(size, name)
        if refused is not None:
            raise refused
        if not isinstance(upload, (bytes, bytearray)):
            upload.seek(0)
            upload = upload.read(MAX_BYTES + 1)
        result = import_traces(bytes(upload), name, fmt)
    except TraceFormatError as exc:
        raise TraceUploadRefused(str(exc)) from None
    if not result.rows:
        raise TraceUploadRefused(result.summary())
    loaded = datasets.load_dataset(datasets.dumps_dataset(rows_to_samples(result.rows), "jsonl"), f"{Path(name).stem}.jsonl")
    notes = [Issue(name, None, issue.where, issue.message, "warning") for issue in result.issues]
    if result.n_issues > len(result.issues):
        notes.append(Issue(name, None, "traces", f"… and {result.n_issues - len(result.issues):,} more problem(s)", "warning"))
    notes += [Issue(name, None, "traces", f"{n} trace(s) skipped: {SKIP_REASONS.get(reason, reason)}", "warning")
              for reason, n in result.skip_counts().items()]
    ws = _workset(loaded, f"traces ({result.format}): {name}")
    ws.load_issues = notes + ws.load_issues
    return ws


def trace_caption(metadata: Mapping[str, Any], template: str | None = None) -> str | None:
    """Markdown naming the trace a row was imported from and its latency; ``None`` for a row that did not come from
    a trace. The id is a link to the row's ``trace_url`` (an import given ``--trace-url``, a Phoenix pull), else to
    ``template`` (the sidebar's trace link template, ``{trace_id}`` filled in); only http(s) links, the link's host
    shown. Every part comes from the dataset file: the id is one code span (``md_code``: a backtick in it cannot
    close the span) and the link goes through ``md_link`` (percent-encoded)."""
    trace_id = metadata.get("trace_id")
    if not trace_id:
        return None
    label = md_link(t("inspect.trace", trace_id=md_code(str(trace_id))), _trace_target(metadata, template))
    latency = metadata.get("latency_ms")
    if isinstance(latency, (int, float)) and not isinstance(latency, bool):
        label += " · " + t("inspect.trace_latency", ms=f"{latency:g}")
    return label


def _trace_target(metadata: Mapping[str, Any], template: str | None) -> str:
    """Where a row's trace is: its own ``trace_url``, else ``template`` with ``{trace_id}`` filled in, else ""."""
    url = str(metadata.get("trace_url") or "")
    if not url and template and "{trace_id}" in template:
        url = template.replace("{trace_id}", urllib.parse.quote(str(metadata.get("trace_id")), safe=""))
    return url


def trace_link(metadata: Mapping[str, Any], template: str | None = None) -> str | None:
    """The link to the trace a row was imported from (``_trace_target``), percent-encoded and only http(s)
    (``safe_url``: a ``javascript:`` link from the data stays unlinked); None for a row without a trace id or link.
    Compare's per-row table and History's rows show it in a link column; Inspect's caption links the same place."""
    if not metadata.get("trace_id"):
        return None
    return safe_url(_trace_target(metadata, template))


def default_pins(ws: Workset, n: int = QUICK_ROWS) -> list[str]:
    """Rows pinned for quick runs when a dataset is loaded: one per category first, then in order."""
    picked: list[str] = []
    seen: set[str | None] = set()
    for s in ws.samples:
        if s.category not in seen:
            seen.add(s.category)
            picked.append(s.id)
        if len(picked) == n:
            return picked
    for s in ws.samples:
        if len(picked) == n:
            break
        if s.id not in picked:
            picked.append(s.id)
    return picked


def editor_frame(ws: Workset, pinned: set[str]) -> pd.DataFrame:
    """The table the editor shows: a pin checkbox first, then the dataset columns."""
    frame = ws.frame.copy()
    frame.insert(0, PIN_COLUMN, frame["id"].astype(str).isin(pinned))
    return frame


def apply_editor_state(frame: pd.DataFrame, edits: Mapping[str, Any] | None) -> pd.DataFrame:
    """Apply ``st.data_editor`` deltas (edited_rows, added_rows, deleted_rows) to the frame it was given."""
    if not edits:
        return frame
    out = frame.copy()
    for pos, changes in (edits.get("edited_rows") or {}).items():
        index = int(pos)
        if 0 <= index < len(out):
            for column, value in changes.items():
                if column not in out.columns:
                    out[column] = None
                out.iat[index, out.columns.get_loc(column)] = value
    deleted = {int(i) for i in edits.get("deleted_rows") or []}
    if deleted:
        out = out.drop(out.index[[i for i in sorted(deleted) if 0 <= i < len(out)]])
    added = [dict(row) for row in edits.get("added_rows") or []]
    if added:
        out = pd.concat([out, pd.DataFrame(added)], ignore_index=True)
    return out.reset_index(drop=True)


def has_edits(edits: Mapping[str, Any] | None) -> bool:
    return bool(edits) and any(edits.get(k) for k in ("edited_rows", "added_rows", "deleted_rows"))


def commit_table(ws: Workset, table: pd.DataFrame) -> tuple[Workset, set[str]]:
    """Validate an edited table (pin column included) into a new workset; returns it and the pinned ids."""
    pins_col = table[PIN_COLUMN] if PIN_COLUMN in table.columns else pd.Series(False, index=table.index)
    data = table.drop(columns=[PIN_COLUMN], errors="ignore")
    if "id" in data.columns:  # blank ids get row-N from the core; keep the others as text
        data["id"] = data["id"].map(lambda v: "" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))
    loaded = datasets.dataframe_to_samples(data, name=ws.name)
    loaded.name = ws.name
    valid = {s.id for s in loaded.samples}
    pinned = {str(i) for i, p in zip(data.get("id", pd.Series(dtype=str)), pins_col) if bool(p) and str(i) in valid}
    new = Workset(
        loaded=loaded,
        frame=data.reset_index(drop=True),
        load_issues=[i for i in ws.load_issues if i.row is None or i.severity == "error"],
        table_issues=[_as_table_issue(i) for i in loaded.issues],
        source=ws.source,
        edited=True,
    )
    return new, pinned


def apply_table_edits(ws: Workset, frame: pd.DataFrame, edits: Mapping[str, Any]) -> tuple[Workset, set[str]]:
    """The Dataset editor's deltas applied: ticking 📌 only changes the pins (the data stays unedited),
    any other change validates the table into a new, edited workset. Returns the workset and its pins."""
    table = apply_editor_state(frame, edits)
    only_pins = not edits.get("added_rows") and not edits.get("deleted_rows") and all(
        set(change) <= {PIN_COLUMN} for change in (edits.get("edited_rows") or {}).values()
    )
    if only_pins:
        return ws, {str(i) for i, p in zip(table["id"], table[PIN_COLUMN]) if bool(p)}
    return commit_table(ws, table)


def _as_table_issue(issue: Issue) -> Issue:
    return Issue(f"{issue.file} (table)", issue.row, issue.field, issue.message, issue.severity)


def issues_frame(issues: Sequence[Issue]) -> pd.DataFrame:
    """The validation report as a table: severity, file, row, field, message."""
    return pd.DataFrame(
        [{"severity": t_opt(f"severity.{i.severity}", i.severity), "file": i.file, "row": i.row, "field": i.field or "",
          "message": core(i.message)} for i in issues],
        columns=["severity", "file", "row", "field", "message"],
    )


def labels_count(ws: Workset) -> int:
    """How many human labels the store holds for this dataset version."""
    from rageval_core.store.runs import Store

    return sum(len(v) for v in Store().labels(ws.content_hash).values())


def download_with_labels(ws: Workset) -> bytes:
    """The dataset as JSON with each row's stored 👍/👎 labels under ``human_labels`` (only when asked)."""
    from rageval_core.store.runs import Store, rows_with_labels

    rows = rows_with_labels([s.to_dict() for s in ws.samples], Store().labels(ws.content_hash))
    return (json.dumps(rows, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def download_bytes(ws: Workset, fmt: str, naming: str = "seed") -> bytes:
    """The rows as ``fmt`` in ``naming``'s field names (``DatasetError`` for what that tool's format cannot hold)."""
    return datasets.dumps_dataset(ws.samples, fmt, naming=naming)  # type: ignore[arg-type]
