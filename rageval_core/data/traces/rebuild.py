"""Spans → one dataset row per RAG answer (one trace = one request = one row): the question, the retrieved
contexts in rank order with their ids and scores, the answer, the latency and the trace id (the row's id,
so Inspect names the trace it came from). A trace that is not a complete RAG answer is skipped with a reason
(``model.SKIP_REASONS``), never filled in with guesses. No I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rageval_core.data.traces.attributes import as_text, indexed, parse_json
from rageval_core.data.traces.limits import MAX_DEPTH, LimitError
from rageval_core.data.traces.mapping import Source, TraceMap, build_map
from rageval_core.data.traces.model import (
    ERROR_STATUS,
    MALFORMED,
    MAX_LISTED,
    NO_ANSWER,
    NO_QUESTION,
    NO_RETRIEVAL,
    Issues,
    SkippedTrace,
    TraceSpan,
)
from rageval_core.core.errors import DataError

Groups = dict[str, "TraceSpan | list[TraceSpan]"]  # trace id -> its span (one) or spans, traces in the order first seen


class SpanLimitError(DataError):
    """A value of ``span`` (its ``key``) past a limit, found while the row was rebuilt (JSON inside a string)."""

    def __init__(self, span: TraceSpan, key: str, exc: LimitError) -> None:
        super().__init__(f"attribute {key!r}: {exc}")
        self.span = span

QUESTION_KEYS = ("question", "query", "input", "user_input", "query_str", "prompt", "inputs", "text", "content")
ANSWER_KEYS = ("answer", "output_text", "output", "response", "result", "outputs", "text", "content")
DOC_ID_KEYS = ("id", "doc_id", "document_id", "source")  # in a document's metadata, when it has no document.id


def group_traces(spans: Iterable[TraceSpan]) -> tuple[Groups, int]:
    """Spans by trace id (a one-span trace holds its span, not a list: a million of them cost no list each) and
    how many spans were read (placeholders for unreadable ones not counted)."""
    out: Groups = {}
    n = 0
    for span in spans:
        if span.kind != "MALFORMED":
            n += 1
        got = out.get(span.trace_id)
        if got is None:
            out[span.trace_id] = span
        elif isinstance(got, list):
            got.append(span)
        else:
            out[span.trace_id] = [got, span]
    return out, n


def _by_start(spans: list[TraceSpan]) -> list[TraceSpan]:
    """Spans by start time (unknown times last, stable)."""
    spans.sort(key=lambda s: (s.start_ns is None, s.start_ns or 0))
    return spans


def root_of(spans: Sequence[TraceSpan]) -> TraceSpan | None:
    """The span whose id is the trace's (Langfuse), else the earliest one whose parent is not in the trace."""
    ids = {s.span_id for s in spans}
    for s in spans:
        if s.span_id == s.trace_id:
            return s
    return next((s for s in spans if not s.parent_id or s.parent_id not in ids), None)


def _walk(value: Any, path: Sequence[str]) -> Any:
    for step in path:
        value = parse_json(value)
        if isinstance(value, dict):
            value = value.get(step)
        elif isinstance(value, list) and step.lstrip("-").isdigit() and -len(value) <= int(step) < len(value):
            value = value[int(step)]
        else:
            return None
    return value


def text_of(value: Any, keys: Sequence[str], role: str, depth: int = 0) -> str | None:
    """The text a value holds: itself, a known key of a JSON object (``{"query": ...}``), or the last message of
    ``role`` in a list of chat messages; ``None`` when it holds no text."""
    if depth > MAX_DEPTH:
        return None
    depth += 1
    value = parse_json(value)
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list):
        messages = [m for m in value if isinstance(m, dict)]
        picked = [m for m in messages if str(m.get("message.role", m.get("role", role))) == role]
        for m in reversed(picked or messages):
            got = text_of(_content(m), keys, role, depth)
            if got:
                return got
        return None
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            return text_of(value["messages"], keys, role, depth)
        for k in keys:
            if k in value:
                got = text_of(value[k], keys, role, depth)
                if got:
                    return got
    return None


def _content(message: Mapping[str, Any]) -> Any:
    """A message's content: ``message.content`` / ``content``, else the text parts OpenInference flattens as
    ``message.contents.{i}.message_content.text`` (a Responses-API answer), joined."""
    content = message.get("message.content", message.get("content"))
    if content is not None:
        return content
    parts = indexed(message, "message.contents")
    texts = [p["message_content.text"] for p in parts if isinstance(p.get("message_content.text"), str)]
    return "\n".join(texts) if texts else message.get("text")


def _value(span: TraceSpan, source: Source) -> Any:
    value = span.attributes.get(source.key)
    if value is None:
        value = indexed(span.attributes, source.key) or None
    return _walk(value, source.path) if value is not None else None


def pick_text(spans: Sequence[TraceSpan], root_id: str | None, sources: Sequence[Source], keys: Sequence[str],
              role: str, last: bool) -> str | None:
    """The first source that gives text on a matching span (the first such span, or the last with ``last``)."""
    for source in sources:
        matching = [s for s in spans if source.matches(s, root_id)]
        for span in reversed(matching) if last else matching:
            try:
                got = text_of(_value(span, source), keys, role)
            except LimitError as exc:
                raise SpanLimitError(span, source.key, exc) from None
            if got:
                return got
    return None


def pick_documents(spans: Sequence[TraceSpan], root_id: str | None, sources: Sequence[Source]) -> list[dict[str, Any]]:
    """The documents of the first source that has any: ``{"content", "id", "score"}`` in rank order, every
    matching span's in start order (a retriever called twice gives both lists, the first first)."""
    for source in sources:
        docs: list[dict[str, Any]] = []
        for span in (s for s in spans if source.matches(s, root_id)):
            try:
                docs.extend(_documents(_value(span, source)))
            except LimitError as exc:
                raise SpanLimitError(span, source.key, exc) from None
        if docs:
            return docs
    return []


