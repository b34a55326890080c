"""OpenLLMetry (traceloop) spans read as OpenInference: the attributes ``opentelemetry-instrumentation-langchain``
writes (0.62: ``traceloop.span.kind`` workflow / task, ``traceloop.entity.input`` / ``.output`` as JSON text
``{"inputs": ...}`` / ``{"outputs": ...}``, ``gen_ai.operation.name`` ``vector_db_retrieve`` for a retriever whose
output is ``{"documents": [{"page_content", "metadata"}]}`` and ``chat`` for a model call with
``gen_ai.input.messages`` / ``gen_ai.output.messages`` as ``[{"role", "parts": [{"type": "text", "content"}]}]``;
older releases' ``gen_ai.prompt.{i}.content`` / ``gen_ai.completion.{i}.content`` and ``llm.request.type`` too).

``as_openinference`` adds the OpenInference keys (``input.value``, ``output.value``, ``retrieval.documents.{i}.*``,
``llm.input_messages.{i}.*``, ``llm.output_messages.{i}.*``) and the span kind; a span that carries
``openinference.span.kind`` is left alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rageval_core.data.traces.attributes import as_text, unquote_once

KEYS = frozenset((
    "traceloop.span.kind", "traceloop.entity.input", "traceloop.entity.output", "gen_ai.operation.name",
    "llm.request.type", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion",
))  # what is read (``gen_ai.prompt`` / ``gen_ai.completion``: their indexed items)
_OPERATION_KINDS = {"vector_db_retrieve": "RETRIEVER", "retrieve": "RETRIEVER", "chat": "LLM", "text_completion": "LLM",
                    "generate_content": "LLM", "completion": "LLM", "embeddings": "EMBEDDING", "execute_tool": "TOOL",
                    "invoke_agent": "CHAIN"}
_SPAN_KINDS = {"workflow": "CHAIN", "task": "CHAIN", "agent": "AGENT", "tool": "TOOL", "llm": "LLM"}
_ID_KEYS = ("id", "doc_id", "document_id", "source")
_SCORE_KEYS = ("score", "relevance_score", "similarity")


def is_traceloop(attributes: Mapping[str, Any]) -> bool:
    return "openinference.span.kind" not in attributes and (
        "traceloop.span.kind" in attributes or "gen_ai.operation.name" in attributes or "llm.request.type" in attributes)


def kind(attributes: Mapping[str, Any]) -> str | None:
    """The OpenInference span kind of an OpenLLMetry span, or ``None`` when it says none."""
    for key, table in (("gen_ai.operation.name", _OPERATION_KINDS), ("llm.request.type", _OPERATION_KINDS),
                       ("traceloop.span.kind", _SPAN_KINDS)):
        value = attributes.get(key)
        if isinstance(value, str) and value.lower() in table:
            return table[value.lower()]
    return None


def _unwrap(value: Any, keys: tuple[str, ...]) -> Any:
    """``{"inputs": x, "tags": ...}`` as ``x`` (LangChain's callback payloads as OpenLLMetry records them)."""
    value = unquote_once(value)
    if isinstance(value, dict):
        for key in keys:
            if key in value:
                return value[key]
    return value


def _parts_text(parts: Any) -> str | None:
    if isinstance(parts, str):
        return parts
    if isinstance(parts, list):
        texts = [str(p.get("content") if p.get("content") is not None else p.get("text", "")) for p in parts
                 if isinstance(p, dict) and p.get("type", "text") == "text"]
        return "\n".join(t for t in texts if t) or None
    return None


def _messages(prefix: str, value: Any) -> dict[str, Any]:
    """``gen_ai.*.messages`` (``[{"role", "parts"}]`` or ``[{"role", "content"}]``) as ``prefix.{i}.message.*``."""
    value = unquote_once(value)
    out: dict[str, Any] = {}
    for i, m in enumerate(value if isinstance(value, list) else []):
        if isinstance(m, dict):
            out[f"{prefix}.{i}.message.role"] = m.get("role") if isinstance(m.get("role"), str) else None
            out[f"{prefix}.{i}.message.content"] = _parts_text(m.get("parts", m.get("content")))
    return out


def _indexed_messages(prefix: str, source: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Older OpenLLMetry's ``gen_ai.prompt.{i}.role`` / ``.content`` as ``prefix.{i}.message.*``."""
    out: dict[str, Any] = {}
    start = source + "."
    for key, value in attributes.items():
        if key.startswith(start):
            head, _, rest = key[len(start):].partition(".")
            if head.isdigit() and rest in ("role", "content"):
                out[f"{prefix}.{head}.message.{rest}"] = value
    return out


def _documents(output: Any) -> dict[str, Any]:
    docs = output.get("documents") if isinstance(output, dict) else output
    out: dict[str, Any] = {}
    for i, doc in enumerate(docs if isinstance(docs, list) else []):
        if not isinstance(doc, dict):
            out[f"retrieval.documents.{i}.document.content"] = as_text(doc)
            continue
        meta: dict[str, Any] = doc["metadata"] if isinstance(doc.get("metadata"), dict) else {}
        out[f"retrieval.documents.{i}.document.content"] = as_text(doc.get("page_content", doc.get("content")))
        doc_id = next((src[k] for src in (doc, meta) for k in _ID_KEYS if src.get(k) is not None), None)
        score = next((meta[k] for k in _SCORE_KEYS if meta.get(k) is not None), None)
        if doc_id is not None:
            out[f"retrieval.documents.{i}.document.id"] = as_text(doc_id)
        if score is not None:
            out[f"retrieval.documents.{i}.document.score"] = score
    return out


def as_openinference(attributes: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """``(kind, attributes)`` with the OpenInference keys added for an OpenLLMetry span (``LimitError`` when JSON
    inside a value is past a limit); other spans come back as they are, with kind ``None``."""
    if not is_traceloop(attributes):
        return None, dict(attributes)
    span_kind = kind(attributes)
    out = dict(attributes)
    entity_in, entity_out = attributes.get("traceloop.entity.input"), attributes.get("traceloop.entity.output")
    if entity_in is not None:
        out["input.value"] = as_text(_unwrap(entity_in, ("inputs", "query", "input")))
    if entity_out is not None:
        output = _unwrap(entity_out, ("outputs", "output"))
        out["output.value"] = as_text(output)
        if span_kind == "RETRIEVER":
            out.update(_documents(output))
    if span_kind == "LLM":
        out.update(_messages("llm.input_messages", attributes.get("gen_ai.input.messages"))
                   or _indexed_messages("llm.input_messages", "gen_ai.prompt", attributes))
        out.update(_messages("llm.output_messages", attributes.get("gen_ai.output.messages"))
                   or _indexed_messages("llm.output_messages", "gen_ai.completion", attributes))
    return span_kind, {k: v for k, v in out.items() if v is not None}
