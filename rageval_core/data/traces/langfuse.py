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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rageval_core.data.traces.attributes import as_text, iso_ns
from rageval_core.data.traces.model import TraceIssue, TraceSpan

KINDS = {"GENERATION": "LLM", "SPAN": "CHAIN", "EVENT": "EVENT"}  # the other types share OpenInference's names


def is_trace(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "id" in doc and "timestamp" in doc and "traceId" not in doc


def is_observation(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "traceId" in doc and "type" in doc and "startTime" in doc


def is_page(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("data"), list) and all(
        is_trace(d) or is_observation(d) for d in doc["data"][:5]
    )


def _document(item: Any) -> dict[str, Any]:
    """One retrieved document as OpenInference ``document.*`` keys."""
    if not isinstance(item, Mapping):
        return {"document.content": as_text(item)}
    meta = item.get("metadata") if isinstance(item.get("metadata"), Mapping) else {}
    content = next((item[k] for k in ("page_content", "content", "text", "document.content") if item.get(k) is not None), None)
    out: dict[str, Any] = {"document.content": as_text(content)}
    doc_id = next((src[k] for src in (item, meta) for k in ("id", "document.id", "doc_id", "source") if src.get(k) is not None), None)
    score = next((src[k] for src in (item, meta) for k in ("score", "document.score", "relevance_score") if src.get(k) is not None), None)
    if doc_id is not None:
        out["document.id"] = str(doc_id)
    if score is not None:
        out["document.score"] = score
    return out


def _documents(output: Any) -> list[Any]:
    if isinstance(output, Mapping):
        output = next((output[k] for k in ("documents", "docs", "results", "context", "contexts") if isinstance(output.get(k), list)), [])
    return output if isinstance(output, list) else []


def _messages(prefix: str, value: Any) -> dict[str, Any]:
    """Chat messages (a list, one ``{"role", "content"}`` or text) as ``prefix.{i}.message.role/content``."""
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        value = value["messages"]
    items = value if isinstance(value, list) else [value]
    out: dict[str, Any] = {}
    for i, m in enumerate(items):
        if isinstance(m, Mapping) and ("content" in m or "role" in m):
            out[f"{prefix}.{i}.message.role"] = m.get("role")
            out[f"{prefix}.{i}.message.content"] = as_text(m.get("content"))
        elif m is not None:
            out[f"{prefix}.{i}.message.content"] = as_text(m)
    return out


def _io(kind: str, input_: Any, output: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"input.value": input_, "output.value": output}
    if kind == "LLM":
        attrs.update(_messages("llm.input_messages", input_))
        attrs.update(_messages("llm.output_messages", output))
    elif kind == "RETRIEVER":
        for i, item in enumerate(_documents(output)):
            attrs.update({f"retrieval.documents.{i}.{k}": v for k, v in _document(item).items()})
    return {k: v for k, v in attrs.items() if v is not None}


def observation_span(obs: Mapping[str, Any], root_id: str | None, where: str) -> TraceSpan:
    for key in ("id", "traceId"):
        if not isinstance(obs.get(key), str) or not obs[key]:
            raise ValueError(f"{key} missing")
    kind = str(obs.get("type") or "SPAN").upper()
    kind = KINDS.get(kind, kind)
    try:
        start, end = iso_ns(obs.get("startTime")), iso_ns(obs.get("endTime"))
    except ValueError as exc:
        raise ValueError(f"startTime / endTime: {exc}") from None
    return TraceSpan(
        trace_id=obs["traceId"], span_id=obs["id"], parent_id=obs.get("parentObservationId") or root_id,
        name=str(obs.get("name") or ""), kind=kind, start_ns=start, end_ns=end,
        status="ERROR" if str(obs.get("level") or "").upper() == "ERROR" else "OK",
        status_message=str(obs.get("statusMessage") or ""), attributes=_io(kind, obs.get("input"), obs.get("output")),
        where=where,
    )


def trace_span(trace: Mapping[str, Any], where: str) -> TraceSpan:
    if not isinstance(trace.get("id"), str) or not trace["id"]:
        raise ValueError("id missing")
    try:
        start = iso_ns(trace.get("timestamp"))
    except ValueError as exc:
        raise ValueError(f"timestamp: {exc}") from None
    latency = trace.get("latency")
    end = start + int(float(latency) * 1e9) if start is not None and isinstance(latency, (int, float)) else None
    attrs = _io("CHAIN", trace.get("input"), trace.get("output"))
    for key, name in (("sessionId", "session.id"), ("userId", "user.id"), ("htmlPath", "langfuse.html_path")):
        if trace.get(key):
            attrs[name] = trace[key]
    return TraceSpan(trace["id"], trace["id"], None, str(trace.get("name") or ""), "CHAIN", start, end, "OK", "", attrs, where)


def _label(doc: Mapping[str, Any], where: str, what: str) -> str:
    name = f" ({doc['name']})" if doc.get("name") else ""
    return (f"{where}, " if where else "") + (f"{what} {doc['id']}{name}" if doc.get("id") else what)


def read_langfuse(docs: Iterable[tuple[str, Any]], file: str, issues: list[TraceIssue]) -> list[TraceSpan]:
    """Spans of traces and observations, each ``(where, document)``; a bad one is a ``TraceIssue`` naming it."""
    flat: list[tuple[str, Any]] = []
    for where, doc in docs:
        if is_page(doc):
            flat.extend((f"{where}data[{n}]", d) for n, d in enumerate(doc["data"]))
        else:
            flat.append((where.rstrip(", "), doc))
    spans: list[TraceSpan] = []
    for where, doc in flat:
        if is_observation(doc):
            items = [(None, doc, _label(doc, where, "observation"))]
        elif is_trace(doc):
            label = _label(doc, where, "trace")
            try:
                spans.append(trace_span(doc, label))
            except ValueError as exc:
                issues.append(TraceIssue(file, label, str(exc)))
                continue
            items = [(doc["id"], o, f"{label}, observation {o.get('id') if isinstance(o, Mapping) else n}")
                     for n, o in enumerate(doc.get("observations") or []) if not isinstance(o, str)]
        else:
            issues.append(TraceIssue(file, where or "top level", "not a Langfuse trace or observation (no id and timestamp, or traceId, type and startTime)"))
            continue
        for root, obs, label in items:
            try:
                if not isinstance(obs, Mapping):
                    raise ValueError("an observation must be an object")
                spans.append(observation_span({"traceId": root, **obs} if root else obs, root, label))
            except ValueError as exc:
                issues.append(TraceIssue(file, label, str(exc)))
                trace_id = root or (obs.get("traceId") if isinstance(obs, Mapping) else None)
                if trace_id:
                    spans.append(TraceSpan(str(trace_id), label, None, "", "MALFORMED", None, None, where=label))
    _missing_observations(flat, spans, file, issues)
    return spans


def _missing_observations(flat: list[tuple[str, Any]], spans: list[TraceSpan], file: str, issues: list[TraceIssue]) -> None:
    """A trace from the list endpoint names its observations by id only: say so when they are not in the file."""
    seen = {s.span_id for s in spans}
    for where, doc in flat:
        if not is_trace(doc):
            continue
        missing = [o for o in doc.get("observations") or [] if isinstance(o, str) and o not in seen]
        if missing:
            issues.append(TraceIssue(file, _label(doc, where, "trace"),
                                     f"{len(missing)} observation(s) listed by id only and not in the file; export "
                                     f"GET /api/public/traces/{doc['id']} or the observations (GET /api/public/observations)"))
