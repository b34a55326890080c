"""Arize Phoenix span exports (format ``phoenix``): the REST API's span list (``GET /v1/projects/{id}/spans``:
``{"data": [span, ...], "next_cursor": ...}``, attributes flat, ``openinference.span.kind`` moved to
``span_kind``), several such pages in one JSON array or one a line, or the spans dataframe written as JSON
records (``get_spans_dataframe().to_json(orient="records")``: columns ``context.trace_id``,
``context.span_id``, ``span_kind``, ``attributes.input.value``, ``attributes.retrieval.documents`` ...; times
in epoch milliseconds, pandas' default, or ISO 8601 with ``date_format="iso"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rageval_core.data.traces.openinference import is_span_dict, read_span_dicts
from rageval_core.data.traces.model import TraceIssue, TraceSpan


def is_rest_page(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("data"), list) and all(is_span_dict(d) for d in doc["data"][:5])


def is_dataframe_record(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "context.span_id" in doc


def record_to_span(record: Mapping[str, Any]) -> dict[str, Any]:
    """A dataframe record (dotted column names) as a span object (``context`` and ``attributes`` rebuilt)."""
    out: dict[str, Any] = {"context": {}, "attributes": {}}
    for key, value in record.items():
        if key.startswith("context."):
            out["context"][key[len("context."):]] = value
        elif key.startswith("attributes."):
            if value is not None:
                out["attributes"][key[len("attributes."):]] = value
        elif key in ("start_time", "end_time") and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = int(value * 1_000_000)  # to_json writes datetimes as epoch milliseconds
        else:
            out[key] = value
    return out


def read_phoenix(docs: Iterable[tuple[str, Any]], file: str, issues: list[TraceIssue]) -> list[TraceSpan]:
    """Spans of REST pages or dataframe records, each ``(where, document)``."""
    pairs: list[tuple[str, Any]] = []
    for where, doc in docs:
        if is_rest_page(doc):
            pairs.extend((f"{where}data[{n}]", span) for n, span in enumerate(doc["data"]))
        elif is_dataframe_record(doc):
            pairs.append((where.rstrip(", "), record_to_span(doc)))
        elif is_span_dict(doc):
            pairs.append((where.rstrip(", "), doc))
        else:
            issues.append(TraceIssue(file, where.rstrip(", ") or "top level",
                                     "not a Phoenix span export (no data list of spans, no context.span_id column)"))
    return read_span_dicts(pairs, file, issues)
