"""Load, validate and save RAG datasets (JSON, JSONL, CSV, pandas tables).

A dataset is a list of ``Sample`` rows. Files use either the seed's field names (question, contexts,
answer, ground_truth) or the ragas ones (user_input, retrieved_contexts, response, reference);
everything else in a row is kept in ``metadata``. Validation never stops at the first problem: each
one becomes an ``Issue`` with file, 1-based row and field, good rows load and bad rows are listed,
so a partly broken file can still be evaluated and the user sees exactly what to fix.

The content hash is computed from the normalised samples, so loading the same data twice (or after a
save round trip in the same format) always yields the same hash; human labels and runs are keyed by it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    BinaryIO,
    Literal,
)

from rageval_core.csvsafe import dumps_csv, restore_cell
from rageval_core.types import Sample

if TYPE_CHECKING:  # pandas is only needed by the table helpers
    import pandas as pd

Severity = Literal["error", "warning"]
Format = Literal["json", "jsonl", "csv"]
Naming = Literal["seed", "ragas"]

# Accepted names per field, canonical first. Matching is case-insensitive after stripping.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "sample_id"),
    "question": ("question", "user_input", "query"),
    "contexts": ("contexts", "retrieved_contexts", "context"),
    "answer": ("answer", "response"),
    "ground_truth": ("ground_truth", "reference", "ground_truths"),
}
RAGAS_NAMES: dict[str, str] = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
}
# Keys under which a JSON object may hold its list of rows.
WRAPPER_KEYS: tuple[str, ...] = ("rows", "data", "samples", "items", "records", "examples", "dataset")
CONTEXT_SEPARATOR = "|||"
EXTENSIONS: dict[str, Format] = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}

_JSON_SCALAR_RE = re.compile(r"^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)$")


@dataclass(frozen=True)
class Issue:
    """One problem found in a dataset. ``row`` is 1-based (None for the whole file)."""

    file: str
    row: int | None
    field: str | None
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        where = self.file + (f" row {self.row}" if self.row is not None else "")
        where += f", {self.field}" if self.field else ""
        return f"{where}: {self.message} ({self.severity})"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "row": self.row, "field": self.field, "message": self.message, "severity": self.severity}


@dataclass
class LoadedDataset:
    """The good rows of a dataset plus every issue found while reading it."""

    samples: list[Sample]
    issues: list[Issue]
    name: str
    language: str
    content_hash: str
    format: str = "json"
    total_rows: int = 0

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def bad_rows(self) -> list[int]:
        """1-based rows that did not load."""
        return sorted({i.row for i in self.errors if i.row is not None})

    @property
    def ok(self) -> bool:
        return not self.errors


class DatasetError(ValueError):
    """Raised by ``save_dataset`` for an unknown format; loading reports problems as ``Issue`` instead."""


# ------------------------------------------------------------------------------------------ hashing
def sample_payload(sample: Sample) -> dict[str, Any]:
    """The normalised, JSON-ready form of a sample that the content hash is computed from."""
    return {
        "id": sample.id,
        "question": sample.question,
        "contexts": list(sample.contexts),
        "answer": sample.answer,
        "ground_truth": sample.ground_truth,
        "metadata": dict(sample.metadata),
    }


def dataset_hash(samples: Iterable[Sample]) -> str:
    """SHA-256 of the samples in order (sorted keys, unicode kept): the dataset's identity."""
    payload = [sample_payload(s) for s in samples]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------------ language
def _fallback_language(text: str) -> str:
    """Used only if ``rageval_core.text`` is unavailable: kana/kanji share of at least 10%."""
    sample = "".join(text[:2000].split())
    hits = len(re.findall(r"[\u3040-\u30ff\u4e00-\u9fff]", sample))
    return "ja" if sample and hits >= 3 and hits >= 0.1 * len(sample) else "en"


