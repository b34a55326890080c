"""Arize Phoenix span exports (format ``phoenix``): the REST API's span list (``GET /v1/projects/{id}/spans``:
``{"data": [span, ...], "next_cursor": ...}``, attributes flat, ``openinference.span.kind`` moved to
``span_kind``), several such pages in one JSON array or one a line, or the spans dataframe written as JSON
records (``get_spans_dataframe().to_json(orient="records")``: columns ``context.trace_id``,
``context.span_id``, ``span_kind``, ``attributes.input.value``, ``attributes.retrieval.documents`` ...; times
in epoch milliseconds, pandas' default, or ISO 8601 with ``date_format="iso"``), and the span search in OTLP shape
(``GET /v1/projects/{id}/spans/otlpv1``: ``{"data": [...]}`` of snake_case OTLP spans, ``trace_id`` / ``span_id`` /
``parent_span_id`` in hex, ``start_time_unix_nano`` numbers, attributes ``[{"key", "value": {"string_value": ...}}]``
with every other ``*_value`` null), read as OTLP.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rageval_core.data.traces.limits import BadValue, expected
from rageval_core.data.traces.model import TraceSpan
from rageval_core.data.traces.openinference import is_span_dict, read_span_dict
from rageval_core.data.traces.otlp import read_span
from rageval_core.data.traces.spans import ReadContext, malformed, where
from rageval_core.data.traces.stream import Leaf


def is_otlpv1_span(doc: Any) -> bool:
    """A span of Phoenix's otlpv1 search: snake_case OTLP (``span_id``, ``trace_id``, ``start_time_unix_nano``)."""
    return isinstance(doc, dict) and "span_id" in doc and "trace_id" in doc and "start_time_unix_nano" in doc


def is_rest_page(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("data"), list) and all(
        is_span_dict(d) or is_otlpv1_span(d) for d in doc["data"][:5])


def otlpv1_span(doc: Mapping[str, Any]) -> dict[str, Any]:
    """An otlpv1 span in OTLP/JSON's own names, for ``otlp.read_span``."""
    names = {"trace_id": "traceId", "span_id": "spanId", "parent_span_id": "parentSpanId", "name": "name",
             "start_time_unix_nano": "startTimeUnixNano", "end_time_unix_nano": "endTimeUnixNano",
             "attributes": "attributes", "status": "status"}
    return {new: doc[old] for old, new in names.items() if old in doc}


def is_dataframe_record(doc: Any) -> bool:
    return isinstance(doc, dict) and "context.span_id" in doc


def is_phoenix_leaf(leaf: Leaf) -> bool:
    if leaf.path[:1] == ("data",) and len(leaf.path) == 2:
        return is_span_dict(leaf.value) or is_dataframe_record(leaf.value) or is_otlpv1_span(leaf.value)
    return not leaf.path and (is_rest_page(leaf.value) or is_dataframe_record(leaf.value))


def record_to_span(record: Mapping[str, Any]) -> dict[str, Any]:
    """A dataframe record (dotted column names) as a span object (``context`` and ``attributes`` rebuilt)."""
    out: dict[str, Any] = {"context": {}, "attributes": {}}
    for key, value in record.items():
        if not isinstance(key, str):
            continue
        if key.startswith("context."):
            out["context"][key[len("context."):]] = value
        elif key.startswith("attributes."):
            if value is not None:
                out["attributes"][key[len("attributes."):]] = value
        elif key in ("start_time", "end_time") and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = int(value * 1_000_000) if abs(value) < 1e15 else value  # to_json writes epoch milliseconds
        else:
            out[key] = value
    return out


class PhoenixReader:
    """Spans of REST pages (walked item by item or whole), dataframe records and span objects."""

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx

    def read(self, leaf: Leaf) -> Iterator[TraceSpan]:
        path, value = leaf.path, leaf.value
        if path == ("data",):
            if not isinstance(value, list):
                self.ctx.problem(where(leaf), expected("must be a list of spans", value))
            return
        if len(path) == 2 and path[0] == "data":
            yield from self._item(leaf, value)
        elif path and path[0] != "data":
            self.ctx.foreign(leaf, "not a Phoenix span export (no data list of spans, no context.span_id column)")
        elif not path and is_rest_page(value):
            for n, span in enumerate(value["data"]):
                yield from self._item(Leaf(leaf.prefix, ("data", n), span), span)
        elif not path:
            if is_dataframe_record(value) or is_span_dict(value):
                yield from self._item(leaf, value)
            else:
                self.ctx.problem(where(leaf), value.reason if isinstance(value, BadValue) else
                                 "not a Phoenix span export (no data list of spans, no context.span_id column)")

    def _item(self, leaf: Leaf, value: Any) -> Iterator[TraceSpan]:
        if is_otlpv1_span(value):
            raw = otlpv1_span(value)
            label = f"{where(leaf)}, span {raw['spanId']}" if isinstance(raw.get("spanId"), str) else where(leaf)
            try:
                yield read_span(raw, self.ctx)
            except ValueError as exc:
                self.ctx.problem(label, str(exc))
                placeholder = malformed(raw.get("traceId"), label)
                if placeholder is not None:
                    yield placeholder
            return
        doc = record_to_span(value) if is_dataframe_record(value) else value
        yield from read_span_dict(doc, leaf, self.ctx)

    def finish(self) -> Iterator[TraceSpan]:
        return iter(())
