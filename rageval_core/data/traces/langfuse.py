"""Langfuse exports (format ``langfuse``): traces as the public API returns them (``GET /api/public/traces/{id}``,
``TraceWithFullDetails``: ``id``, ``timestamp``, ``name``, ``input``, ``output``, ``sessionId``, ``userId``,
``latency`` in seconds, ``htmlPath``, ``observations`` as objects), the list endpoints' pages
(``{"data": [...], "meta": {...}}``) of traces or of observations (``GET /api/public/observations``: ``id``,
``traceId``, ``type``, ``name``, ``startTime``, ``endTime``, ``input``, ``output``, ``parentObservationId``,
``level``, ``statusMessage``), a JSON array of either, or one a line.

Observations become OpenInference spans: ``GENERATION`` → ``LLM`` (input messages and output as
``llm.input_messages`` / ``llm.output_messages``), ``RETRIEVER`` → ``RETRIEVER`` (its output's documents as
``retrieval.documents``: strings, LangChain ``{"page_content", "metadata"}`` or ``{"content"|"text", "id", "score"}``),
``SPAN`` → ``CHAIN``; the trace itself is the root span. ``level: ERROR`` is status ``ERROR``.

The trace a person downloads from the Langfuse UI is ``{"trace": {...}, "observations": [...]}``. Langfuse keeps
inputs and outputs as JSON; some arrive as JSON text (a question as ``"\"What is Langfuse?\""``, the v2
observations API's ``input`` / ``output``, which it returns only with ``fields=io``): such text is parsed once
(``attributes.unquote_once``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from rageval_core.data.traces.attributes import as_text, iso_ns, unquote_once
from rageval_core.data.traces.limits import BadValue, expected
from rageval_core.data.traces.model import TraceSpan
from rageval_core.data.traces.spans import ReadContext, make_span, malformed, where
from rageval_core.data.traces.stream import Leaf

KINDS = {"GENERATION": "LLM", "SPAN": "CHAIN", "EVENT": "EVENT"}  # the other types share OpenInference's names


def is_trace(doc: Any) -> bool:
    return isinstance(doc, dict) and "id" in doc and "timestamp" in doc and "traceId" not in doc


def is_observation(doc: Any) -> bool:
    return isinstance(doc, dict) and "traceId" in doc and "type" in doc and "startTime" in doc


def is_page(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("data"), list) and all(
        is_trace(d) or is_observation(d) for d in doc["data"][:5]
    )


def is_download(doc: Any) -> bool:
    """The UI's download of one trace: ``{"trace": {...}, "observations": [...]}``."""
    return isinstance(doc, dict) and is_trace(doc.get("trace")) and isinstance(doc.get("observations", []), list)


def is_langfuse_leaf(leaf: Leaf) -> bool:
    if leaf.path == ("trace",) or leaf.path[:1] == ("observations",):
        return leaf.path == ("trace",) and is_trace(leaf.value) or len(leaf.path) == 2 and is_observation(leaf.value)
    if leaf.path[:1] == ("data",) and len(leaf.path) == 2:
        return is_trace(leaf.value) or is_observation(leaf.value)
    return not leaf.path and (is_page(leaf.value) or is_trace(leaf.value) or is_observation(leaf.value) or is_download(leaf.value))


def _document(item: Any) -> dict[str, Any]:
    """One retrieved document as OpenInference ``document.*`` keys."""
    if not isinstance(item, dict):
        return {"document.content": as_text(item)}
    meta: dict[str, Any] = item["metadata"] if isinstance(item.get("metadata"), dict) else {}
    content = next((item[k] for k in ("page_content", "content", "text", "document.content") if item.get(k) is not None), None)
    out: dict[str, Any] = {"document.content": as_text(content)}
    doc_id = next((src[k] for src in (item, meta) for k in ("id", "document.id", "doc_id", "source") if src.get(k) is not None), None)
    score = next((src[k] for src in (item, meta) for k in ("score", "document.score", "relevance_score") if src.get(k) is not None), None)
    if doc_id is not None:
        out["document.id"] = as_text(doc_id)
    if score is not None:
        out["document.score"] = score
    return out


