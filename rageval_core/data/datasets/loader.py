"""``load_dataset``: a path, bytes or an upload to a ``LoadedDataset``. Never raises: whatever goes wrong
becomes an ``Issue`` naming the file (and the row and field where there is one)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from rageval_core.data.datasets.column_map import ColumnMap
from rageval_core.data.datasets.decoding import decode
from rageval_core.core.csvsafe import restore_cell
from rageval_core.data.datasets.formats import EXTENSIONS, csv_delimiter, csv_records, json_records, jsonl_records, sniff_format
from rageval_core.data.datasets.hashing import dataset_hash
from rageval_core.data.datasets.model import MAX_FILE_BYTES, MAX_STREAM_BYTES, Format, Issue, LoadedDataset
from rageval_core.data.datasets.rows import RowReader, counted
from rageval_core.data.datasets.streaming import NotStreamable, stream_rows, streamable
from rageval_core.core.types import Sample
from rageval_core.core.messages import say


def _fallback_language(text: str) -> str:
    """Used only if ``rageval_core.core.text`` is unavailable: kana/kanji share of at least 10%."""
    sample = "".join(text[:2000].split())
    hits = len(re.findall(r"[\u3040-\u30ff\u4e00-\u9fff]", sample))
    return "ja" if sample and hits >= 3 and hits >= 0.1 * len(sample) else "en"


def detect_dataset_language(samples: Sequence[Sample]) -> str:
    """``"ja"`` or ``"en"`` from the questions and answers of the first 50 rows (``"en"`` if empty)."""
    text = "\n".join(f"{s.question}\n{s.answer}" for s in list(samples)[:50])
    try:
        from rageval_core.core.text import detect_language
    except ImportError:  # pragma: no cover - text.py ships with the package
        return _fallback_language(text)
    return str(detect_language(text))


def read_records(
    records: Sequence[Any], file: str = "dataset", *, text_cells: bool = False, on_row: Callable[[int], None] | None = None,
    column_map: ColumnMap | None = None,
) -> tuple[list[Sample], list[Issue]]:
    """Validate already-parsed rows (dicts). ``text_cells`` for CSV-like sources where every cell is text."""
    reader = RowReader(file, text_cells=text_cells, column_map=column_map)
    samples = reader.read(counted(records, on_row))
    return samples, reader.map_issues() + reader.issues


def finish(samples: list[Sample], issues: list[Issue], name: str, fmt: str, total: int, file: str | None = None) -> LoadedDataset:
    """The ``LoadedDataset``, with a file-level error when there is nothing to evaluate."""
    if total == 0 and not any(i.row is None and i.severity == "error" for i in issues):
        issues.append(Issue(file or name, None, None, say("file.no_rows")))
    elif total and not samples:
        issues.append(Issue(file or name, None, None, say("file.none_loaded", total=total)))
    return LoadedDataset(
        samples=samples,
        issues=issues,
        name=name,
        language=detect_dataset_language(samples),
        content_hash=dataset_hash(samples),
        format=fmt,
        total_rows=total,
    )


def _too_big(size: int, file: str, max_bytes: int, hint: str | None = None) -> Issue:
    return Issue(file, None, None, say("file.too_big", size=f"{size / 2**20:.1f}", limit=f"{max_bytes / 2**20:g}",
                                       hint=hint or say("file.split")))


def load_dataset(
    source: str | Path | bytes | BinaryIO,
    name: str | None = None,
    *,
    fmt: Format | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    max_stream_bytes: int = MAX_STREAM_BYTES,
    on_row: Callable[[int], None] | None = None,
    column_map: ColumnMap | None = None,
) -> LoadedDataset:
    """Read a dataset file (path), bytes or a binary file object (e.g. an upload); the format comes from
    ``fmt``, the extension of the path or ``name``, or the content. ``column_map`` says which column holds
    which field, for names the loader does not know (``ColumnMap``).

    Never raises for bad content: problems are in ``.issues`` and the good rows in ``.samples``.
    Data over ``max_bytes`` is refused before it is read, except a JSON Lines or CSV file on disk in UTF-8,
    which is read row by row up to ``max_stream_bytes`` (uploads and JSON documents are read whole, so
    they keep the lower limit). ``on_row(n)`` hears every 1,000 rows how many were read.
    """
    file = name or "dataset"
    try:
        return _load(source, name, fmt, max_bytes, max_stream_bytes, on_row, column_map or None)
    except Exception as exc:  # noqa: BLE001 - the contract: a loader bug is reported, never raised at the caller
        if isinstance(source, (str, Path)):
            file = Path(source).name
        issue = Issue(file, None, None, say("file.loader_bug", error=type(exc).__name__))
        return finish([], [issue], Path(file).stem, fmt or "json", 0)


def _load(
    source: str | Path | bytes | BinaryIO, name: str | None, fmt: Format | None, max_bytes: int, max_stream_bytes: int,
    on_row: Callable[[int], None] | None, column_map: ColumnMap | None = None,
) -> LoadedDataset:
    issues: list[Issue] = []
    if hasattr(source, "read"):  # an open binary file or Streamlit's UploadedFile
        upload_name = getattr(source, "name", None)
        name = name or (Path(upload_name).name if isinstance(upload_name, str) else None)
        source = source.read(max_bytes + 1)
    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
        file = name or "dataset"
    else:
        path = Path(source)
        file = path.name
        try:
            size = path.stat().st_size
            if size > max_bytes:
                return _load_large(path, size, name, fmt, max_bytes, max_stream_bytes, on_row, column_map)
            data = path.read_bytes()
        except OSError as exc:
            issues.append(Issue(file, None, None, say("file.unreadable", error=exc.strerror or exc)))
            return finish([], issues, name or path.stem, fmt or "json", 0)
    display = _display_name(name, file)
    if len(data) > max_bytes:
        return finish([], [_too_big(len(data), file, max_bytes)], display, fmt or "json", 0)
    if not data.strip():
        issues.append(Issue(file, None, None, say("file.empty")))
        return finish([], issues, display, fmt or "json", 0, file)
    text = decode(data, file, issues)
    del data
    if text is None:
        return finish([], issues, display, fmt or "json", 0)
    if not text.strip():
        issues.append(Issue(file, None, None, say("file.empty")))
        return finish([], issues, display, fmt or "json", 0, file)
    fmt = fmt or EXTENSIONS.get(Path(file).suffix.lower()) or sniff_format(text)
    if fmt == "csv":
        records = csv_records(text, file, issues, column_map)
    elif fmt == "jsonl":
        records = jsonl_records(text, file, issues)
    else:
        records = json_records(text, file, issues)
    del text
    if records is None:
        return finish([], issues, display, fmt, 0, file)
    samples, row_issues = read_records(records, file, text_cells=(fmt == "csv"), on_row=on_row, column_map=column_map)
    return finish(samples, issues + row_issues, display, fmt, len(records), file)


def file_columns(data: bytes, name: str, limit: int = 50) -> list[str]:
    """The column names of a dataset file, for a column map: a CSV's header, or the keys of the first ``limit`` JSON /
    JSONL rows in the order they appear; ``[]`` when the file cannot be read (``load_dataset`` says why)."""
    issues: list[Issue] = []
    text = decode(data[:MAX_FILE_BYTES], name, issues) if data.strip() else None
    if text is None:
        return []
    fmt = EXTENSIONS.get(Path(name).suffix.lower()) or sniff_format(text)
    if fmt == "csv":
        first = text.split("\n", 1)[0]
        header = next(csv.reader(io.StringIO(first), delimiter=csv_delimiter(first)), [])
        return [restore_cell(h.strip()) for h in header if h.strip()]
    records = jsonl_records(text, name, issues) if fmt == "jsonl" else json_records(text, name, issues)
    columns: list[str] = []
    for record in (records or [])[:limit]:
        if isinstance(record, dict):
            columns.extend(str(k) for k in record if str(k) not in columns)
    return columns


def _display_name(name: str | None, file: str) -> str:
    return Path(name).stem if name and Path(name).suffix.lower() in EXTENSIONS else (name or Path(file).stem)


def _load_large(
    path: Path, size: int, name: str | None, fmt: Format | None, max_bytes: int, max_stream_bytes: int,
    on_row: Callable[[int], None] | None, column_map: ColumnMap | None = None,
) -> LoadedDataset:
    """A file over the whole-read limit: JSON Lines / CSV in UTF-8 are read row by row (up to
    ``max_stream_bytes``); anything else is refused unread, saying what would load."""
    file = path.name
    display = _display_name(name, file)
    fmt = fmt or EXTENSIONS.get(path.suffix.lower())
    limit_mb = f"{max_stream_bytes / 2**20:g}"
    if fmt not in ("jsonl", "csv"):
        hint = say("file.json_whole", limit=limit_mb)
        return finish([], [_too_big(size, file, max_bytes, hint)], display, fmt or "json", 0)
    if size > max_stream_bytes:
        return finish([], [_too_big(size, file, max_stream_bytes)], display, fmt, 0)
    if not streamable(path, fmt):
        hint = say("file.stream_utf8", limit=limit_mb)
        return finish([], [_too_big(size, file, max_bytes, hint)], display, fmt, 0)
    issues: list[Issue] = []
    try:
        read = stream_rows(path, fmt, file, issues, on_row, column_map)
    except NotStreamable as exc:
        issues.append(Issue(file, None, None, say("file.stream_not_utf8", line=exc.line, limit=f"{max_bytes / 2**20:g}")))
        return finish([], issues, display, fmt, 0)
    if read is None:
        return finish([], issues, display, fmt, 0, file)
    samples, row_issues, total = read
    return finish(samples, issues + row_issues, display, fmt, total, file)
