"""OTLP/JSON trace exports (format ``otel``): one ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``)
per file or per line (the collector's file exporter, JSON Lines), spans carrying OpenInference attributes.

Field names follow the OTLP/JSON encoding: lowerCamelCase, ``traceId`` / ``spanId`` as hex strings,
``startTimeUnixNano`` as a decimal string, attributes as ``[{"key", "value": {"stringValue": ...}}]``,
``status.code`` 0 unset / 1 ok / 2 error (or the enum names). The span kind read is
``openinference.span.kind`` (the OTLP ``kind`` only says server / client / internal). The older
``instrumentationLibrarySpans`` name of ``scopeSpans`` is read too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rageval_core.data.traces.attributes import any_value, iso_ns
from rageval_core.data.traces.model import TraceIssue, TraceSpan

_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}


def is_otlp(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "resourceSpans" in doc


def _attributes(items: Any, where: str) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError("attributes must be a list of {key, value}")
    out: dict[str, Any] = {}
    for n, kv in enumerate(items):
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise ValueError(f"attributes[{n}] has no string key")
        try:
            out[kv["key"]] = any_value(kv.get("value", {}))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"attribute {kv['key']!r}: {exc}") from None
    return out


def _span(raw: Any, where: str) -> TraceSpan:
    if not isinstance(raw, Mapping):
        raise ValueError("a span must be an object")
    trace_id, span_id = raw.get("traceId"), raw.get("spanId")
    if not trace_id or not isinstance(trace_id, str):
        raise ValueError("no traceId")
    if not span_id or not isinstance(span_id, str):
        raise ValueError("no spanId")
    attrs = _attributes(raw.get("attributes"), where)
    status = raw.get("status") or {}
    code = status.get("code", 0) if isinstance(status, Mapping) else 0
    try:
        start, end = iso_ns(raw.get("startTimeUnixNano")), iso_ns(raw.get("endTimeUnixNano"))
    except ValueError as exc:
        raise ValueError(f"start/endTimeUnixNano: {exc}") from None
    return TraceSpan(
        trace_id=trace_id.lower(),
        span_id=span_id.lower(),
        parent_id=(raw.get("parentSpanId") or None) and str(raw["parentSpanId"]).lower(),
        name=str(raw.get("name") or ""),
        kind=str(attrs.get("openinference.span.kind") or "UNKNOWN").upper(),
        start_ns=start,
        end_ns=end,
        status=_STATUS.get(code, "UNSET"),
        status_message=str(status.get("message") or "") if isinstance(status, Mapping) else "",
        attributes=attrs,
        where=where,
    )


def request_spans(doc: Mapping[str, Any], file: str, where: str, issues: list[TraceIssue]) -> Iterable[TraceSpan]:
    """The spans of one ``ExportTraceServiceRequest``; a span that cannot be read becomes a ``TraceIssue``
    (naming its id and name) and a ``TraceSpan`` of kind ``MALFORMED`` so its trace is skipped, not guessed."""
    for r, resource in enumerate(doc.get("resourceSpans") or []):
        scopes = (resource or {}).get("scopeSpans") or (resource or {}).get("instrumentationLibrarySpans") or []
        for s, scope in enumerate(scopes):
            for k, raw in enumerate((scope or {}).get("spans") or []):
                label = f"{where}resourceSpans[{r}].scopeSpans[{s}].spans[{k}]"
                if isinstance(raw, Mapping) and raw.get("spanId"):
                    label = f"{where}span {raw.get('spanId')}" + (f" ({raw['name']})" if raw.get("name") else "")
                try:
                    yield _span(raw, label)
                except ValueError as exc:
                    issues.append(TraceIssue(file, label, str(exc)))
                    trace_id = raw.get("traceId") if isinstance(raw, Mapping) else None
                    if isinstance(trace_id, str) and trace_id:
                        yield TraceSpan(trace_id.lower(), str(raw.get("spanId") or k), None, "", "MALFORMED", None, None, where=label)


def read_otlp(docs: Iterable[tuple[str, Any]], file: str, issues: list[TraceIssue]) -> list[TraceSpan]:
    """Spans of ``(where, document)`` pairs (one document per line for JSON Lines, ``where`` = ``line N, ``)."""
    spans: list[TraceSpan] = []
    for where, doc in docs:
        if not is_otlp(doc):
            issues.append(TraceIssue(file, where.rstrip(", ") or "top level", "not an OTLP trace export (no resourceSpans)"))
            continue
        spans.extend(request_spans(doc, file, where, issues))
    return spans