def detect_dataset_language(samples: Sequence[Sample]) -> str:
    """``"ja"`` or ``"en"`` from the questions and answers of the first 50 rows (``"en"`` if empty)."""
    text = "\n".join(f"{s.question}\n{s.answer}" for s in list(samples)[:50])
    try:
        from rageval_core.text import detect_language
    except ImportError:  # pragma: no cover - text.py ships with the package
        return _fallback_language(text)
    return str(detect_language(text))


# ------------------------------------------------------------------------------------------ decoding
def _decode(data: bytes, file: str, issues: list[Issue]) -> str | None:
    """UTF-8 with or without BOM, UTF-16 with BOM; Shift_JIS (Excel's Japanese CSV) as a fallback with a warning."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError:
            pass
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        try:
            text = data.decode("cp932")
        except UnicodeDecodeError:
            issues.append(Issue(file, None, None, f"not UTF-8 text (byte {exc.start}); save the file as UTF-8"))
            return None
        issues.append(Issue(file, None, None, "not UTF-8; read as Shift_JIS (cp932) — please save as UTF-8", "warning"))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _sniff_format(text: str) -> Format:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        first_line = stripped.split("\n", 1)[0].strip()
        try:
            json.loads(first_line)
        except ValueError:
            return "json"
        rest = stripped.split("\n", 1)[1].strip() if "\n" in stripped else ""
        return "jsonl" if rest.startswith("{") else "json"
    return "csv"


# ------------------------------------------------------------------------------------------ readers
def _json_records(text: str, file: str, issues: list[Issue]) -> list[Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        issues.append(Issue(file, None, None, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"))
        return None
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        lowered = {str(k).strip().lower(): k for k in data}
        for key in WRAPPER_KEYS:
            if key in lowered and isinstance(data[lowered[key]], list):
                return data[lowered[key]]
        lists = [k for k, v in data.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        if len(lists) == 1:
            return data[lists[0]]
        columnar = _columnar_records(data)
        if columnar is not None:
            return columnar
        if any(str(k).strip().lower() in FIELD_ALIASES["question"] for k in data):
            return [data]  # a single sample
        issues.append(
            Issue(file, None, None, f"JSON object holds no list of rows (expected a list or a key like {', '.join(WRAPPER_KEYS[:3])})")
        )
        return None
    issues.append(Issue(file, None, None, f"JSON top level is a {type(data).__name__}, expected a list of rows"))
    return None


def _columnar_records(data: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``{"question": [...], "answer": [...]}`` (pandas/HF ``to_dict("list")``) → rows, if it is one."""
    keys = {str(k).strip().lower() for k in data}
    if not keys & set(FIELD_ALIASES["question"]):
        return None
    values = list(data.values())
    if not all(isinstance(v, list) for v in values) or len({len(v) for v in values}) != 1:
        return None
    n = len(values[0])
    q_key = next(k for k in data if str(k).strip().lower() in FIELD_ALIASES["question"])
    if not all(isinstance(q, (str, type(None))) for q in data[q_key]):
        return None
    return [{k: data[k][i] for k in data} for i in range(n)]


def _jsonl_records(text: str, file: str, issues: list[Issue]) -> list[Any]:
    records: list[Any] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            records.append(_BadRecord(f"invalid JSON on line {lineno}: {exc.msg}"))
    return records


def _csv_records(text: str, file: str, issues: list[Issue]) -> list[Any] | None:
    first_line = text.split("\n", 1)[0]
    delimiter = "\t" if "\t" in first_line and "," not in first_line else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        rows = list(reader)
    except csv.Error as exc:
        issues.append(Issue(file, None, None, f"CSV could not be read: {exc}"))
        return None
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        issues.append(Issue(file, None, None, "the file has no header row"))
        return None
    header = [restore_cell(h.strip()) for h in rows[0]]
    dupes = sorted({h for h in header if h and header.count(h) > 1})
    if dupes:
        issues.append(Issue(file, None, dupes[0], f"column {dupes[0]!r} appears more than once; the last one is used", "warning"))
    records: list[Any] = []
    for cells in rows[1:]:
        if len(cells) > len(header):
            records.append(_BadRecord(f"{len(cells)} cells but the header has {len(header)} columns"))
            continue
        records.append({h: restore_cell(c) for h, c in zip(header, cells) if h})  # undo the export's formula guard
    return records


