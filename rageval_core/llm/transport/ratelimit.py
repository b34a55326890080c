"""Requests-per-minute and tokens-per-minute limits over a sliding 60-second window.

Requests are spaced evenly (one every ``60 / rpm`` seconds) rather than let through in bursts, so a
limit of 120 gives 120 requests in every 60-second window and 120 per minute on average, which is
what providers count. Slots are reserved in order under a lock and the caller then sleeps until its
slot through the injectable clock, so concurrent workers neither drift nor race. A safety margin
(0.5 s) on the window absorbs the jitter between when we start a call and when the server counts it:
with 0.05 s, bench/providers.py saw 121 requests in one server-side 60-s window because the first
call paid for opening the connection. The margin costs under 1% of the rate (120 per 60.5 s).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from rageval_core.llm.base import LLM, Completion, LLMRequest
from rageval_core.core.clock import SYSTEM_CLOCK, Clock


HISTORY = 4096  # starts kept for tests and benches: a 12,000-row run books 108,000, and a list of them all was
# 3.2 MB of the CLI's memory at the end of the run (a tenth of that at 1,200 rows)


@dataclass
class _Slot:
    at: float
    tokens: int


def estimate_tokens(request: LLMRequest) -> int:
    """A cheap pre-call token estimate (about 4 characters a token; Japanese is denser, ~1 a character)."""
    text = request.prompt_text
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return max(1, ascii_chars // 4 + (len(text) - ascii_chars))


class RateLimiter:
    """Thread-safe limiter; ``rpm`` / ``tpm`` of None mean unlimited and can be changed at any time."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Clock | None = None,
        window_s: float = 60.0,
        margin_s: float = 0.5,
    ) -> None:
        self.clock = clock or SYSTEM_CLOCK
        self.window_s = window_s
        self.margin_s = margin_s
        self._lock = threading.Lock()
        self._slots: deque[_Slot] = deque()
        self._history: deque[float] = deque(maxlen=HISTORY)  # the last booked starts, for tests and benches
        self.set_limits(rpm, tpm)
        self.total_wait = 0.0

    def set_limits(self, rpm: float | None, tpm: float | None) -> None:
        if rpm is not None and rpm <= 0:
            raise ValueError("rpm must be positive (or None for no limit)")
        if tpm is not None and tpm <= 0:
            raise ValueError("tpm must be positive (or None for no limit)")
        with self._lock:
            self.rpm = rpm
            self.tpm = tpm

    def reserve(self, tokens: int = 0) -> tuple[_Slot, float]:
        """Book the earliest allowed start for a call of ~``tokens``; returns (slot, seconds to wait)."""
        with self._lock:
            now = self.clock.now()
            span = self.window_s + self.margin_s
            while self._slots and self._slots[0].at <= now - span:
                self._slots.popleft()
            start = now
            slots = self._slots  # read in place: a copy per request was every start of the last minute
            if self.rpm is not None and slots:
                start = max(start, slots[-1].at + self.window_s / self.rpm)
                limit = int(self.rpm)
                if limit >= 1 and len(slots) >= limit:
                    # The window ending at `start` may hold at most limit-1 earlier starts.
                    start = max(start, slots[-limit].at + span)
            if self.tpm is not None and tokens > 0:
                start = self._token_start(slots, start, tokens, span)
            slot = _Slot(start, tokens)
            self._slots.append(slot)
            self._history.append(start)
            wait = max(0.0, start - now)
            self.total_wait += wait
            return slot, wait

    def _token_start(self, slots: deque[_Slot], start: float, tokens: int, span: float) -> float:
        assert self.tpm is not None
        in_window = [s for s in slots if s.at > start - span]
        used = sum(s.tokens for s in in_window)
        for s in in_window:  # oldest first: wait until enough of them leave the window
            if used + tokens <= self.tpm:
                break
            used -= s.tokens
            start = max(start, s.at + span)
        return start

    def acquire(self, tokens: int = 0) -> _Slot:
        """Block (through the clock) until a call may start; a wait that ends early (cancel) gives the slot back."""
        slot, wait = self.reserve(tokens)
        if wait > 0:
            try:
                self.clock.sleep(wait)
            except BaseException:
                self.release(slot)
                raise
        return slot

    def release(self, slot: _Slot) -> None:
        """Forget a reserved slot whose request was never sent (its start leaves the history too)."""
        with self._lock:
            try:
                self._slots.remove(slot)
            except ValueError:
                return
            for i in range(len(self._history) - 1, -1, -1):
                if self._history[i] == slot.at:
                    del self._history[i]
                    break

    def starts(self) -> list[float]:
        """The starts booked so far (the last ``HISTORY``), in booking order: for tests and benches."""
        with self._lock:
            return list(self._history)

    def settle(self, slot: _Slot, actual_tokens: int) -> None:
        """Replace the estimate with what the call really used (affects later reservations)."""
        with self._lock:
            slot.tokens = max(0, int(actual_tokens))


class RateLimitedLLM:
    """An ``LLM`` whose calls pass a ``RateLimiter`` first."""

    def __init__(self, inner: LLM, limiter: RateLimiter) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.limiter = limiter

    def complete(self, request: LLMRequest) -> Completion:
        estimate = estimate_tokens(request) if self.limiter.tpm is not None else 0
        slot = self.limiter.acquire(estimate)
        completion = self.inner.complete(request)
        if self.limiter.tpm is not None:
            self.limiter.settle(slot, completion.usage.input_tokens + completion.usage.output_tokens)
        return completion
