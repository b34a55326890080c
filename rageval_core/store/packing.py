"""Results and calls as rows of the store, their texts by reference (``store.texts``, ``store.details_codec``).

Why here: ``store.runs`` owns the tables and their queries; this module owns how one result or call becomes
column values and back, so the writers (``Store.save_tasks``, ``Store.log_calls``), the readers (the store,
the inspector's read model, the exports) and the migration of older stores share one codec.

Columns: ``results.details_pack`` holds the details, their texts by reference (``details_codec.encode_pack``), and
``results.details`` only the keys SQL reads (``details_codec.SQL_KEYS``); a result written before has
``details_pack`` NULL and its whole details in ``details``; ``call_log.prompt_parts`` the prompt's
segment ids and ``call_log.response_id`` the response's text id (``prompt`` / ``response`` NULL then; a call
written before keeps its texts in those columns).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Callable, Mapping, Sequence

from rageval_core.core.redact import redact_optional, redactor
from rageval_core.core.types import MetricResult, Usage
from rageval_core.store import details_codec, texts

Reader = Callable[[Sequence[int]], Mapping[int, str]]


def reader(conn: sqlite3.Connection) -> Reader:
    """A function reading text ids from ``conn`` (what the decoders below are given)."""
    return lambda ids: texts.get_many(conn, ids)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def pack_details(conn: sqlite3.Connection, details: Mapping[str, Any], memo: dict[str, int],
                 text: Callable[[str], str] | None = None) -> tuple[str, bytes]:
    """``(details, details_pack)`` column values of a result's details (redacted, by ``text`` when given: a
    ``redactor()`` shared by a transaction's results), its texts stored."""
    skeleton, taken = details_codec.pack(details, text or redactor())
    refs = [(path, kind, texts.put_segments(conn, text, memo) if kind == "s" else [texts.put(conn, text, memo)])
            for path, kind, text in taken]
    return details_codec.projection(skeleton), details_codec.encode_pack(skeleton, refs)


def result_row(conn: sqlite3.Connection, run_id: str, sample_id: str, scorer: str, r: MetricResult, now: float,
               memo: dict[str, int], text: Callable[[str], str] | None = None) -> tuple[Any, ...]:
    """The ``results`` columns of one result in ``RESULT_INSERT``'s order (repeat index appended by the caller);
    ``text`` a ``redactor()`` to share (the environment read once a transaction, not twice a result)."""
    u = r.usage
    text = text or redactor()
    details, refs = pack_details(conn, r.details, memo, text)
    return (
        run_id, sample_id, scorer, r.metric, r.method, r.value, r.unscored_reason, redact_optional(r.reason, text), r.raw_score,
        details, refs, r.provider, r.model, r.calls, r.cached_calls, u.input_tokens, u.output_tokens,
        u.cached_input_tokens, r.cost_usd, r.latency_s, now,
    )


RESULT_INSERT = (
    "INSERT INTO results (run_id, sample_id, scorer, metric, method, value, unscored_reason, reason, raw_score,"
    " details, details_pack, provider, model, calls, cached_calls, input_tokens, output_tokens, cached_input_tokens,"
    " cost_usd, latency_s, created_at, repeat_index) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def details_of(row: sqlite3.Row, read: Reader | None) -> dict[str, Any]:
    """A stored result's details, references filled (``read`` may be None only for rows without any)."""
    pack = row["details_pack"] if "details_pack" in row.keys() else None
    if pack is not None and read is None:
        raise ValueError("packed details need a reader of their texts (packing.reader(conn))")
    details: dict[str, Any] = details_codec.restore(row["details"], pack, read or {})
    return details


def metric_result(row: sqlite3.Row, read: Reader | None = None) -> MetricResult:
    """One ``results`` row (or a row with its columns) decoded."""
    return MetricResult(
        sample_id=row["sample_id"],
        metric=row["metric"],
        method=row["method"],
        value=row["value"],
        unscored_reason=row["unscored_reason"],
        reason=row["reason"],
        raw_score=row["raw_score"],
        details=details_of(row, read),
        provider=row["provider"],
        model=row["model"],
        calls=row["calls"],
        cached_calls=row["cached_calls"],
        usage=Usage(row["input_tokens"], row["output_tokens"], row["cached_input_tokens"]),
        cost_usd=row["cost_usd"],
        latency_s=row["latency_s"],
    )


# ---- the call log's texts ------------------------------------------------------------------------------
def pack_call_texts(conn: sqlite3.Connection, prompt: str | None, response: str | None,
                    memo: dict[str, int]) -> tuple[str | None, int | None]:
    """``(prompt_parts, response_id)`` of a call's (redacted) prompt and response, the texts stored."""
    parts = None if prompt is None else json.dumps(texts.put_segments(conn, prompt, memo), separators=(",", ":"))
    return parts, (None if response is None else texts.put(conn, response, memo))


def call_texts(row: sqlite3.Row, read: Reader | None) -> tuple[str | None, str | None]:
    """A logged call's prompt and response, from its references or (written before them) its own columns."""
    keys = row.keys()
    parts = row["prompt_parts"] if "prompt_parts" in keys else None
    response_id = row["response_id"] if "response_id" in keys else None
    if parts is None and response_id is None:
        return row["prompt"], row["response"]
    if read is None:
        raise ValueError("a call with text references needs a reader (packing.reader(conn))")
    ids = json.loads(parts) if parts is not None else []
    found = read(ids + ([response_id] if response_id is not None else []))
    prompt = texts.join(ids, found) if parts is not None else row["prompt"]
    return prompt, (found[response_id] if response_id is not None else row["response"])
