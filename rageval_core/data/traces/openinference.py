"""OpenInference span objects (format ``openinference``): JSON Lines, one span a line, as Phoenix's span JSON
encoder writes them (``spans_to_jsonl``): ``name``, ``context: {trace_id, span_id}``, ``parent_id``,
``span_kind``, ``start_time`` / ``end_time`` (ISO 8601), ``status_code``, ``status_message`` and
``attributes``, nested (``{"input": {"value": ...}}``) or already flat (``"input.value"``). The OpenTelemetry
SDK's ``ReadableSpan.to_json()`` has the same shape with ``0x`` ids and the status nested
(``"status": {"status_code": "ERROR", "description": ...}``). The Phoenix reader (``phoenix``) builds on
``span_from_dict``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rageval_core.data.traces.attributes import flatten, iso_ns, span_id
from rageval_core.data.traces.limits import BadValue, expected
from rageval_core.data.traces.model import TraceSpan
from rageval_core.data.traces.spans import ReadContext, make_span, malformed, where
from rageval_core.data.traces.stream import Leaf

_STATUS = {"UNSET": "UNSET", "OK": "OK", "ERROR": "ERROR", "STATUSCODE.UNSET": "UNSET", "STATUSCODE.OK": "OK",
           "STATUSCODE.ERROR": "ERROR", "STATUS_CODE_ERROR": "ERROR", "STATUS_CODE_OK": "OK", "STATUS_CODE_UNSET": "UNSET"}


def is_span_dict(doc: Any) -> bool:
    """An OpenInference / Phoenix span object: a ``context`` with ``span_id`` and a ``span_kind`` or ``name``."""
    return isinstance(doc, dict) and isinstance(doc.get("context"), dict) and "span_id" in doc["context"]


def span_label(doc: Any, fallback: str) -> str:
    """How a message names a span: ``span 9f2c (retrieve)``, or ``fallback`` when it has no id."""
    if isinstance(doc, dict) and isinstance(doc.get("context"), dict) and isinstance(doc["context"].get("span_id"), str) \
            and doc["context"]["span_id"]:
        name = doc.get("name")
        return f"span {doc['context']['span_id']}" + (f" ({name})" if isinstance(name, str) and name else "")
    return fallback


def _status(doc: Mapping[str, Any]) -> tuple[str, str]:
    """The status of a span object: flat (``status_code``, ``status_message``) or the SDK's nested one."""
    code, message = doc.get("status_code"), doc.get("status_message")
    nested = doc.get("status")
    if code is None and nested is not None:
        if not isinstance(nested, dict):
            raise ValueError(expected("status must be an object with a status_code", nested))
        code, message = nested.get("status_code", nested.get("code")), nested.get("description", nested.get("message"))
    if code is None or code == "":
        return "UNSET", message if isinstance(message, str) else ""
    if not isinstance(code, str) or code.upper() not in _STATUS:
        raise ValueError(expected("status_code must be UNSET, OK or ERROR", code) if not isinstance(code, str)
                         else f"status_code must be UNSET, OK or ERROR, got {code[:24]!r}")
    return _STATUS[code.upper()], message if isinstance(message, str) else ""


def span_from_dict(doc: Any, ctx: ReadContext) -> TraceSpan:
    """One span object as a ``TraceSpan``; ``ValueError`` naming the missing or bad field."""
    if isinstance(doc, BadValue):
        raise ValueError(doc.reason)
    if not isinstance(doc, dict):
        raise ValueError(expected("a span must be an object", doc))
    context = doc.get("context")
    if not isinstance(context, dict):
        raise ValueError("no context object (with trace_id and span_id)")
    trace, span = span_id(context.get("trace_id"), "context.trace_id", 16), span_id(context.get("span_id"), "context.span_id", 8)
    parent = doc.get("parent_id")
    parent = span_id(parent, "parent_id", 8) if parent not in (None, "") else None
    attrs = doc.get("attributes") or {}
    if isinstance(attrs, BadValue):
        raise ValueError(f"attributes: {attrs.reason}")
    if not isinstance(attrs, dict):
        raise ValueError(expected("attributes must be an object", attrs))
    try:
        attrs = flatten(attrs)
    except ValueError as exc:
        raise ValueError(f"attributes: {exc}") from None
    try:
        start, end = iso_ns(doc.get("start_time")), iso_ns(doc.get("end_time"))
    except ValueError as exc:
        raise ValueError(f"start_time / end_time: {exc}") from None
    status, message = _status(doc)
    kind = doc.get("span_kind") or attrs.get("openinference.span.kind") or "UNKNOWN"
    if not isinstance(kind, str):
        raise ValueError(expected("span_kind must be a string", kind))
    return make_span(ctx, trace, span, parent, doc.get("name"), kind, start, end, status, message, attrs)


def read_span_dict(doc: Any, leaf: Leaf, ctx: ReadContext) -> Iterator[TraceSpan]:
    """The span of one span object; an unreadable one is a problem naming it (``leaf_label``) and a ``MALFORMED``
    placeholder (when its trace id is known) so its trace is skipped, never half-read."""
    try:
        yield span_from_dict(doc, ctx)
    except ValueError as exc:
        label = leaf_label(leaf, doc)
        ctx.problem(label, str(exc))
        context = doc.get("context") if isinstance(doc, dict) else None
        trace = context.get("trace_id") if isinstance(context, dict) else None
        try:
            trace = span_id(trace, "trace_id", 16)
        except ValueError:
            return
        placeholder = malformed(trace, label)
        if placeholder is not None:
            yield placeholder


def leaf_label(leaf: Leaf, doc: Any) -> str:
    """``line 2, span 9f2c (retrieve)``: the leaf's place and the span's id and name."""
    place = where(leaf)
    label = span_label(doc, place)
    return f"{place}, {label}" if label != place and place != "top level" else label


class SpanDictReader:
    """Spans of span-object leaves (one a line, or the items of a top-level array)."""

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx

    def read(self, leaf: Leaf) -> Iterator[TraceSpan]:
        if leaf.path:
            self.ctx.foreign(leaf, "not OpenInference span objects (one a line, or a JSON array of them)")
            return
        yield from read_span_dict(leaf.value, leaf, self.ctx)

    def finish(self) -> Iterator[TraceSpan]:
        return iter(())
