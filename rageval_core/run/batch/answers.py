"""The stand-in models of a batched run: one that collects what it cannot answer yet, one that answers.

Both answer from the batch ledger under the response cache's key. ``CollectingLLM`` (the rounds) also
answers from the response cache, read only, so a request cached by an earlier run is not sent again, and
it defers every other request: it remembers it and raises ``Deferred``, which ends that task for this
round (the round's results are thrown away). ``AnsweringLLM`` (the final pass) fails a request the ledger
does not hold, which cannot happen after the rounds converged unless a job lost answers.
"""

from __future__ import annotations

import threading
from typing import Any

from rageval_core.store.batch_ledger import BatchAnswer, Ledger
from rageval_core.llm.base import Completion, LLMRequest, ProviderError
from rageval_core.llm.transport.cache import ResponseCache, cache_key, cacheable, url_key


# Control flow, never shown to a user: a ProviderError so the metric's step ends as after any failed call (its
# round is discarded and the request goes into the next batch job). tests/core/test_error_tree.py lists it.
class Deferred(ProviderError):
    """A request kept for the next batch job; never retried, never shown (its round is discarded)."""

    def __init__(self) -> None:
        super().__init__("deferred to the next batch job", kind="deferred", retryable=False)


def answer_key(provider: str, model: str, base_url: str | None, request: LLMRequest) -> str:
    """A request's key in the ledger and in its batch job: the response cache's key."""
    return cache_key(provider, model, base_url, request)


class _LedgerLLM:
    def __init__(self, base: Any, ledger: Ledger, base_url: str | None) -> None:
        self.provider = base.provider
        self.model = base.model
        self.ledger = ledger
        self.base_url = url_key(base_url, ledger.db_path)  # as the response cache keys it: no credentials

    def key(self, request: LLMRequest) -> str:
        return answer_key(self.provider, self.model, self.base_url, request)

    def from_answer(self, answer: BatchAnswer) -> Completion:
        if not answer.ok:
            raise ProviderError(answer.error_message or "failed in the batch job", kind=answer.error_kind or "server", status=answer.status)
        return Completion(
            texts=list(answer.texts), provider=self.provider, model=self.model, usage=answer.usage,
            raw={"batch_job": answer.job_id},
        )


class CollectingLLM(_LedgerLLM):
    """Answers what the ledger or the response cache holds; defers the rest into ``pending``."""

    def __init__(self, base: Any, ledger: Ledger, base_url: str | None, cache: ResponseCache | None) -> None:
        super().__init__(base, ledger, base_url)
        self.cache = cache
        self.pending: dict[str, LLMRequest] = {}
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> Completion:
        key = self.key(request)
        answer = self.ledger.answer(key)
        if answer is not None:
            return self.from_answer(answer)
        if self.cache is not None and cacheable(request) and not request.bypass_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return Completion(texts=hit[0], provider=self.provider, model=self.model, cached=True)
        with self._lock:
            self.pending.setdefault(key, request)
        raise Deferred()


class AnsweringLLM(_LedgerLLM):
    """The final pass's model: every answer comes from the ledger."""

    def complete(self, request: LLMRequest) -> Completion:
        answer = self.ledger.answer(self.key(request))
        if answer is None:
            raise ProviderError("no answer for this request in any batch job (rerun with --batch to send it)", kind="server")
        return self.from_answer(answer)