def _documents(output: Any) -> list[Any]:
    if isinstance(output, dict):
        output = next((output[k] for k in ("documents", "docs", "results", "context", "contexts") if isinstance(output.get(k), list)), [])
    return output if isinstance(output, list) else []


def _messages(prefix: str, value: Any) -> dict[str, Any]:
    """Chat messages (a list, one ``{"role", "content"}`` or text) as ``prefix.{i}.message.role/content``."""
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    items = value if isinstance(value, list) else [value]
    out: dict[str, Any] = {}
    for i, m in enumerate(items):
        if isinstance(m, dict) and ("content" in m or "role" in m):
            out[f"{prefix}.{i}.message.role"] = m.get("role") if isinstance(m.get("role"), str) else None
            out[f"{prefix}.{i}.message.content"] = as_text(m.get("content"))
        elif m is not None:
            out[f"{prefix}.{i}.message.content"] = as_text(m)
    return out


def _io(kind: str, input_: Any, output: Any) -> dict[str, Any]:
    input_, output = unquote_once(input_), unquote_once(output)
    attrs: dict[str, Any] = {"input.value": input_, "output.value": output}
    if kind == "LLM":
        attrs.update(_messages("llm.input_messages", input_))
        attrs.update(_messages("llm.output_messages", output))
    elif kind == "RETRIEVER":
        for i, item in enumerate(_documents(output)):
            attrs.update({f"retrieval.documents.{i}.{k}": v for k, v in _document(item).items()})
    return {k: v for k, v in attrs.items() if v is not None}