@dataclass
class _BadRecord:
    """A row that could not even be parsed (bad JSONL line, ragged CSV row)."""

    message: str


_BLANK = object()  # an empty table row (e.g. one just added in the editor): skipped without an issue


# ------------------------------------------------------------------------------------------ normalising
def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    try:  # pandas.NA / NaT
        import pandas as pd

        return bool(value is pd.NA or value is pd.NaT)
    except ImportError:  # pragma: no cover
        return False


def _clean_text(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").strip()


def _id_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def parse_contexts_cell(cell: str) -> list[str]:
    """Contexts in one text cell (CSV, table editor): a JSON list, ``|||``-separated, or one per line."""
    text = _clean_text(cell)
    if not text:
        return []
    if text.startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, list):
            return [_clean_text(str(v)) for v in value if not _is_missing(v) and str(v).strip()]
    parts = text.split(CONTEXT_SEPARATOR) if CONTEXT_SEPARATOR in text else text.split("\n")
    return [p.strip() for p in parts if p.strip()]


def _cell_value(value: Any) -> Any:
    """A metadata cell from CSV / a table: JSON numbers, booleans and lists/objects are parsed back."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, str):
        return value
    text = value.strip()
    if _JSON_SCALAR_RE.match(text) or (text[:1] in "[{" and text[-1:] in "]}"):
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


class _RowReader:
    """Turns raw records into samples and issues (shared by every format)."""

    def __init__(self, file: str, *, text_cells: bool) -> None:
        self.file = file
        self.text_cells = text_cells
        self.issues: list[Issue] = []

    def issue(self, row: int, field_name: str | None, message: str, severity: Severity = "error") -> None:
        self.issues.append(Issue(self.file, row, field_name, message, severity))

    def read(self, records: Sequence[Any]) -> list[Sample]:
        samples: list[Sample] = []
        seen: dict[str, int] = {}
        for row, record in enumerate(records, 1):
            sample = self.read_row(row, record)
            if sample is None:
                continue
            if sample.id in seen:
                self.issue(row, "id", f"duplicate id {sample.id!r} (first used on row {seen[sample.id]}); row skipped")
                continue
            seen[sample.id] = row
            samples.append(sample)
        return samples

    def _pick(self, row: int, record: Mapping[str, Any], canonical: str) -> tuple[Any, set[str]]:
        """Value of a field under any accepted name; returns (value or None, keys consumed)."""
        present = [k for k in record if str(k).strip().lower() in FIELD_ALIASES[canonical]]
        present.sort(key=lambda k: FIELD_ALIASES[canonical].index(str(k).strip().lower()))
        usable = [k for k in present if not _is_missing(record[k]) and not (isinstance(record[k], str) and not record[k].strip())]
        if not usable:
            return None, set(present)
        chosen = usable[0]
        for other in usable[1:]:
            if record[other] != record[chosen]:
                self.issue(row, canonical, f"both {chosen!r} and {other!r} are given; using {chosen!r}, {other!r} kept in metadata", "warning")
                return record[chosen], {k for k in present if k != other}
        return record[chosen], set(present)

    def read_row(self, row: int, record: Any) -> Sample | None:
        if record is _BLANK:
            return None
        if isinstance(record, _BadRecord):
            self.issue(row, None, record.message + "; row skipped")
            return None
        if not isinstance(record, Mapping):
            self.issue(row, None, f"row is a {type(record).__name__}, expected an object with question, contexts, answer")
            return None
        consumed: set[str] = set()
        ok = True

        raw_id, keys = self._pick(row, record, "id")
        consumed |= keys
        if raw_id is None:
            sample_id = f"row-{row}"
        elif isinstance(raw_id, (Mapping, list)):
            self.issue(row, "id", "id must be a string or number; row skipped")
            ok, sample_id = False, ""
        else:
            sample_id = _id_text(raw_id)

        question, keys = self._pick(row, record, "question")
        consumed |= keys
        question_text = self._text(row, "question", question)
        if not question_text:
            self.issue(row, "question", "missing question; row skipped")
            ok = False

        contexts, keys = self._pick(row, record, "contexts")
        consumed |= keys
        context_list = self._contexts(row, contexts)

        answer, keys = self._pick(row, record, "answer")
        consumed |= keys
        if answer is None:
            self.issue(row, "answer", "no answer; answer metrics will be unscored (empty_answer)", "warning")
        answer_text = self._text(row, "answer", answer) or ""

        ground_truth, keys = self._pick(row, record, "ground_truth")
        consumed |= keys
        if isinstance(ground_truth, list):
            items = [_clean_text(str(g)) for g in ground_truth if not _is_missing(g) and str(g).strip()]
            if len(items) > 1:
                self.issue(row, "ground_truth", f"{len(items)} references given; joined with newlines", "warning")
            ground_truth = "\n".join(items) or None
        gt_text = self._text(row, "ground_truth", ground_truth) or None

        metadata: dict[str, Any] = {}
        for key, value in record.items():
            if key in consumed:
                continue
            name = str(key).strip()
            if _is_missing(value) or (self.text_cells and isinstance(value, str) and not value.strip()):
                continue
            metadata[name] = _cell_value(value) if self.text_cells else value
            if name.startswith("label_") and not isinstance(metadata[name], (int, float, bool)):
                self.issue(row, name, f"label {metadata[name]!r} is not a number (0/1 or a score); kept as text", "warning")

        if not ok or question_text is None:
            return None
        return Sample(
            id=sample_id,
            question=question_text,
            contexts=tuple(context_list),
            answer=answer_text,
            ground_truth=gt_text,
            metadata=metadata,
        )

    def _text(self, row: int, name: str, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str):
            return _clean_text(value)
        if isinstance(value, (Mapping, list, tuple)):
            self.issue(row, name, f"{name} must be text, got a {type(value).__name__}")
            return None
        self.issue(row, name, f"{name} is a {type(value).__name__}; read as text", "warning")
        return _clean_text(_id_text(value))

    def _contexts(self, row: int, value: Any) -> list[str]:
        if value is None:
            self.issue(row, "contexts", "no contexts; context metrics will be unscored (missing_field)", "warning")
            return []
        if isinstance(value, str):
            if self.text_cells:
                return parse_contexts_cell(value)
            stripped = value.strip()
            if stripped.startswith("["):
                parsed = parse_contexts_cell(stripped)
                if parsed or stripped == "[]":
                    self.issue(row, "contexts", "contexts given as a JSON string; parsed as a list", "warning")
                    return parsed
            self.issue(row, "contexts", "contexts is a plain string; loaded as a one-element list", "warning")
            return [_clean_text(value)]
        if isinstance(value, (list, tuple)):
            out: list[str] = []
            for i, item in enumerate(value, 1):
                if _is_missing(item) or (isinstance(item, str) and not item.strip()):
                    self.issue(row, "contexts", f"context {i} is empty; dropped", "warning")
                elif isinstance(item, str):
                    out.append(_clean_text(item))
                elif isinstance(item, Mapping):
                    text = next((item[k] for k in ("text", "content", "page_content") if isinstance(item.get(k), str)), None)
                    if text is None:
                        self.issue(row, "contexts", f"context {i} is an object without text/content; dropped", "warning")
                    else:
                        out.append(_clean_text(text))
                else:
                    out.append(_clean_text(str(item)))
            return out
        self.issue(row, "contexts", f"contexts must be a list of strings, got a {type(value).__name__}; treated as empty")
        return []


# ------------------------------------------------------------------------------------------ public API
def read_records(records: Sequence[Any], file: str = "dataset", *, text_cells: bool = False) -> tuple[list[Sample], list[Issue]]:
    """Validate already-parsed rows (dicts). ``text_cells`` for CSV-like sources where every cell is text."""
    reader = _RowReader(file, text_cells=text_cells)
    samples = reader.read(records)
    return samples, reader.issues


def _finish(samples: list[Sample], issues: list[Issue], name: str, fmt: str, total: int) -> LoadedDataset:
    if total == 0 and not any(i.row is None and i.severity == "error" for i in issues):
        issues.append(Issue(name, None, None, "the dataset has no rows"))
    elif total and not samples:
        issues.append(Issue(name, None, None, "no row could be loaded"))
    return LoadedDataset(
        samples=samples,
        issues=issues,
        name=name,
        language=detect_dataset_language(samples),
        content_hash=dataset_hash(samples),
        format=fmt,
        total_rows=total,
    )


def load_dataset(source: str | Path | bytes | BinaryIO, name: str | None = None, *, fmt: Format | None = None) -> LoadedDataset:
    """Read a dataset file (path), bytes or a binary file object (e.g. an upload); the format comes from
    ``fmt``, the extension of the path or ``name``, or the content.

    Never raises for bad content: problems are in ``.issues`` and the good rows in ``.samples``.
    """
    issues: list[Issue] = []
    if hasattr(source, "read"):  # an open binary file or Streamlit's UploadedFile
        upload_name = getattr(source, "name", None)
        name = name or (Path(upload_name).name if isinstance(upload_name, str) else None)
        source = source.read()
    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
        file = name or "dataset"
    else:
        path = Path(source)
        file = path.name
        try:
            data = path.read_bytes()
        except OSError as exc:
            issues.append(Issue(file, None, None, f"cannot read the file: {exc.strerror or exc}"))
            return _finish([], issues, name or path.stem, fmt or "json", 0)
    display = Path(name).stem if name and Path(name).suffix.lower() in EXTENSIONS else (name or Path(file).stem)
    text = _decode(data, file, issues)
    if text is None:
        return _finish([], issues, display, fmt or "json", 0)
    if not text.strip():
        issues.append(Issue(file, None, None, "the file is empty"))
        return _finish([], issues, display, fmt or "json", 0)
    fmt = fmt or EXTENSIONS.get(Path(file).suffix.lower()) or _sniff_format(text)
    if fmt == "csv":
        records = _csv_records(text, file, issues)
    elif fmt == "jsonl":
        records = _jsonl_records(text.replace("\r\n", "\n"), file, issues)
    else:
        records = _json_records(text, file, issues)
    if records is None:
        return _finish([], issues, display, fmt, 0)
    samples, row_issues = read_records(records, file, text_cells=(fmt == "csv"))
    return _finish(samples, issues + row_issues, display, fmt, len(records))


def _row_dict(sample: Sample, naming: Naming) -> dict[str, Any]:
    names = RAGAS_NAMES if naming == "ragas" else {}
    row: dict[str, Any] = {"id": sample.id}
    row[names.get("question", "question")] = sample.question
    row[names.get("contexts", "contexts")] = list(sample.contexts)
    row[names.get("answer", "answer")] = sample.answer
    if sample.ground_truth is not None:
        row[names.get("ground_truth", "ground_truth")] = sample.ground_truth
    for key, value in sample.metadata.items():
        row.setdefault(key, value)
    return row


def _csv_cell(value: Any) -> Any:
    """Text and numbers as they are (the CSV writer neutralises formulas), anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        return value
    return json.dumps(value, ensure_ascii=False)


