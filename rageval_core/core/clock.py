"""Injectable time: every wait (backoff, Retry-After, rate-limit spacing) goes through a ``Clock``.

Tests pass a ``FakeClock`` and assert the waits that were requested, never wall time.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

from rageval_core.core.errors import ProviderError


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Monotonic wall time."""

    wall = True  # now() is time.monotonic(): a thread may wait on an event for the time left, not poll

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class CancellableClock:
    """Wall time whose waits end early when ``cancel`` is set, raising ``ProviderError(kind="cancelled")``.

    Pass it as ``build_llm(..., clock=CancellableClock(cancel_event))`` so a Cancel button does not wait
    out a 60-second Retry-After or a slow rate limit.
    """

    wall = True

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if self.cancel.is_set() or (seconds > 0 and self.cancel.wait(seconds)):
            raise ProviderError("cancelled while waiting to call the provider", kind="cancelled")


class FakeClock:
    """A clock that only moves when someone sleeps; records every sleep."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.sleeps: list[float] = []

    def now(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            if seconds > 0:
                self._now += seconds

SYSTEM_CLOCK = SystemClock()
