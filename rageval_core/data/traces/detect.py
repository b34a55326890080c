"""Reading an export file: bytes → JSON documents (one JSON document, or JSON Lines naming each bad line),
then which format they are (``detect_format``) and the reader that turns them into spans."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rageval_core.data.datasets.model import MAX_FILE_BYTES
from rageval_core.data.traces import langfuse, openinference, otlp, phoenix
from rageval_core.data.traces.model import FORMATS, TraceFormatError, TraceIssue, TraceSpan

Reader = Callable[[list[tuple[str, Any]], str, list[TraceIssue]], list[TraceSpan]]
READERS: dict[str, Reader] = {
    "otel": otlp.read_otlp,
    "openinference": openinference.read_span_dicts,
    "phoenix": phoenix.read_phoenix,
    "langfuse": langfuse.read_langfuse,
}


def documents(data: bytes, file: str, issues: list[TraceIssue]) -> list[tuple[str, Any]]:
    """``(where, document)`` pairs: the items of a top-level JSON array (``item N, ``), one whole JSON document,
    or one per line of JSON Lines (``line N, ``; a line that is not JSON is a ``TraceIssue`` naming it)."""
    if len(data) > MAX_FILE_BYTES:
        raise TraceFormatError(f"{file}: {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for a trace export")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"{file}: not UTF-8 text (byte {exc.start}); trace exports are JSON") from None
    if not text.strip():
        raise TraceFormatError(f"{file}: the file is empty")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as whole_exc:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2 or not _is_json(lines[0][1]):
            raise TraceFormatError(f"{file}: not JSON (line {whole_exc.lineno}, column {whole_exc.colno}: {whole_exc.msg})") from None
        return _json_lines(lines, file, issues)
    if isinstance(whole, list):
        return [(f"item {n + 1}, ", item) for n, item in enumerate(whole)]
    return [("", whole)]


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _json_lines(lines: list[tuple[int, str]], file: str, issues: list[TraceIssue]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for n, line in lines:
        try:
            out.append((f"line {n}, ", json.loads(line)))
        except ValueError as exc:
            issues.append(TraceIssue(file, f"line {n}", f"not JSON (column {exc.colno}: {exc.msg})"))
    return out


def detect_format(docs: list[tuple[str, Any]], file: str) -> str:
    """The format of the first document that is recognisable; ``TraceFormatError`` when none is."""
    for _, doc in docs[:20]:
        if otlp.is_otlp(doc):
            return "otel"
        if phoenix.is_rest_page(doc) or phoenix.is_dataframe_record(doc):
            return "phoenix"
        if openinference.is_span_dict(doc):
            return "openinference"
        if langfuse.is_page(doc) or langfuse.is_trace(doc) or langfuse.is_observation(doc):
            return "langfuse"
    raise TraceFormatError(
        f"{file}: not a trace export this reads (OTLP JSON with resourceSpans, OpenInference / Phoenix spans with "
        f"context.span_id, Langfuse traces or observations); pass --format {{{','.join(FORMATS)}}} to say which"
    )
