"""A JSON Lines or CSV file (or a JSON document that is one array of rows) evaluated while it is read: the run starts on its first rows and the rest are read as the
run asks for them, so a 100,000-row file is never in memory whole (``LoadedDataset`` holds every row).

What a whole read knows at once comes in as the reader goes: issues (bad rows named by file, row and field),
the row count and the content hash (the same ``dataset_hash`` a whole read gives, fed row by row) are final
once the iteration has reached the end (``done``). A quick pass over the bytes first (``streaming.precheck``)
refuses a file that is not UTF-8 before anything runs, as the whole read does, and gives the file's SHA-256 (a
resume checks the file against it without reading the rows) and its line count (the expected rows). A JSON
document is parsed once more first, element by element (``streaming.iter_json_array``), so one that is not a
valid top-level array (a wrapper object, a syntax error anywhere) is left to the whole read, which names the
problem as before; only documents a whole read would accept (50 MB at most) are read this way. A CSV file is
read through once first too: a quoting error or a header without a question column anywhere stops a whole
read with nothing loaded, so such a file is left to the whole read, which says so.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rageval_core.data.datasets.column_map import ColumnMap
from rageval_core.data.datasets.formats import EXTENSIONS, CsvAbort, iter_csv, iter_jsonl
from rageval_core.data.datasets.hashing import DatasetHasher
from rageval_core.data.datasets.loader import _display_name, detect_dataset_language, finish
from rageval_core.data.datasets.model import MAX_FILE_BYTES, MAX_STREAM_BYTES, Format, Issue, IssueViews, LoadedDataset
from rageval_core.data.datasets.rows import RowReader, counted
from rageval_core.data.datasets.streaming import file_lines, iter_json_array, precheck, streamable
from rageval_core.core.messages import say
from rageval_core.core.types import Sample

LANGUAGE_ROWS = 50  # rows the dataset's language is told from (as ``detect_dataset_language`` reads them)


class LiveDataset(IssueViews):
    """The rows of a JSON Lines file, read once, in order, as they are iterated (``head`` reads ahead).

    Quacks like ``LoadedDataset`` where the CLI reports on a dataset (``issues``, ``errors``, ``warnings``,
    ``file_errors``, ``total_rows``, ``name``, ``format``); ``content_hash`` is None until ``done``."""

    streamed = True

    def __init__(self, path: Path, name: str | None, sha256: str, expected_rows: int,
                 on_row: Callable[[int], None] | None = None, fmt: Format = "jsonl",
                 column_map: ColumnMap | None = None) -> None:
        self.column_map = column_map or None
        self.path = path
        self.file = path.name
        self.name = _display_name(name, self.file)
        self.format = fmt
        self.sha256 = sha256
        self.expected_rows = expected_rows  # non-blank lines: the rows, good and bad
        self.issues: list[Issue] = []
        self.content_hash: str | None = None
        self.language = "en"  # told from the first 50 rows once they are read (as a whole read tells it)
        self.done = False
        self.categories: dict[str, str | None] = {}  # id → category label, in dataset order (the closing tables)
        self._reader = RowReader(self.file, text_cells=fmt == "csv", column_map=self.column_map)
        self._format_issues: list[Issue] = []  # what the CSV reader says (a whole read lists these first)
        self._hasher = DatasetHasher()
        self._labels: dict[str, str] = {}  # one copy of each distinct label
        self._first: list[Sample] = []  # the rows the language is told from
        self._buffer: list[Sample] = []  # read ahead by ``head``, not yet iterated
        self._rows = self._read(on_row)
        self._iterated = False
        self.n_samples = 0

    # ---- reading -------------------------------------------------------------------------------------------
    def _read(self, on_row: Callable[[int], None] | None) -> Iterator[Sample]:
        line_no, text = [0], [self.format == "json"]  # a JSON document was checked to be an array of rows
        with self.path.open("rb") as fh:
            if self.format == "json":
                records = iter_json_array(io.TextIOWrapper(fh, encoding="utf-8-sig", newline=""))
            elif self.format == "csv":
                records = _csv_records(fh, self.file, self._format_issues, line_no, text, self.column_map)
            else:
                records = iter_jsonl(file_lines(fh, keep_newlines=False, line_no=line_no, text=text))
            for sample in self._reader.iter_samples(counted(records, on_row)):
                self._hasher.add(sample)
                self.n_samples += 1
                label = sample.metadata.get("category_label") or sample.category
                self.categories[sample.id] = None if label is None else self._labels.setdefault(str(label), str(label))
                if len(self._first) < LANGUAGE_ROWS:
                    self._first.append(sample)
                    if len(self._first) == LANGUAGE_ROWS:
                        self.language = detect_dataset_language(self._first)
                yield sample
        if len(self._first) < LANGUAGE_ROWS:
            self.language = detect_dataset_language(self._first)
        self._finish(text[0])

    def _finish(self, any_text: bool) -> None:
        self.issues.extend(self._format_issues + self._reader.map_issues() + self._reader.issues)
        self._format_issues, self._reader.issues = [], []
        if not any_text:
            self.issues.append(Issue(self.file, None, None, say("file.empty")))
        elif self.total_rows and not self.n_samples:
            self.issues.append(Issue(self.file, None, None, say("file.none_loaded", total=self.total_rows)))
        self.content_hash = self._hasher.hexdigest()
        self.done = True

    def head(self, n: int) -> list[Sample]:
        """The first ``n`` good rows (fewer when the file has fewer), read ahead and kept for the iteration."""
        while len(self._buffer) < n:
            nxt = next(self._rows, None)
            if nxt is None:
                break
            self._buffer.append(nxt)
        return list(self._buffer[:n])

    def __iter__(self) -> Iterator[Sample]:
        """The good rows, once (a second iteration would have to read the file again: ``reopen``)."""
        if self._iterated:
            raise RuntimeError(f"{self.file} is read once; reopen it to read it again")
        self._iterated = True
        while self._buffer:
            yield self._buffer.pop(0)
        yield from self._rows

    def reopen(self) -> LiveDataset:
        """A fresh reader of the same file (e.g. the CSV export's question and answer columns)."""
        return LiveDataset(self.path, self.name, self.sha256, self.expected_rows, fmt=self.format, column_map=self.column_map)

    def whole_hash(self) -> str:
        """The content hash of the whole file, read through once without keeping its rows."""
        fresh = self.reopen()
        for _ in fresh:
            pass
        assert fresh.content_hash is not None
        return fresh.content_hash

    # ---- what the reader found so far ----------------------------------------------------------------------
    @property
    def total_rows(self) -> int:
        return self._reader.rows_read

    @property
    def ids(self) -> dict[str, int]:
        """Id → 1-based row of every good row read so far."""
        return self._reader.seen

    def _all_issues(self) -> list[Issue]:
        return self.issues + self._format_issues + self._reader.issues

    def issue_dicts(self) -> list[dict[str, Any]]:
        return [i.to_dict() for i in self._all_issues()]


def open_live(
    path: str | Path, name: str | None = None, *, min_bytes: int = MAX_FILE_BYTES, max_bytes: int = MAX_STREAM_BYTES,
    whole_bytes: int = MAX_FILE_BYTES, on_row: Callable[[int], None] | None = None, column_map: ColumnMap | None = None,
) -> LiveDataset | LoadedDataset | None:
    """A ``LiveDataset`` for a JSON Lines file on disk of at least ``min_bytes`` (and at most ``max_bytes``) in
    plain UTF-8, or a JSON document of that size (at most ``whole_bytes``) that is one valid array of rows; a
    ``LoadedDataset`` with the file-level error when a JSON Lines file over ``whole_bytes`` turns out not to be
    UTF-8 further on (refused before anything runs, as ``load_dataset`` refuses it); None for anything else,
    e.g. a smaller file in Shift_JIS, which the whole read decodes (read it with ``load_dataset``)."""
    source = Path(path)
    fmt = EXTENSIONS.get(source.suffix.lower())
    if fmt not in ("jsonl", "json", "csv"):
        return None
    try:
        size = source.stat().st_size
        limit = min(max_bytes, whole_bytes) if fmt == "json" else max_bytes
        if not min_bytes <= size <= limit or not streamable(source, "jsonl"):
            return None
        check = precheck(source)
        if fmt == "json":
            rows = _array_rows(source) if check.bad_line is None else 0
            return LiveDataset(source, name, check.sha256, rows, on_row, fmt="json", column_map=column_map) if rows else None
    except OSError:
        return None  # load_dataset says why
    if check.bad_line is not None and size <= whole_bytes:
        return None  # the whole read decodes it (or names what is wrong)
    if check.bad_line is None and fmt == "csv":
        rows = _csv_rows(source, column_map)
        return LiveDataset(source, name, check.sha256, rows, on_row, fmt="csv", column_map=column_map) if rows else None
    if check.bad_line is not None:
        issue = Issue(source.name, None, None, say("file.stream_not_utf8", line=check.bad_line, limit=f"{whole_bytes / 2**20:g}"))
        return finish([], [issue], _display_name(name, source.name), "jsonl", 0)
    return LiveDataset(source, name, check.sha256, check.lines, on_row, fmt=fmt, column_map=column_map)


class SequentialSamples:
    """Id → sample of a file read once more, for a reader that asks in file order (the CSV export asks row by row
    in the run's row order, which is the file's): each lookup reads on to the row asked for, holding nothing."""

    def __init__(self, live: LiveDataset) -> None:
        self._rows = iter(live)

    def __bool__(self) -> bool:
        return True

    def get(self, sample_id: str, default: Sample | None = None) -> Sample | None:
        for sample in self._rows:
            if sample.id == sample_id:
                return sample
        return default


def _array_rows(path: Path) -> int:
    """How many rows a JSON document that is one valid array holds; 0 when it is anything else (or empty)."""
    try:
        with path.open("rb") as fh:
            return sum(1 for _ in iter_json_array(io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")))
    except (ValueError, RecursionError, UnicodeDecodeError):
        return 0


def _csv_records(fh: Any, file: str, issues: list[Issue], line_no: list[int], text: list[bool],
                 column_map: ColumnMap | None = None) -> Iterator[Any]:
    """The records of a CSV file read a line at a time (as ``streaming.stream_rows`` reads them)."""
    lines = file_lines(fh, keep_newlines=True, line_no=line_no, text=text)
    first = next(lines, "")
    return iter_csv(first.removesuffix("\n"), itertools.chain([first], lines), file, issues, column_map)


def _csv_rows(path: Path, column_map: ColumnMap | None = None) -> int:
    """How many data rows a CSV file holds; 0 when a whole read would load nothing (quoting error, no question
    column, no header) or it has no data row."""
    try:
        with path.open("rb") as fh:
            return sum(1 for _ in _csv_records(fh, path.name, [], [0], [False], column_map))
    except CsvAbort:
        return 0
