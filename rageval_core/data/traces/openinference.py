"""OpenInference span objects (format ``openinference``): JSON Lines, one span a line, as Phoenix's span JSON
encoder writes them (``spans_to_jsonl``): ``name``, ``context: {trace_id, span_id}``, ``parent_id``,
``span_kind``, ``start_time`` / ``end_time`` (ISO 8601), ``status_code``, ``status_message`` and
``attributes``, nested (``{"input": {"value": ...}}``) or already flat (``"input.value"``). The Phoenix
reader (``phoenix``) builds on ``span_from_dict``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rageval_core.data.traces.attributes import flatten, iso_ns
from rageval_core.data.traces.model import TraceIssue, TraceSpan


def is_span_dict(doc: Any) -> bool:
    """An OpenInference / Phoenix span object: a ``context`` with ``span_id`` and a ``span_kind`` or ``name``."""
    return isinstance(doc, Mapping) and isinstance(doc.get("context"), Mapping) and "span_id" in doc["context"]


def span_label(doc: Any, fallback: str) -> str:
    """How a message names a span: ``span 9f2c (retrieve)``, or ``fallback`` when it has no id."""
    if isinstance(doc, Mapping) and isinstance(doc.get("context"), Mapping) and doc["context"].get("span_id"):
        return f"span {doc['context']['span_id']}" + (f" ({doc['name']})" if doc.get("name") else "")
    return fallback


def span_from_dict(doc: Any, where: str) -> TraceSpan:
    """One span object as a ``TraceSpan``; ``ValueError`` naming the missing or bad field."""
    if not isinstance(doc, Mapping):
        raise ValueError("a span must be an object")
    context = doc.get("context")
    if not isinstance(context, Mapping):
        raise ValueError("no context object (with trace_id and span_id)")
    trace_id, span_id = context.get("trace_id"), context.get("span_id")
    if not trace_id or not isinstance(trace_id, str):
        raise ValueError("context.trace_id missing")
    if not span_id or not isinstance(span_id, str):
        raise ValueError("context.span_id missing")
    attrs = doc.get("attributes") or {}
    if not isinstance(attrs, Mapping):
        raise ValueError("attributes must be an object")
    attrs = flatten(attrs)
    try:
        start, end = iso_ns(doc.get("start_time")), iso_ns(doc.get("end_time"))
    except ValueError as exc:
        raise ValueError(f"start_time / end_time: {exc}") from None
    kind = doc.get("span_kind") or attrs.get("openinference.span.kind") or "UNKNOWN"
    return TraceSpan(
        trace_id=trace_id.lower(),
        span_id=span_id.lower(),
        parent_id=str(doc["parent_id"]).lower() if doc.get("parent_id") else None,
        name=str(doc.get("name") or ""),
        kind=str(kind).upper(),
        start_ns=start,
        end_ns=end,
        status=str(doc.get("status_code") or "UNSET").upper(),
        status_message=str(doc.get("status_message") or ""),
        attributes=attrs,
        where=where,
    )


def read_span_dicts(docs: Iterable[tuple[str, Any]], file: str, issues: list[TraceIssue]) -> list[TraceSpan]:
    """Spans of ``(where, span object)`` pairs; an unreadable span is a ``TraceIssue`` and a ``MALFORMED``
    placeholder (when its trace id is known) so its trace is skipped, never half-read."""
    spans: list[TraceSpan] = []
    for where, doc in docs:
        label = span_label(doc, where)
        if label != where and where:
            label = f"{where}, {label}"
        try:
            spans.append(span_from_dict(doc, label))
        except ValueError as exc:
            issues.append(TraceIssue(file, label, str(exc)))
            context = doc.get("context") if isinstance(doc, Mapping) else None
            trace_id = context.get("trace_id") if isinstance(context, Mapping) else None
            if isinstance(trace_id, str) and trace_id:
                spans.append(TraceSpan(trace_id.lower(), label, None, "", "MALFORMED", None, None, where=label))
    return spans
