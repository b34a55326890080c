"""Text to raw records, one reader per format (JSON, JSONL, CSV) plus format sniffing. Readers report
file-level problems as issues and unparseable rows as ``BadRecord``; they never raise."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rageval_core.core.csvsafe import restore_cell
from rageval_core.data.datasets.column_map import ColumnMap
from rageval_core.data.datasets.model import MAX_DEPTH, MAX_FILE_BYTES, Format, Issue
from rageval_core.data.datasets.values import BadRecord, json_value
from rageval_core.core.messages import say

# The seed's names, then ragas's, DeepEval's (input, retrieval_context, actual_output, expected_output) and Phoenix's
# helper frames' (input, output, context); ``context`` names the contexts only when no other contexts column is there
# (DeepEval's is its ideal context: ``rowkeys.alias_index``).
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "sample_id"),
    "question": ("question", "user_input", "query", "input"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context", "context"),
    "answer": ("answer", "response", "actual_output", "output"),
    "ground_truth": ("ground_truth", "reference", "ground_truths", "expected_output"),
}
# Keys under which a JSON object may hold its list of rows.
WRAPPER_KEYS: tuple[str, ...] = ("rows", "data", "samples", "items", "records", "examples", "dataset")
EXTENSIONS: dict[str, Format] = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def sniff_format(text: str) -> Format:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        first_line = stripped.split("\n", 1)[0].strip()
        try:
            json.loads(first_line)
        except (ValueError, RecursionError):
            return "json"
        rest = stripped.split("\n", 1)[1].strip() if "\n" in stripped else ""
        return "jsonl" if rest.startswith("{") else "json"
    return "csv"


def _parse_json(text: str) -> tuple[Any, str | None]:
    """(value, None) or (None, what is wrong): invalid JSON, nesting past the stack, numbers too long."""
    try:
        return json_value(text), None
    except json.JSONDecodeError as exc:
        return None, say("json.invalid_at", line=exc.lineno, column=exc.colno, error=exc.msg)
    except RecursionError:
        return None, say("json.too_deep", depth=MAX_DEPTH)
    except ValueError as exc:  # e.g. an integer literal over Python's 4300-digit limit
        return None, say("json.invalid", error=str(exc).split(";")[0])


def json_records(text: str, file: str, issues: list[Issue]) -> list[Any] | None:
    data, problem = _parse_json(text)
    if problem:
        issues.append(Issue(file, None, None, problem))
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
            Issue(file, None, None, say("json.no_rows", keys=", ".join(WRAPPER_KEYS[:3])))
        )
        return None
    issues.append(Issue(file, None, None, say("json.top_level", kind=_kind(data))))
    return None


def _kind(value: Any) -> str:
    names = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null", dict: "object", list: "list"}
    return names.get(type(value), type(value).__name__)


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


def jsonl_records(text: str, file: str, issues: list[Issue]) -> list[Any]:
    return list(iter_jsonl(text.split("\n")))


def iter_jsonl(lines: Iterable[str]) -> Iterator[Any]:
    """One record per non-blank line (a ``BadRecord`` naming the line when it is not JSON), read lazily so a
    file can be read row by row."""
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        value, problem = _parse_json(line)
        yield BadRecord(say("json.line", line=lineno, problem=problem)) if problem else value


def csv_delimiter(first_line: str) -> str:
    """Comma, or tab / semicolon (Excel's "Unicode text" and European-locale CSV) when the header has no comma."""
    if "," in first_line:
        return ","
    for candidate in ("\t", ";"):
        if candidate in first_line:
            return candidate
    return ","


# Control flow, outside the RagevalError tree on purpose: the file-level problem is already recorded as an
# ``Issue`` when it is raised, and ``csv_records`` / the loaders catch it. tests/core/test_error_tree.py lists it.
class CsvAbort(Exception):
    """Raised by ``iter_csv`` after it recorded a file-level error: nothing of the file may load."""


def csv_records(text: str, file: str, issues: list[Issue], column_map: ColumnMap | None = None) -> list[Any] | None:
    """Rows of a CSV with a header (see ``iter_csv``); None when the file cannot be read (the issue says why)."""
    try:
        return list(iter_csv(text.split("\n", 1)[0], io.StringIO(text, newline=""), file, issues, column_map))
    except CsvAbort:
        return None


def iter_csv(
    first_line: str, lines: Iterable[str], file: str, issues: list[Issue], column_map: ColumnMap | None = None
) -> Iterator[Any]:
    """Records of a CSV with a header, read lazily from ``lines`` (the whole text, first line included).

    Quoting is read strictly: an unterminated quote (which would swallow every later line into one cell) or
    text after a closing quote stops the read with the row and line, as does a header without a question
    column; then the issue is recorded and ``CsvAbort`` raised, so the caller loads nothing."""
    csv.field_size_limit(max(csv.field_size_limit(), MAX_FILE_BYTES))  # one big context cell is legitimate
    delimiter = csv_delimiter(first_line)
    if delimiter == ";":
        issues.append(Issue(file, None, None, say("csv.semicolons"), "warning"))
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    header: list[str] | None = None
    seen = 0  # non-blank CSV rows read, the header included
    while True:
        start_line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            where = say("csv.data_row", row=seen, line=start_line) if seen else say("csv.header_line", line=start_line)
            hint = say("csv.open_quote") if "end of data" in str(exc) else say("csv.bad_quoting", error=exc)
            issues.append(Issue(file, None, None, say("csv.quotes", where=where, hint=hint)))
            raise CsvAbort from None
        if not any(cell.strip() for cell in cells):
            continue
        seen += 1
        if header is None:
            header = _csv_header(cells, file, issues, column_map)
            continue
        yield _csv_record(header, cells, seen - 1, file, issues)
    if header is None:
        issues.append(Issue(file, None, None, say("csv.no_header")))
        raise CsvAbort


def _csv_header(cells: list[str], file: str, issues: list[Issue], column_map: ColumnMap | None = None) -> list[str]:
    header = [restore_cell(h.strip()) for h in cells]
    dupes = sorted({h for h in header if h and header.count(h) > 1})
    if dupes:
        issues.append(Issue(file, None, dupes[0], say("csv.duplicate_column", column=repr(dupes[0])), "warning"))
    lowered = {h.lower() for h in header}
    shown = ", ".join(repr(h) for h in header[:8]) + (" …" if len(header) > 8 else "")
    mapped = column_map.columns.get("question") if column_map else None
    if mapped is not None:
        if mapped.strip().lower() not in lowered:
            issues.append(Issue(file, None, "question", say("csv.no_mapped_question", column=repr(mapped), header=shown)))
            raise CsvAbort
    elif not lowered & set(FIELD_ALIASES["question"]):
        issues.append(Issue(file, None, "question", say("csv.no_question", header=shown)))
        raise CsvAbort
    return header


def _csv_record(header: list[str], cells: list[str], row: int, file: str, issues: list[Issue]) -> Any:
    if len(cells) > len(header):
        return BadRecord(say("csv.too_many_cells", cells=len(cells), columns=len(header)))
    record: dict[str, Any] = {h: restore_cell(c) for h, c in zip(header, cells) if h}  # undo the export's formula guard
    # pandas' to_csv writes the frame's index first, under an empty name: row numbers, not data
    unnamed = [i + 1 for i, (h, c) in enumerate(zip(header, cells)) if not h and c.strip() and not (i == 0 and c.isdigit())]
    if unnamed:
        issues.append(Issue(file, row, None, say("csv.unnamed_column", column=unnamed[0]), "warning"))
    if len(cells) < len(header):
        issues.append(Issue(file, row, None, say("csv.too_few_cells", cells=len(cells), columns=len(header)), "warning"))
    return record
