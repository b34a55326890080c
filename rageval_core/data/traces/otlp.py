"""OTLP/JSON trace exports (format ``otel``): one ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``)
per file or per line (the collector's file exporter, JSON Lines), spans carrying OpenInference attributes.

Field names follow the OTLP/JSON encoding: lowerCamelCase, ``traceId`` / ``spanId`` as hex strings (or the base64
of protobuf's own JSON mapping, ``MessageToJson``, turned into hex), ``startTimeUnixNano`` as a decimal string,
attributes as ``[{"key", "value": {"stringValue": ...}}]``, ``status.code`` 0 unset / 1 ok / 2 error (or the enum
names). The span kind read is ``openinference.span.kind`` (else OpenLLMetry's, see ``traceloop``; the OTLP
``kind`` only says server / client / internal). The older ``instrumentationLibrarySpans`` name of ``scopeSpans``
is read too. The file arrives as leaves (``stream``): a request walked down to its spans, or decoded whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from rageval_core.data.traces.attributes import any_value, iso_ns, span_id
from rageval_core.data.traces.limits import BadValue, expected
from rageval_core.data.traces.model import TraceSpan
from rageval_core.data.traces.spans import ReadContext, make_span, malformed, path_text
from rageval_core.data.traces.stream import Leaf

_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR",
           "UNSET": "UNSET", "OK": "OK", "ERROR": "ERROR"}
SCOPES = ("scopeSpans", "instrumentationLibrarySpans")
KIND_KEYS = frozenset(("openinference.span.kind",))  # read whatever the map says


def is_otlp(doc: Any) -> bool:
    return isinstance(doc, dict) and "resourceSpans" in doc


def is_otlp_leaf(leaf: Leaf) -> bool:
    return (bool(leaf.path) and leaf.path[0] == "resourceSpans") or (not leaf.path and is_otlp(leaf.value))


def attributes(items: Any, keep: Callable[[str], bool] = lambda key: True) -> dict[str, Any]:
    """``[{"key", "value": AnyValue}]`` as a dict of the attributes ``keep`` names (and the span kind; the others
    are not decoded, so a bad value nobody reads costs nothing); ``ValueError`` naming the attribute at fault."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError(expected("attributes must be a list of {key, value}", items))
    out: dict[str, Any] = {}
    for n, kv in enumerate(items):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise ValueError(f"attributes[{n}] has no string key")
        if not (kv["key"] in KIND_KEYS or keep(kv["key"])):
            continue
        try:
            out[kv["key"]] = any_value(kv.get("value") or {})
        except ValueError as exc:
            raise ValueError(f"attribute {kv['key']!r}: {exc}") from None
    return out


def status_of(status: Any) -> tuple[str, str]:
    """``(status, message)`` of an OTLP ``status`` object (``code`` a number or an enum name)."""
    if status is None:
        return "UNSET", ""
    if not isinstance(status, dict):
        raise ValueError(expected("status must be an object with a code", status))
    code = status.get("code", 0)
    if not isinstance(code, (int, str)) or isinstance(code, bool) or code not in _STATUS:
        raise ValueError(expected("status.code must be 0, 1, 2 or a STATUS_CODE_* name", code))
    message = status.get("message")
    return _STATUS[code], message if isinstance(message, str) else ""


def read_span(raw: Any, ctx: ReadContext) -> TraceSpan:
    """One OTLP span as a ``TraceSpan``; ``ValueError`` naming the field at fault."""
    if not isinstance(raw, dict):
        raise ValueError(expected("a span must be an object", raw))
    trace, span = span_id(raw.get("traceId"), "traceId", 16), span_id(raw.get("spanId"), "spanId", 8)
    parent = raw.get("parentSpanId")
    parent = span_id(parent, "parentSpanId", 8) if parent not in (None, "") else None
    attrs = attributes(raw.get("attributes"), ctx.keep)
    status, message = status_of(raw.get("status"))
    try:
        start, end = iso_ns(raw.get("startTimeUnixNano")), iso_ns(raw.get("endTimeUnixNano"))
    except ValueError as exc:
        raise ValueError(f"start/endTimeUnixNano: {exc}") from None
    kind = attrs.get("openinference.span.kind") or "UNKNOWN"
    return make_span(ctx, trace, span, parent, raw.get("name"), kind, start, end, status, message, attrs)


