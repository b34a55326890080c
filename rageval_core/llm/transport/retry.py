"""Retrying failed calls: 429, 408, 5xx, timeouts and connection errors, with exponential backoff and jitter.

The wait honours the server's ``retry_after`` (Retry-After header, Gemini RetryInfo) when it gives one;
otherwise ``min(max_delay, base_delay * 2**attempt)`` with equal jitter (half fixed, half random) so
many workers do not retry in lockstep. Every wait goes through the injectable clock. Errors that are
not retryable (bad request, auth, malformed response, replay miss) are raised at once: a parse failure
retried silently would only hide a broken prompt or server.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from rageval_core.llm.base import LLM, Completion, LLMRequest, ProviderError
from rageval_core.core.clock import SYSTEM_CLOCK, Clock

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. ``max_wait`` caps a server-requested wait (a daily quota's
    "retry in 20 hours" is raised instead of slept through)."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_wait: float = 300.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Wait before retry number ``attempt + 1`` when the server named none (equal jitter)."""
        ceiling = min(self.max_delay, self.base_delay * (2**attempt))
        return ceiling / 2 + rng.random() * ceiling / 2


class Retrier:
    """Runs a callable under a ``RetryPolicy``; shared by the LLM and embedder wrappers."""

    def __init__(self, policy: RetryPolicy | None = None, *, clock: Clock | None = None, rng: random.Random | None = None) -> None:
        self.policy = policy or RetryPolicy()
        self.clock = clock or SYSTEM_CLOCK
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self.retries = 0  # total retries made (for stats)

    def wait_for(self, err: ProviderError, attempt: int) -> float:
        """The wait before the next attempt after ``err`` on attempt number ``attempt`` (0-based)."""
        if err.retry_after is not None:
            return float(err.retry_after)
        with self._rng_lock:
            return self.policy.backoff(attempt, self._rng)

    def call(self, fn: Callable[[], T]) -> T:
        attempt = 0
        while True:
            try:
                return fn()
            except ProviderError as err:
                if not err.retryable or attempt >= self.policy.max_retries:
                    if attempt > 0:
                        err.args = (f"{err.args[0] if err.args else err} (gave up after {attempt + 1} attempts)",)
                    raise
                wait = self.wait_for(err, attempt)
                if wait > self.policy.max_wait:
                    err.args = (f"{err.args[0] if err.args else err} (server asked to wait {wait:g} s, more than the {self.policy.max_wait:g} s limit)",)
                    raise
                attempt += 1
                with self._rng_lock:  # workers share one Retrier: keep the count exact
                    self.retries += 1
                self.clock.sleep(wait)


class RetryLLM:
    """An ``LLM`` that retries its inner LLM's retryable errors."""

    def __init__(self, inner: LLM, policy: RetryPolicy | None = None, *, clock: Clock | None = None, rng: random.Random | None = None) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.retrier = Retrier(policy, clock=clock, rng=rng)

    def complete(self, request: LLMRequest) -> Completion:
        return self.retrier.call(lambda: self.inner.complete(request))
