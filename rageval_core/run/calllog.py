"""The call log written by group commit (``run.group_commit``), as finished tasks are (``persist.ResultSink``).

Why: one transaction per provider call was ~1 ms of CPU a call on the worker that had just got its answer,
and under 16 requests in flight the workers queued on the store's write lock for it (bench/runner.py: 51 ms of
wall a call-log write at load 6), delaying each task's next request. When the last worker of a run returns,
its entries are in the database.

What is unchanged: entries are written in the order they were logged, after the call's stack returned (so a
logged call is a cached call), and an entry the store refuses after its retries is a ``call_log`` warning
(one per entry), never an error.
"""

from __future__ import annotations

import threading
import weakref

from rageval_core.store import db
from rageval_core.run.group_commit import GroupCommit
from rageval_core.store.call_log import CallEntry
from rageval_core.store.runs import Store

MAX_QUEUED = 256


class CallLogWriter(GroupCommit[CallEntry]):
    """Group commit of one store's call log (one per ``Store`` object: ``writer_for``)."""

    def __init__(self, store: Store, *, max_queued: int = MAX_QUEUED) -> None:
        super().__init__(self._log, max_queued=max_queued)
        self.store = store

    def _log(self, batch: list[CallEntry]) -> None:
        try:
            self.store.log_calls(batch)
        except db.STORE_ERRORS as exc:
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
