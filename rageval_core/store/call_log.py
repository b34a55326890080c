"""The call log's records: one provider call (or cache hit) as the store writes and reads it.

Kept apart from ``rageval_core.store.runs`` (which re-exports these names) so the record, its INSERT and its
decoding sit together; every text goes through the redaction step before it reaches the database.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from rageval_core.core.redact import redact_optional, redactor
from rageval_core.core.types import Usage

from rageval_core.store.packing import Reader, call_texts, pack_call_texts


@dataclass
class CallEntry:
    """One provider call (or cache hit) in the call log."""

    run_id: str | None
    sample_id: str | None
    scorer: str | None
    method: str | None
    task: str | None
    request_key: str | None
    provider: str | None = None
    model: str | None = None
    prompt: str | None = None
    response: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    ts: float = field(default_factory=time.time)
    reask: int = 0  # k for the k-th re-ask of a step after an unusable answer
    structured_output: str | None = None  # the structured-output level the request was sent with

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["usage"] = self.usage.to_dict()
        return data



def call_insert(conn: sqlite3.Connection, entry: CallEntry, memo: dict[str, int],
                text: Callable[[str], str] | None = None) -> tuple[str, tuple[Any, ...]]:
    """The INSERT of one call-log entry and its parameters; its prompt and response go to ``store.texts``
    (inside the caller's transaction) and the row holds their ids (``store.packing``). ``text``: a ``redactor()``
    shared by the caller's batch (the environment read once, not three times an entry)."""
    sql = (
        "INSERT INTO call_log (run_id, sample_id, scorer, method, task, request_key, provider, model, prompt_parts,"
        " response_id, input_tokens, output_tokens, cached_input_tokens, cost_usd, latency_s, cached, error, ts,"
        " reask, structured_output) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    )
    u = entry.usage
    text = text or redactor()
    parts, response_id = pack_call_texts(conn, redact_optional(entry.prompt, text), redact_optional(entry.response, text),
                                         memo)
    return sql, (
        entry.run_id, entry.sample_id, entry.scorer, entry.method, entry.task, entry.request_key, entry.provider,
        entry.model, parts, response_id, u.input_tokens, u.output_tokens, u.cached_input_tokens,
        entry.cost_usd, entry.latency_s, int(entry.cached), redact_optional(entry.error, text), entry.ts, int(entry.reask),
        entry.structured_output,
    )


def call_entry(r: sqlite3.Row, read: Reader | None = None) -> CallEntry:
    """One ``call_log`` row decoded; ``read`` (``packing.reader(conn)``) fills texts stored by reference."""
    prompt, response = call_texts(r, read)
    return CallEntry(
        run_id=r["run_id"],
        sample_id=r["sample_id"],
        scorer=r["scorer"],
        method=r["method"],
        task=r["task"],
        request_key=r["request_key"],
        provider=r["provider"],
        model=r["model"],
        prompt=prompt,
        response=response,
        usage=Usage(r["input_tokens"], r["output_tokens"], r["cached_input_tokens"]),
        cost_usd=r["cost_usd"],
        latency_s=r["latency_s"],
        cached=bool(r["cached"]),
        error=r["error"],
        ts=r["ts"],
        reask=int(r["reask"] or 0),
        structured_output=r["structured_output"],
    )