def _documents(value: Any) -> Iterable[dict[str, Any]]:
    """The documents a value holds: a list of them (OpenInference's, LangChain's ``page_content``), or one text."""
    value = parse_json(value)
    for item in value if isinstance(value, list) else [value] if isinstance(value, str) else []:
        item = parse_json(item)
        if not isinstance(item, dict):
            item = {"document.content": item}
        content = as_text(item.get("document.content", item.get("content", item.get("page_content"))))
        if content and content.strip():
            doc_id = item.get("document.id", item.get("id"))
            if doc_id is None:  # the metadata's id: JSON text (OpenInference), or flattened by Phoenix
                meta = parse_json(item.get("document.metadata", item.get("metadata")))
                meta = meta if isinstance(meta, dict) else {k[len("document.metadata."):]: v for k, v in item.items()
                                                               if k.startswith("document.metadata.")}
                doc_id = next((meta[k] for k in DOC_ID_KEYS if meta.get(k) is not None), None)
            yield {"content": content, "id": None if doc_id is None else as_text(doc_id),
                   "score": item.get("document.score", item.get("score"))}


def latency_ms(spans: Sequence[TraceSpan], root: TraceSpan | None) -> float | None:
    """The root span's duration, else first start to last end, in milliseconds (one decimal)."""
    if root is not None and root.start_ns is not None and root.end_ns is not None:
        return round((root.end_ns - root.start_ns) / 1e6, 1)
    starts = [s.start_ns for s in spans if s.start_ns is not None]
    ends = [s.end_ns for s in spans if s.end_ns is not None]
    return round((max(ends) - min(starts)) / 1e6, 1) if starts and ends else None


def _number(value: Any) -> float | None:
    """A score as a finite float, else ``None`` (a score the file gives as "NaN" is no score)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def rebuild_trace(trace_id: str, spans: Sequence[TraceSpan], fmt: str, trace_map: TraceMap,
                  issues: Issues | None = None) -> dict[str, Any] | str:
    """One trace's row, or the reason it is skipped (a value past a limit is a problem naming its span)."""
    if any(s.kind == "MALFORMED" for s in spans):
        return MALFORMED
    if not any(s.attributes for s in spans):  # nothing the map reads: the common case of a big file of other spans
        return ERROR_STATUS if any(s.status == "ERROR" for s in spans) else NO_QUESTION
    try:
        return _rebuild(trace_id, spans, fmt, trace_map)
    except SpanLimitError as exc:
        if issues is not None:
            name = f" ({exc.span.name})" if exc.span.name else ""
            issues.add(f"trace {trace_id}, span {exc.span.span_id}{name}", str(exc))
        return MALFORMED


def _rebuild(trace_id: str, spans: Sequence[TraceSpan], fmt: str, trace_map: TraceMap) -> dict[str, Any] | str:
    root = root_of(spans)
    root_id = root.span_id if root else None
    f = trace_map.fields
    answer = pick_text(spans, root_id, f["answer"], ANSWER_KEYS, "assistant", last=True)
    if (root is not None and root.status == "ERROR") or (answer is None and any(s.status == "ERROR" for s in spans)):
        return ERROR_STATUS
    question = pick_text(spans, root_id, f["question"], QUESTION_KEYS, "user", last=False)
    if question is None:
        return NO_QUESTION
    if answer is None:
        return NO_ANSWER
    docs = pick_documents(spans, root_id, f["contexts"])
    if not docs:
        return NO_RETRIEVAL
    row: dict[str, Any] = {"id": trace_id, "question": question, "contexts": [d["content"] for d in docs], "answer": answer}
    ground_truth = pick_text(spans, root_id, f["ground_truth"], ANSWER_KEYS, "assistant", last=False)
    if ground_truth is not None:
        row["ground_truth"] = ground_truth
    row["trace_id"] = trace_id
    row["trace_format"] = fmt
    row["latency_ms"] = latency_ms(spans, root)
    row["context_ids"] = [None if d["id"] is None else str(d["id"]) for d in docs]
    row["context_scores"] = [_number(d["score"]) for d in docs]
    for column, sources in trace_map.metadata.items():
        got = pick_text(spans, root_id, sources, QUESTION_KEYS, "user", last=False)
        if got is not None:
            row[column] = got
    return row


def rebuild_rows(groups: Groups, fmt: str, trace_map: TraceMap | None = None, issues: Issues | None = None,
                 ) -> tuple[list[dict[str, Any]], list[SkippedTrace], dict[str, int]]:
    """Every trace's row (in the order traces first appear), the first ``MAX_LISTED`` skipped traces and the
    count of skips by reason. Empties ``groups`` as it goes, so spans are freed as rows are made."""
    trace_map = trace_map or build_map()
    rows: list[dict[str, Any]] = []
    skipped: list[SkippedTrace] = []
    counts: dict[str, int] = {}
    for trace_id in list(groups):
        got_spans = groups.pop(trace_id)
        items = _by_start(got_spans) if isinstance(got_spans, list) else [got_spans]
        got = rebuild_trace(trace_id, items, fmt, trace_map, issues)
        if isinstance(got, str):
            counts[got] = counts.get(got, 0) + 1
            if len(skipped) < MAX_LISTED:
                skipped.append(SkippedTrace(trace_id, got))
        else:
            rows.append(got)
    return rows, skipped, counts