def dumps_dataset(samples: Sequence[Sample], fmt: Format = "json", *, naming: Naming = "seed") -> bytes:
    """Serialise samples (for a download button or ``save_dataset``).

    JSON and JSONL are UTF-8 without BOM; CSV is UTF-8 with BOM (so Excel reads Japanese), contexts as a
    JSON list string, non-text metadata as JSON.
    """
    rows = [_row_dict(s, naming) for s in samples]
    if fmt == "json":
        return (json.dumps(rows, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if fmt == "csv":
        columns: list[str] = []
        for r in rows:
            columns.extend(k for k in r if k not in columns)
        text = dumps_csv(([_csv_cell(r.get(c)) for c in columns] for r in rows), columns, lineterminator="\r\n")
        return text.encode("utf-8-sig")
    raise DatasetError(f"unknown dataset format {fmt!r}; use one of json, jsonl, csv")


def save_dataset(samples: Sequence[Sample], path: str | Path, *, naming: Naming = "seed") -> Path:
    """Write samples to ``path``; the format follows the extension (.json, .jsonl/.ndjson, .csv)."""
    target = Path(path)
    fmt = EXTENSIONS.get(target.suffix.lower())
    if fmt is None:
        raise DatasetError(f"cannot tell the format of {target.name}; use .json, .jsonl or .csv")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(dumps_dataset(samples, fmt, naming=naming))
    return target


# ------------------------------------------------------------------------------------------ tables (UI)
TABLE_COLUMNS: tuple[str, ...] = ("id", "question", "contexts", "answer", "ground_truth")


def contexts_to_cell(contexts: Sequence[str]) -> str:
    """One editable text cell for a list of contexts: items joined by `` ||| ``.

    Falls back to a JSON list when that would not read back the same (a context with a newline or
    ``|||``, or one that starts with ``[``), so a table round trip never splits a context.
    """
    items = list(contexts)
    ambiguous = any("\n" in c or CONTEXT_SEPARATOR in c or c != c.strip() for c in items)
    if ambiguous or (items and items[0].startswith("[")):
        return json.dumps(items, ensure_ascii=False)
    return f" {CONTEXT_SEPARATOR} ".join(items)


def samples_to_dataframe(samples: Sequence[Sample]) -> pd.DataFrame:
    """A table for ``st.data_editor``: core columns, contexts as one ``|||``-joined text cell, then metadata."""
    import pandas as pd

    rows = []
    for s in samples:
        row: dict[str, Any] = {
            "id": s.id,
            "question": s.question,
            "contexts": contexts_to_cell(s.contexts),
            "answer": s.answer,
            "ground_truth": s.ground_truth,
        }
        for key, value in s.metadata.items():
            row.setdefault(key, value)
        rows.append(row)
    columns = list(TABLE_COLUMNS)
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    return pd.DataFrame(rows, columns=columns)


def _table_records(df: pd.DataFrame) -> Iterator[dict[str, Any]]:
    columns = [str(c) for c in df.columns]
    for values in df.itertuples(index=False, name=None):
        yield dict(zip(columns, values))


def dataframe_to_samples(df: pd.DataFrame, name: str = "table") -> LoadedDataset:
    """Rows of an edited table back to samples, validated exactly like a file (issues name ``name``).

    Blank ids get ``row-N``; the contexts cell accepts what a CSV cell does (JSON list, ``|||``, lines).
    """
    records: list[Any] = []
    for raw in _table_records(df):
        record = _normalise_table_record(raw)
        blank = not any(not _is_missing(v) and str(v).strip() for v in record.values())
        records.append(_BLANK if blank else record)  # keeps row numbers equal to table positions
    samples, issues = read_records(records, name, text_cells=True)
    return _finish(samples, issues, name, "table", sum(r is not _BLANK for r in records))


def _normalise_table_record(record: dict[str, Any]) -> dict[str, Any]:
    """Table cells may be lists (a ListColumn) or numpy scalars; make them plain values."""
    import numpy as np

    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, np.ndarray):
            value = value.tolist()
        elif isinstance(value, np.generic):
            value = value.item()
        if key.strip().lower() in FIELD_ALIASES["contexts"] and isinstance(value, (list, tuple)):
            value = json.dumps([str(v) for v in value], ensure_ascii=False)
        out[key] = value
    return out


__all__ = [
    "CONTEXT_SEPARATOR",
    "FIELD_ALIASES",
    "DatasetError",
    "Issue",
    "LoadedDataset",
    "dataframe_to_samples",
    "dataset_hash",
    "detect_dataset_language",
    "dumps_dataset",
    "load_dataset",
    "parse_contexts_cell",
    "read_records",
    "sample_payload",
    "samples_to_dataframe",
    "save_dataset",
]
