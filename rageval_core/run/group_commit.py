"""Group commit: items that many threads finish, written a batch at a time by whichever thread holds the write
lock (the run's results, ``persist.ResultSink``, and its call log, ``run.calllog``).

Why: one transaction per item was ~1 ms of CPU on the worker that had just got its answer, and under 16
requests in flight the workers queued on the store's write lock (a profile of bench/runner.py found them
waiting on it in about 30 % of its samples). Here a thread that finds the write lock taken leaves its item to
the writer and goes back to its task; the writer looks again after releasing, so no item is left behind. Once
more than ``max_queued`` items wait (a writer slower than the workers), a thread waits for the lock instead,
so memory stays bounded: at most the batch being written and the next one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class GroupCommit(Generic[T]):
    """``add`` from any thread; ``write`` gets each batch in the order the items were added, one call at a time.

    ``lock`` guards ``queued`` (an owner that keeps state beside the queue passes its own, to change both at once);
    ``write_lock`` is held for every ``write`` (an owner's other writes can take it too)."""

    def __init__(self, write: Callable[[list[T]], None], *, max_queued: int, lock: threading.Lock | None = None) -> None:
        self.max_queued = max_queued
        self.lock = lock or threading.Lock()
        self.write_lock = threading.Lock()
        self.queued: list[T] = []
        self.transactions = 0  # batches written (tests read it: fewer than items under contention)
        self._write = write

    def add(self, item: T) -> None:
        """Queue ``item``: written now by this thread, or by the thread writing at this moment."""
        with self.lock:
            self.queued.append(item)
        self.write_queued()

    def write_queued(self) -> None:
        while True:
            with self.lock:
                if not self.queued:
                    return
                crowded = len(self.queued) > self.max_queued
            if not self.write_lock.acquire(blocking=crowded):
                return  # the thread holding it writes these items once its batch is done
            try:
                self._write_batch()
            finally:
                self.write_lock.release()

    def flush(self) -> None:
        """Wait for the writer at work and write whatever is queued (nothing normally is)."""
        with self.write_lock:
            self._write_batch()

    def _write_batch(self) -> None:
        with self.lock:
            batch, self.queued = self.queued, []
        if batch:
            self.transactions += 1
            self._write(batch)
