"""Reusable daemon threads for the request guard's SDK calls.

Why not a new thread per request: at 16 requests in flight, starting and tearing down a thread for each of
thousands of requests was ~3.5 % of the interpreter's time at 50 ms latency. Why not
``concurrent.futures.ThreadPoolExecutor``: its threads are joined at interpreter exit, so a call the guard
abandoned at its deadline (a server that never answers) would keep the process alive until the SDK call
returned. These threads are daemons: the process exits whatever they are doing.

A call never waits for a thread: when none is idle a new one starts, so abandoned calls (which keep
their thread until the SDK call really returns) never delay the next request. A thread idle for
``idle_s`` ends, so a burst leaves nothing behind.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable


class DaemonPool:
    """Runs each submitted callable on an idle daemon thread, or on a new one when none is idle."""

    def __init__(self, *, idle_s: float = 30.0, name: str = "rageval-http") -> None:
        self.idle_s = idle_s
        self.name = name
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        # Invariant: _idle == threads waiting for work - callables queued and not taken yet.
        self._idle = 0
        self._threads = 0
        self.started = 0  # threads ever started (tests read it: reuse means fewer threads than calls)

    @property
    def threads(self) -> int:
        """Threads alive in the pool (busy or idle)."""
        with self._lock:
            return self._threads

    @property
    def idle(self) -> int:
        """Threads waiting for work that no queued call has claimed."""
        with self._lock:
            return self._idle

    def submit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` soon on a pool thread. ``fn`` should handle its own errors; one that escapes is dropped
        (the thread stays usable)."""
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self._threads += 1
                self.started += 1
            else:
                self._idle -= 1
        self._queue.put(fn)
        if spawn:
            threading.Thread(target=self._serve, name=self.name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                fn = self._queue.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # more idle threads than queued work: this one may go
                        self._idle -= 1
                        self._threads -= 1
                        return
                continue  # a callable was handed to this thread as it timed out: take it
            try:
                fn()
            except BaseException:  # noqa: BLE001 - the caller's callable reports its own outcome
                pass
            finally:
                del fn
            with self._lock:
                self._idle += 1


CALLS = DaemonPool()  # one per process: every guard's SDK calls share it