class OtlpReader:
    """Spans of OTLP leaves: a span, a request or part of one (whatever the stream did not walk into)."""

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx

    def read(self, leaf: Leaf) -> Iterator[TraceSpan]:
        path, value = leaf.path, leaf.value
        if not path:
            if not is_otlp(value):
                self.ctx.problem(leaf.prefix.rstrip(", ") or "top level",
                                 "not an OTLP trace export (no resourceSpans)" if not isinstance(value, BadValue) else value.reason)
                return
            yield from self._list(leaf, ("resourceSpans",), value["resourceSpans"], self._resource)
            return
        last = path[-1]
        parent = path[-2] if len(path) > 1 else None
        if isinstance(last, int) and parent == "spans":
            yield from self._span(leaf, path, value)
        elif isinstance(last, int) and parent in SCOPES:
            yield from self._scope(leaf, path, value)
        elif isinstance(last, int) and parent == "resourceSpans":
            yield from self._resource(leaf, path, value)
        elif last == "resourceSpans" and len(path) == 1:
            yield from self._list(leaf, path, value, self._resource)
        elif last in SCOPES and len(path) == 3:
            yield from self._list(leaf, path, value, self._scope)
        elif last == "spans" and len(path) == 5:
            yield from self._list(leaf, path, value, self._span)
        elif path[0] != "resourceSpans":
            self.ctx.foreign(leaf, "not an OTLP trace export (no resourceSpans)")

    def finish(self) -> Iterator[TraceSpan]:
        return iter(())

    def _list(self, leaf: Leaf, path: tuple, value: Any, each: Any) -> Iterator[TraceSpan]:
        if value is None:
            return
        if not isinstance(value, list):
            self.ctx.problem(self._where(leaf, path), expected("must be a list", value))
            return
        for n, item in enumerate(value):
            yield from each(leaf, (*path, n), item)

    def _resource(self, leaf: Leaf, path: tuple, value: Any) -> Iterator[TraceSpan]:
        if not isinstance(value, dict):
            self.ctx.problem(self._where(leaf, path), expected("a resource span must be an object with scopeSpans", value))
            return
        for key in SCOPES:
            if key in value:
                yield from self._list(leaf, (*path, key), value[key], self._scope)

    def _scope(self, leaf: Leaf, path: tuple, value: Any) -> Iterator[TraceSpan]:
        if not isinstance(value, dict):
            self.ctx.problem(self._where(leaf, path), expected("a scope span must be an object with spans", value))
            return
        yield from self._list(leaf, (*path, "spans"), value.get("spans"), self._span)

    def _span(self, leaf: Leaf, path: tuple, raw: Any) -> Iterator[TraceSpan]:
        try:
            yield read_span(raw, self.ctx)
        except ValueError as exc:
            label = self._where(leaf, path)
            if isinstance(raw, dict) and isinstance(raw.get("spanId"), str) and raw["spanId"]:
                label = f"{leaf.prefix}span {raw['spanId']}" + (f" ({raw['name']})" if isinstance(raw.get("name"), str) and raw["name"] else "")
            self.ctx.problem(label, str(exc))
            placeholder = malformed(raw.get("traceId") if isinstance(raw, dict) else None, label)
            if placeholder is not None:
                try:
                    placeholder.trace_id = span_id(placeholder.trace_id, "traceId", 16)
                except ValueError:
                    return
                yield placeholder

    @staticmethod
    def _where(leaf: Leaf, path: tuple) -> str:
        return (leaf.prefix + path_text(path)).rstrip(", ") or "top level"
