"""The call log written by group commit, as finished tasks are (``persist.ResultSink``).

Why: one transaction per provider call was ~1 ms of CPU a call on the worker that had just got its answer,
and under 16 requests in flight the workers queued on the store's write lock for it (bench/runner.py: 51 ms of
wall a call-log write at load 6), delaying each task's next request. Here the worker that gets the write lock
writes every entry queued so far in one transaction; a worker that finds the lock taken leaves its entry to
that writer and goes back to its task. The writer looks again after releasing, so no entry is left behind:
when the last worker of a run returns, its entries are in the database.

What is unchanged: entries are written in the order they were logged, after the call's stack returned (so a
logged call is a cached call), and an entry the store refuses after its retries is a ``call_log`` warning
(one per entry), never an error. A writer slower than the workers makes them wait once ``max_queued``
entries queue, so memory stays bounded.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref

from rageval_core import db
from rageval_core.store import CallEntry, Store

MAX_QUEUED = 256


class CallLogWriter:
    """Group commit of one store's call log (one per ``Store`` object: ``writer_for``)."""

    def __init__(self, store: Store, *, max_queued: int = MAX_QUEUED) -> None:
        self.store = store
        self.max_queued = max_queued
        self.transactions = 0  # tests read it: fewer transactions than entries under contention
        self._queued: list[CallEntry] = []
        self._lock = threading.Lock()  # guards _queued
        self._write_lock = threading.Lock()  # one writer at a time

    def add(self, entry: CallEntry) -> None:
        """Log one entry: written now by this thread, or by the thread writing at this moment."""
        with self._lock:
            self._queued.append(entry)
        self._write_queued()

    def flush(self) -> None:
        """Wait for the writer at work and write whatever is queued (nothing normally is)."""
        with self._write_lock:
            self._write_batch()

    def _write_queued(self) -> None:
        while True:
            with self._lock:
                if not self._queued:
                    return
                crowded = len(self._queued) > self.max_queued
            if not self._write_lock.acquire(blocking=crowded):
                return  # the thread holding it writes this entry once its transaction is done
            try:
                self._write_batch()
            finally:
                self._write_lock.release()

    def _write_batch(self) -> None:
        """One transaction for every queued entry (the write lock is held)."""
        with self._lock:
            batch, self._queued = self._queued, []
        if not batch:
            return
        self.transactions += 1
        try:
            self.store.log_calls(batch)
        except (db.StoreBusy, sqlite3.Error) as exc:
            for _ in batch:
                db.warn("call_log", exc)


_WRITERS: weakref.WeakKeyDictionary[Store, CallLogWriter] = weakref.WeakKeyDictionary()
_WRITERS_LOCK = threading.Lock()


def writer_for(store: Store) -> CallLogWriter:
    """The group-commit writer of ``store`` (made on first use; it goes when the store object does)."""
    with _WRITERS_LOCK:
        writer = _WRITERS.get(store)
        if writer is None:
            writer = _WRITERS[store] = CallLogWriter(store)
        return writer
