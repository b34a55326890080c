"""The SQLite response cache: a table in the shared database, keyed by provider, model, base_url and request.

Key = sha256 of provider, model, base_url and ``LLMRequest.key_payload()`` (messages, schema, sampling
parameters) — never the API key, and the base URL as ``redact.url_identity`` gives it: credentials replaced by
a keyed digest, so hosts and credentials are still told apart without holding them. The row keeps the first
16 bytes of the key, the id of its origin (provider, model, redacted URL, task) and the original usage; the
redacted answers are rows of the store's texts, shared with the call log's copy of the same response
(``store.response_cache`` reads and writes them). Only successful completions are stored; errors are never
cached. A hit comes back with ``cached=True``, zero usage and zero cost (the original usage is kept in ``raw``), and
is reported to the call log as a cache hit. Sampled requests (temperature > 0 without a seed) are not
cached: asking again is the point of them (repeat-run stability, judge repeats); nor are requests marked
``bypass_cache`` (run repeats 1 and up, which must reach the provider).
A cache that cannot be read or written (a database locked past the retries) is a warning (``db.warn``),
never a failure: the answer in hand is returned either way.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

from rageval_core.store import db
from rageval_core.store.response_cache import ResponseRows
from rageval_core.llm.base import LLM, Completion, LLMRequest, canonical_json
from rageval_core.core.clock import Clock
from rageval_core.llm.wrappers import CallRecord, CallRecorder
from rageval_core.core.redact import redact_url, url_identity
from rageval_core.core.types import Usage

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
    """Get and put completions in the store's response cache (``store.response_cache``: the table's one door)."""

    def __init__(self, db_path: str | Path | None = None, *, clock: Clock | None = None, busy_timeout_s: float | None = None) -> None:
        self.db_path = db_path
        self.clock = clock
        self.busy_timeout_s = busy_timeout_s
        self._rows = ResponseRows(db_path, clock=clock, busy_timeout_s=busy_timeout_s)

    def get(self, key: str) -> tuple[list[str], Usage] | None:
        return self._rows.get(key)

    def put(self, key: str, completion: Completion, *, base_url: str | None, task: str) -> bool:
        """Store a completion; False (and a ``cache`` warning) when the database stayed locked or failed."""
        return self._rows.put(key, completion.texts, completion.usage, provider=completion.provider,
                              model=completion.model, base_url=redact_url(base_url), task=task)

    def count(self) -> int:
        return self._rows.count()

    def clear(self, *, provider: str | None = None, model: str | None = None) -> int:
        """Delete entries (all, or one provider / model); returns how many."""
        return self._rows.clear(provider=provider, model=model)


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
