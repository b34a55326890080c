"""The SQLite response cache: a table in the shared database, keyed by provider, model, base_url and request.

Key = sha256 of provider, model, base_url and ``LLMRequest.key_payload()`` (messages, schema, sampling
parameters) — never the API key, and the base URL as ``redact.url_identity`` gives it: credentials replaced by
a keyed digest, so hosts and credentials are still told apart without holding them. The row keeps the
redacted URL; the redacted answers are rows of ``store.texts``, shared with the call log's copy of the same
response, named by id in ``text_ids`` (an older row keeps them inline in ``texts``). A store made by this version
keeps the table WITHOUT ROWID: the key is then its only index, not a second copy of each key. Only successful completions are stored; errors are never cached. A hit
comes back with ``cached=True``, zero usage and zero cost (the original usage is kept in ``raw``), and
is reported to the call log as a cache hit. Sampled requests (temperature > 0 without a seed) are not
cached: asking again is the point of them (repeat-run stability, judge repeats); nor are requests marked
``bypass_cache`` (run repeats 1 and up, which must reach the provider).
A cache that cannot be read or written (a database locked past the retries) is a warning (``db.warn``),
never a failure: the answer in hand is returned either way.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from rageval_core.store import db
from rageval_core.store import texts as text_store
from rageval_core.llm.base import LLM, Completion, LLMRequest, canonical_json
from rageval_core.llm.transport.clock import Clock
from rageval_core.llm.wrappers import CallRecord, CallRecorder
from rageval_core.core.redact import redact, redact_url, url_identity
from rageval_core.core.types import Usage

DDL = """
CREATE TABLE IF NOT EXISTS llm_response_cache (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    base_url TEXT,
    task TEXT NOT NULL,
    texts TEXT NOT NULL,
    usage TEXT NOT NULL,
    created_at REAL NOT NULL
) WITHOUT ROWID;
"""


def cache_key(provider: str, model: str, base_url: str | None, request: LLMRequest) -> str:
    """The cache key: sha256 over provider, model, base_url and the provider-independent request."""
    payload = {"provider": provider, "model": model, "base_url": base_url or "", "request": request.key_payload()}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def url_key(base_url: str | None, db_path: str | Path | None, credentials: Sequence[str] = ()) -> str | None:
    """What cache keys hold for a base URL: the URL itself when it carries no credentials (old keys stay valid),
    else the redacted URL plus a keyed digest of the credentials (``redact.url_identity``, salt in ``db_path``)."""
    if not credentials and (base_url is None or redact_url(base_url) == base_url):
        return base_url
    return url_identity(base_url or "", db.local_salt(db_path), credentials)


def cacheable(request: LLMRequest) -> bool:
    """Deterministic requests only: temperature 0, or a fixed seed."""
    return request.temperature == 0 or request.seed is not None


class ResponseCache:
    """Get and put completions in the ``llm_response_cache`` table."""

    def __init__(self, db_path: str | Path | None = None, *, clock: Clock | None = None, busy_timeout_s: float | None = None) -> None:
        self.db_path = db_path
        self.clock = clock
        self.busy_timeout_s = busy_timeout_s
        conn = self._conn()
        db.ensure_schema(conn, DDL + text_store.DDL)
        db.add_column(conn, "llm_response_cache", "text_ids", "TEXT")  # answers in ``texts`` (NULL: inline, older)

    def _conn(self) -> sqlite3.Connection:
        return db.connect(self.db_path, busy_timeout_s=self.busy_timeout_s)

    def get(self, key: str) -> tuple[list[str], Usage] | None:
        try:
            conn = self._conn()
            row = conn.execute("SELECT texts, text_ids, usage FROM llm_response_cache WHERE key = ?", (key,)).fetchone()
            if row is not None and row["text_ids"] is not None:
                ids = json.loads(row["text_ids"])
                found = text_store.get_many(conn, ids)
                return [found[i] for i in ids], Usage(**json.loads(row["usage"]))
        except (sqlite3.Error, LookupError) as exc:  # an unreadable cache (or an answer's text gone) is a miss, reported
            db.warn("cache", exc)
            return None
        if row is None:
            return None
        return list(json.loads(row["texts"])), Usage(**json.loads(row["usage"]))

    def put(self, key: str, completion: Completion, *, base_url: str | None, task: str) -> bool:
        """Store a completion; False (and a ``cache`` warning) when the database stayed locked or failed."""
        try:
            db.write(lambda: self._insert(key, completion, base_url, task), clock=self.clock, what="cache write")
            return True
        except (db.StoreBusy, sqlite3.Error) as exc:
            db.warn("cache", exc)
            return False

    def _insert(self, key: str, completion: Completion, base_url: str | None, task: str) -> None:
        conn = self._conn()
        # the answers by reference to ``texts``, where the call log's copy of the same response already is
        ids = [text_store.put(conn, redact(t)) for t in completion.texts]
        conn.execute(
            "INSERT OR REPLACE INTO llm_response_cache (key, provider, model, base_url, task, texts, text_ids, usage,"
            " created_at) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?)",
            (
                key,
                completion.provider,
                completion.model,
                redact_url(base_url),
                task,
                json.dumps(ids),
                json.dumps(completion.usage.to_dict(), separators=(",", ":")),
                time.time(),
            ),
        )

    def count(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM llm_response_cache").fetchone()[0])

    def clear(self, *, provider: str | None = None, model: str | None = None) -> int:
        """Delete entries (all, or one provider / model); returns how many."""
        clauses, args = [], []
        if provider is not None:
            clauses.append("provider = ?")
            args.append(provider)
        if model is not None:
            clauses.append("model = ?")
            args.append(model)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        cur = self._conn().execute(f"DELETE FROM llm_response_cache{where}", args)
        return int(cur.rowcount or 0)


class CachedLLM:
    """Answers repeated deterministic requests from the cache; misses go to ``inner`` and are stored."""

    def __init__(
        self,
        inner: LLM,
        cache: ResponseCache,
        *,
        base_url: str | None = None,
        recorder: CallRecorder | None = None,
        credentials: Sequence[str] = (),
    ) -> None:
        """``credentials``: secrets beyond the URL's own that tell two systems apart (a RAG endpoint's literal
        header values); they enter the key only through the keyed digest."""
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.base_url = redact_url(base_url)  # what the cache row shows: no credentials
        self._url_key = url_key(base_url, cache.db_path, credentials)
        self.cache = cache
        self.recorder = recorder

    def complete(self, request: LLMRequest) -> Completion:
        if request.bypass_cache or not cacheable(request):
            return self.inner.complete(request)
        key = cache_key(self.provider, self.model, self._url_key, request)
        hit = self.cache.get(key)
        if hit is not None:
            texts, original = hit
            completion = Completion(
                texts=texts,
                provider=self.provider,
                model=self.model,
                usage=Usage(),
                latency_s=0.0,
                cached=True,
                cost_usd=0.0,
                raw={"cache": "hit", "original_usage": original.to_dict()},
            )
            if self.recorder is not None:
                self.recorder.emit(
                    CallRecord.for_request(
                        request,
                        self.provider,
                        self.model,
                        response=completion.text,
                        responses=tuple(texts),
                        cached=True,
                        timestamp=time.time(),
                    )
                )
            return completion
        completion = self.inner.complete(request)  # errors propagate and are never stored
        self.cache.put(key, completion, base_url=self.base_url, task=request.task)
        return completion