def _id(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{field} missing" if value in (None, "") else expected(f"{field} must be a string", value))
    return value


def observation_span(obs: Mapping[str, Any], root_id: str | None, ctx: ReadContext) -> TraceSpan:
    obs_id, trace_id = _id(obs.get("id"), "id"), _id(obs.get("traceId") or root_id, "traceId")
    kind = obs.get("type") or "SPAN"
    if not isinstance(kind, str):
        raise ValueError(expected("type must be a string", kind))
    kind = KINDS.get(kind.upper(), kind.upper())
    try:
        start, end = iso_ns(obs.get("startTime")), iso_ns(obs.get("endTime"))
    except ValueError as exc:
        raise ValueError(f"startTime / endTime: {exc}") from None
    parent = obs.get("parentObservationId") or root_id or trace_id
    if not isinstance(parent, str):
        raise ValueError(expected("parentObservationId must be a string", parent))
    level = obs.get("level")
    return make_span(ctx, trace_id, obs_id, parent if parent != obs_id else None, obs.get("name"), kind, start, end,
                     "ERROR" if isinstance(level, str) and level.upper() == "ERROR" else "OK", obs.get("statusMessage"),
                     _io(kind, obs.get("input"), obs.get("output")))


def trace_span(trace: Mapping[str, Any], ctx: ReadContext) -> TraceSpan:
    trace_id = _id(trace.get("id"), "id")
    try:
        start = iso_ns(trace.get("timestamp"))
    except ValueError as exc:
        raise ValueError(f"timestamp: {exc}") from None
    latency = trace.get("latency")
    if isinstance(latency, BadValue):
        raise ValueError(f"latency: {latency.reason}")
    end = None
    if start is not None and isinstance(latency, (int, float)) and not isinstance(latency, bool) and math.isfinite(latency) \
            and 0 <= latency < 1e9:
        end = start + int(latency * 1e9)
    attrs = _io("CHAIN", trace.get("input"), trace.get("output"))
    for key, name in (("sessionId", "session.id"), ("userId", "user.id"), ("htmlPath", "langfuse.html_path")):
        if isinstance(trace.get(key), str) and trace[key]:
            attrs[name] = trace[key]
    return make_span(ctx, trace_id, trace_id, None, trace.get("name"), "CHAIN", start, end, "OK", "", attrs)


def _label(doc: Any, place: str, what: str) -> str:
    if not isinstance(doc, dict):
        return f"{place}, {what}" if place else what
    name = f" ({doc['name']})" if isinstance(doc.get("name"), str) and doc["name"] else ""
    text = f"{what} {doc['id']}{name}" if isinstance(doc.get("id"), str) and doc["id"] else what
    return f"{place}, {text}" if place else text


class LangfuseReader:
    """Spans of Langfuse traces, observations, list pages and UI downloads; a bad one is a problem naming it.
    Remembers the observations seen, to say which traces list theirs by id only and leave them out."""

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx
        self.seen: set[str] = set()
        self.by_id_only: list[tuple[str, str, list[str]]] = []  # (label, trace id, observation ids)

    def read(self, leaf: Leaf) -> Iterator[TraceSpan]:
        path, value = leaf.path, leaf.value
        place = where(leaf)
        if path in (("data",), ("observations",)):
            if not isinstance(value, list):
                self.ctx.problem(place, expected("must be a list", value))
            return
        if path == ("trace",):
            yield from self._trace(value, leaf.prefix.rstrip(", ") or "top level")
        elif len(path) == 2 and path[0] == "observations":
            yield from self._observation(value, None, _label(value, place, "observation"))
        elif len(path) == 2 and path[0] == "data" or not path:
            yield from self._document(value, place)
        elif path[0] not in ("data", "observations", "trace"):
            self.ctx.foreign(leaf, "not a Langfuse trace or observation (no id and timestamp, or traceId, type and startTime)")

    def _document(self, doc: Any, place: str) -> Iterator[TraceSpan]:
        if is_page(doc):
            for n, item in enumerate(doc["data"]):
                yield from self._document(item, f"{place}, data[{n}]" if place != "top level" else f"data[{n}]")
        elif is_download(doc):
            yield from self._trace(doc["trace"], place)
            for obs in doc.get("observations") or []:
                yield from self._observation(obs, None, _label(obs, place if place != "top level" else "", "observation"))
        elif is_observation(doc):
            yield from self._observation(doc, None, _label(doc, place if place != "top level" else "", "observation"))
        elif is_trace(doc):
            yield from self._trace(doc, place)
        else:
            self.ctx.problem(place, doc.reason if isinstance(doc, BadValue) else
                             "not a Langfuse trace or observation (no id and timestamp, or traceId, type and startTime)")

    def _trace(self, doc: Any, place: str) -> Iterator[TraceSpan]:
        label = _label(doc, place if place != "top level" else "", "trace")
        if not isinstance(doc, dict):
            self.ctx.problem(label, expected("a trace must be an object", doc))
            return
        try:
            yield trace_span(doc, self.ctx)
        except ValueError as exc:
            self.ctx.problem(label, str(exc))
            return
        observations = doc.get("observations") or []
        if not isinstance(observations, list):
            self.ctx.problem(label, expected("observations must be a list", observations))
            yield malformed(doc["id"], label)  # type: ignore[misc]  # the id was read above
            return
        listed = [o for o in observations if isinstance(o, str)]
        if listed:
            self.by_id_only.append((label, doc["id"], listed))
        for n, obs in enumerate(observations):
            if not isinstance(obs, str):
                yield from self._observation(obs, doc["id"], f"{label}, observation {obs.get('id') if isinstance(obs, dict) else n}")

    def _observation(self, obs: Any, root: str | None, label: str) -> Iterator[TraceSpan]:
        try:
            if not isinstance(obs, dict):
                raise ValueError(expected("an observation must be an object", obs))
            span = observation_span(obs, root, self.ctx)
        except ValueError as exc:
            self.ctx.problem(label, str(exc))
            trace_id = root or (obs.get("traceId") if isinstance(obs, dict) else None)
            placeholder = malformed(trace_id, label)
            if placeholder is not None:
                yield placeholder
            return
        self.seen.add(span.span_id)
        yield span

    def finish(self) -> Iterator[TraceSpan]:
        """Say which traces from the list endpoint name observations by id only that are not in the file."""
        for label, trace_id, listed in self.by_id_only:
            missing = [o for o in listed if o not in self.seen]
            if missing:
                self.ctx.problem(label, f"{len(missing)} observation(s) listed by id only and not in the file; export "
                                        f"GET /api/public/traces/{trace_id} or the observations (GET /api/public/observations)")
        return iter(())
