"""The SQLite response cache: a table in the shared database, keyed by provider, model, base_url and request.

Key = sha256 of provider, model, base_url and ``LLMRequest.key_payload()`` (messages, schema, sampling
parameters) — never the API key, and the base URL as ``redact.url_identity`` gives it: credentials replaced by
a keyed digest, so hosts and credentials are still told apart without holding them. The row keeps the first
16 bytes of the key, the id of its origin (provider, model, redacted URL, task: ``store.cache_tables``) and the
original usage; the redacted answers are rows of ``store.texts``, shared with the call log's copy of the same
response, named by id in ``text_ids``. Only successful completions are stored; errors are never cached. A hit
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

from rageval_core.store import cache_tables, db
from rageval_core.store import texts as text_store
from rageval_core.llm.base import LLM, Completion, LLMRequest, canonical_json
from rageval_core.core.clock import Clock
from rageval_core.llm.wrappers import CallRecord, CallRecorder
from rageval_core.core.redact import redact, redact_url, url_identity
from rageval_core.core import paths
from rageval_core.core.types import Usage

_TABLE = cache_tables.RESPONSES


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
        self._path = str(db_path or paths.database_path())
        # an older store's rows move to the narrow table once; until they all have, misses look there too
        self._moved = cache_tables.ensure(self._conn(), self._path)

    def _conn(self) -> sqlite3.Connection:
        return db.connect(self.db_path, busy_timeout_s=self.busy_timeout_s)

    def get(self, key: str) -> tuple[list[str], Usage] | None:
        try:
            conn = self._conn()
            row = conn.execute(f"SELECT text_ids, input_tokens, output_tokens, cached_input_tokens FROM {_TABLE}"
                               " WHERE key = ?", (cache_tables.stored_key(key),)).fetchone()
            if row is None:
                return None if self._moved else self._get_old(conn, key)
            ids = json.loads(row[0])
            found = text_store.get_many(conn, ids)
            return [found[i] for i in ids], Usage(int(row[1]), int(row[2]), int(row[3]))
        except (sqlite3.Error, LookupError) as exc:  # an unreadable cache (or an answer's text gone) is a miss, reported
            db.warn("cache", exc)
            return None

    def _get_old(self, conn: sqlite3.Connection, key: str) -> tuple[list[str], Usage] | None:
        """A row of an older store not moved yet (its move cut short): read as that layout kept it."""
        old = cache_tables.old_table(conn, _TABLE)
        row = None if old is None else conn.execute(f"SELECT texts, text_ids, usage FROM {old} WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        usage = Usage(**json.loads(row[2]))
        if row[1] is None:
            return list(json.loads(row[0])), usage
        ids = json.loads(row[1])
        found = text_store.get_many(conn, ids)
        return [found[i] for i in ids], usage

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
        # the origin first, outside the transaction, where its id is remembered (inside one it is looked up each time)
        origin = cache_tables.origin_id(conn, self._path, completion.provider, completion.model, redact_url(base_url), task)
        answers = [redact(t) for t in completion.texts]
        u = completion.usage
        # one transaction for the answers' texts and the entry: one commit a completion, not one per statement
        # (the autocommitted text and entry were two WAL commits a call, a share of the runner's CPU)
        with db.immediate(conn):
            # the answers by reference to ``texts``, where the call log's copy of the same response already is
            ids = [text_store.put(conn, t) for t in answers]
            conn.execute(
                f"INSERT OR REPLACE INTO {_TABLE} (key, origin, text_ids, input_tokens, output_tokens, cached_input_tokens,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cache_tables.stored_key(key), origin, json.dumps(ids, separators=(",", ":")), u.input_tokens,
                 u.output_tokens, u.cached_input_tokens, time.time()),
            )

    def count(self) -> int:
        conn = self._conn()
        old = cache_tables.old_table(conn, _TABLE)
        extra = 0 if old is None else int(conn.execute(f"SELECT COUNT(*) FROM {old}").fetchone()[0])
        return int(conn.execute(f"SELECT COUNT(*) FROM {_TABLE}").fetchone()[0]) + extra

    def clear(self, *, provider: str | None = None, model: str | None = None) -> int:
        """Delete entries (all, or one provider / model); returns how many."""
        conn = self._conn()
        where, args = cache_tables.origins_where(provider, model)
        deleted = int(conn.execute(f"DELETE FROM {_TABLE} WHERE {where}", args).rowcount or 0)
        old = cache_tables.old_table(conn, _TABLE)
        if old is not None:  # the first layout named them in its own columns
            clauses = [f"{c} = ?" for c, v in (("provider", provider), ("model", model)) if v is not None]
            values = [v for v in (provider, model) if v is not None]
            old_where = " AND ".join(clauses) or "1"
            deleted += int(conn.execute(f"DELETE FROM {old} WHERE {old_where}", values).rowcount or 0)
        return deleted


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
