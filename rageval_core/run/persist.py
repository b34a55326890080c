"""Persisting a run: finished tasks go to the store as they finish, and a ``Run`` is read back from it.

Nothing of a finished task stays in memory: ``ResultSink.save`` writes it at once (group commit: one
transaction for the tasks that finished while the previous one was written). When the store stays
locked past its retries (another process holding a write lock), the results are kept and written later
by the run loop (``retry_due``); the run pauses only when too many wait (``max_kept``) or at the end
(``drain``). If they still cannot be written, they go to the spill file whose room was set aside before the
run (``run.spill``), which the next resume of the run writes back first, and stay with the ``Run``
(``not_kept``) so its summary, thresholds and export cover every computed result: a finished result is never
lost, and a run the store did not keep whole is never shown as complete.

``Run`` reads its summary and costs from the store by streaming rows (no list of every result), and its
``results`` only when someone asks for them.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from rageval_core.store import db, run_tallies
from rageval_core.core.clock import SYSTEM_CLOCK, Clock
from rageval_core.run.group_commit import GroupCommit
from rageval_core.store.runs import RowInfo, Store
from rageval_core.core.types import DECOMPOSED, MetricResult, Usage, UsageAlias
from rageval_core.run import spill as spilling
from rageval_core.run.spill import NotKept

if TYPE_CHECKING:
    from rageval_core.run.execute import Counters

Task = tuple[str, str, list[MetricResult], int]  # sample id, scorer, results, repeat


def spill_path(store: Store, run_id: str) -> Path | None:
    """Where results the store refused are kept when no other folder is asked for first (the store's own
    ``unsaved/`` folder; None for an in-memory database)."""
    folder = spilling.store_folder(store)
    return None if folder is None else folder / f"{run_id}.jsonl"


MAX_QUEUED = 256  # finished tasks waiting for the group commit before a worker waits for the writer (so at most
# twice this many are held: the batch being written and the next one)


class ResultSink:
    """Writes finished tasks of one run; what the store refuses after its retries is kept and written later."""

    def __init__(
        self, store: Store, run_id: str, *, clock: Clock | None = None, max_kept: int = 1000, patience_s: float = 600.0,
        max_queued: int = MAX_QUEUED,
    ) -> None:
        self.store = store
        self.patience_s = patience_s
        self.run_id = run_id
        self.clock = clock or store.clock or SYSTEM_CLOCK
        self.max_kept = max_kept
        self._kept: deque[Task] = deque()
        self._lock = threading.Lock()  # guards the kept tasks and the queue of finished ones
        self._commit: GroupCommit[Task] = GroupCommit(self._write_batch, max_queued=max_queued, lock=self._lock)
        self._delay = 1.0
        self._next_try = 0.0
        self.deferred = 0  # tasks whose first write failed (written later, or spilled)
        self.unwritable: str | None = None  # the store cannot be written (full disk, read-only): no waiting for it

    @property
    def unsaved(self) -> int:
        with self._lock:
            return len(self._kept) + len(self._commit.queued)

    def save(self, sample_id: str, scorer: str, results: Sequence[MetricResult], repeat: int = 0) -> None:
        """Write one finished task now; if the store refuses, keep it (and, with too many kept, wait)."""
        task = (sample_id, scorer, list(results), int(repeat))
        with self._lock:
            waiting = bool(self._kept)
            if waiting and len(self._kept) < self.max_kept:
                self._kept.append(task)  # the store is known to be locked: do not stall a worker on it
                self.deferred += 1
                return
        if waiting and not self.drain(self.patience_s):  # too many kept: this worker pauses for the store
            with self._lock:
                self._kept.append(task)
                self.deferred += 1
            return
        self._commit.add(task)

    def _write_batch(self, batch: list[Task]) -> None:
        """One batch of the group commit (``run.group_commit``); a store that refuses it keeps the batch and
        what queued behind it for the run loop's retry."""
        try:
            self.store.save_tasks(self.run_id, batch)
        except db.STORE_ERRORS as exc:
            self._note_unwritable(exc)
            with self._lock:  # the store is locked: what waits is kept for the run loop's retry
                batch += self._commit.queued
                self._commit.queued = []
                self._kept.extend(batch)
                self.deferred += len(batch)
                self._next_try = self.clock.now() + self._delay

    def _note_unwritable(self, exc: BaseException) -> None:
        cause = exc.__cause__ if isinstance(exc, db.StoreBusy) and exc.__cause__ is not None else exc
        if db.is_unwritable(cause):
            self.unwritable = str(cause)

    def retry_due(self) -> bool:
        """Try the kept tasks once if their next try is due; True when nothing is kept any more."""
        with self._lock:
            if not self._kept:
                return True
            if self.clock.now() < self._next_try:
                return False
        return self._flush_once()

    def drain(self, patience_s: float = 600.0, on_wait: Callable[[int], None] | None = None) -> bool:
        """Pause until every kept task is written, waiting on the clock up to ``patience_s`` (then False); at once
        False when the store cannot be written at all (a full disk does not empty itself while the run waits)."""
        if self.unwritable is not None and not self._flush_once():
            return False
        waited = 0.0
        while not self._flush_once():
            if waited >= patience_s:
                return False
            if on_wait is not None:
                on_wait(self.unsaved)
            self.clock.sleep(self._delay)
            waited += self._delay
        return True

    def settle(self, patience_s: float, interrupted: bool, on_wait: Callable[[], None], room: spilling.Reserve) -> NotKept | None:
        """At the run's end, the tasks the store refused: waited for (not when interrupted), else written into the
        room set aside before the run (the spill file) and all handed to the ``Run``; the room is given back when
        nothing is refused."""
        try:
            if not self.unsaved or (not interrupted and self.drain(patience_s, on_wait=lambda _n: on_wait())):
                room.release()
                return None
            tasks = self.take_kept()
            written, path = room.write(tasks)
            return NotKept(tasks, written, None if path is None else str(path))
        except BaseException:
            room.release()
            raise

    def take_kept(self) -> list[Task]:
        """Every task still kept (or queued), handed over and forgotten: the run spills them (``run.spill``)."""
        with self._lock:
            kept, self._kept, self._commit.queued = list(self._kept) + self._commit.queued, deque(), []
        return kept

    def _flush_once(self) -> bool:
        """One attempt at writing every kept task in one transaction (one flusher at a time)."""
        with self._commit.write_lock:
            with self._lock:
                batch = list(self._kept)
            if not batch:
                return True
            try:
                self.store.save_tasks(self.run_id, batch)
            except db.STORE_ERRORS as exc:
                self._note_unwritable(exc)
                with self._lock:
                    self._delay = min(self._delay * 2, 30.0)
                    self._next_try = self.clock.now() + self._delay
                return False
            with self._lock:
                for _ in batch:
                    self._kept.popleft()  # only this flusher removes, and new tasks are appended behind
                self._delay = 1.0
                return not self._kept


def restore_spilled(store: Store, run_id: str, beside: Sequence[str | Path] = (), recorded: Sequence[str] = ()) -> int:
    """Write back the results earlier sessions of the run kept in spill files (``run.spill.restore``); returns
    how many tasks. A file is removed only after the store took its tasks."""
    return spilling.restore(store, run_id, beside, recorded)


# ---- the Run read back from the store ------------------------------------------------------------------
@dataclass
class Run:
    """A finished (or cancelled) run: summary and actual figures; its results are read from the store on demand.

    ``cost``: the call log summed per method, every session of the run (``tallies.cost_by_method``). ``usage``: this
    invocation's calls when the run was just executed (its live counters, embedding requests included), else the
    call log's total.
    """

    run_id: str
    status: str
    provider: str | None
    model: str | None
    summary: dict[str, dict[str, dict[str, Any]]]
    cost: dict[str, Usage]
    invalid_rows: list[RowInfo] = field(default_factory=list)
    total_tasks: int = 0
    done_tasks: int = 0
    skipped_tasks: int = 0
    usage: Usage = Usage()
    wall_s: float = 0.0
    resumed: bool = False
    repeats: int = 1
    warnings: dict[str, int] = field(default_factory=dict)  # lost store writes by kind (call log, cache, run rows)
    unsaved_tasks: int = 0  # finished tasks the store refused to the end (``not_kept``)
    spill_file: str | None = None  # where the first ``spilled_tasks`` of them are kept for the resume
    spilled_tasks: int = 0
    not_kept: NotKept | None = field(default=None, repr=False, compare=False)
    store: Store | None = field(default=None, repr=False, compare=False)

    provider_calls = UsageAlias("calls")
    cache_hits = UsageAlias("cached_calls")
    call_errors = UsageAlias("errors")
    embedding_calls = UsageAlias("embedding_calls")
    input_tokens = UsageAlias("input_tokens")
    output_tokens = UsageAlias("output_tokens")
    cost_usd = UsageAlias("cost_usd")

    @cached_property
    def results(self) -> list[MetricResult]:
        """Every computed result of the run, repeat 0: those stored (read from the store the first time it is asked
        for) and those the store did not keep."""
        if self.store is None:
            return [] if self.not_kept is None else self.not_kept.results()
        if self.not_kept is None:
            return self.store.results(self.run_id)
        return list(merged_results(self.store, self.run_id, self.not_kept))

    @property
    def lost_rows(self) -> dict[str, int]:
        """Writes of the run's own record the store refused (its rows, dataset hash, status), by kind."""
        return {k: n for k, n in self.warnings.items() if k in RUN_RECORD_WRITES and n}

    @property
    def kept_whole(self) -> bool:
        """Whether the store keeps every computed result and the run's record: False means exit 4, never success."""
        return not self.unsaved_tasks and not self.lost_rows

    @property
    def scored_results(self) -> int:
        """How many results have a value (from the summary; no results loaded)."""
        return sum(s["scored"] for metrics in self.summary.values() for s in metrics.values())

    @property
    def all_cached(self) -> bool:
        """True when this invocation needed the provider for nothing: every call was a cache hit."""
        return self.usage.calls == 0 and self.usage.errors == 0


RUN_RECORD_WRITES = ("run_rows", "run_dataset", "run_status")  # ``warn`` kinds of the run's own record


def stream_summary(store: Store, run_id: str) -> dict[str, dict[str, dict[str, Any]]]:
    """``tallies.summarize`` over the stored results of repeat 0, read row by row (method, metric, value, reason)."""
    from rageval_core.run.tallies import summarize

    return summarize(_result_heads(store, run_id))


def merged_results(store: Store, run_id: str, not_kept: NotKept) -> Iterator[MetricResult]:
    """Every computed result of repeat 0: the stored ones (less those a result the store did not keep replaces),
    streamed, then the ones it did not keep."""
    superseded = not_kept.keys()
    stored = (r for scorer, r in store.iter_results(run_id) if (r.sample_id, scorer) not in superseded)
    return itertools.chain(stored, not_kept.results())


def merged_summary(store: Store, run_id: str, not_kept: NotKept) -> dict[str, dict[str, dict[str, Any]]]:
    """``tallies.summarize`` over ``merged_results``."""
    from rageval_core.run.tallies import summarize

    return summarize(merged_results(store, run_id, not_kept))


def stream_cost(store: Store, run_id: str) -> dict[str, Usage]:
    """``tallies.cost_by_method`` of the run's call log, summed by SQLite (a 1,000-row run logs ~7,000 calls;
    building a dict per call took as long as writing the run's results)."""
    return run_tallies.cost_by_method(store, run_id, DECOMPOSED)


def stream_cost_by_scorer(store: Store, run_id: str) -> dict[str, Usage]:
    """``tallies.cost_by_scorer`` over the call log, read row by row from its narrow copy (``call_light``)."""
    from rageval_core.run.tallies import cost_by_scorer

    return cost_by_scorer(run_tallies.lean_calls(store, run_id))


@dataclass
class _Head:
    method: str
    metric: str
    value: float | None
    unscored_reason: str | None
    details: dict[str, Any] | None = None  # only the re-ask counts and the judge id, when the result has them


def _result_heads(store: Store, run_id: str) -> Iterator[_Head]:
    for r in run_tallies.result_heads(store, run_id):
        details: dict[str, Any] = {"reask": {"asked": r.reasked, "recovered": r.recovered or 0}} if r.reasked else {}
        if r.judge:
            details["judge"] = r.judge
        yield _Head(r.method, r.metric, r.value, r.unscored_reason, details or None)


def load_run(
    store: Store,
    run_id: str,
    *,
    status: str | None = None,
    counters: Counters | None = None,
    wall_s: float = 0.0,
    total: int | None = None,
    done: int | None = None,
    skipped: int = 0,
    resumed: bool = False,
    not_kept: NotKept | None = None,
) -> Run:
    """A ``Run`` from the store (all sessions of a resumed run). Live counters, when given, describe this invocation.

    Summary and costs are computed by streaming the stored rows; ``Run.results`` is read only when asked for.
    """
    from rageval_core.run.plan import RunError
    from rageval_core.store.run_rows import count_valid_rows
    from rageval_core.store.run_rows import invalid_rows as stored_invalid_rows

    info = store.find_run(run_id)
    if info is None:
        raise RunError(f"no run {run_id!r}")
    invalid = stored_invalid_rows(store, info.id)
    cost = stream_cost(store, info.id)
    warnings = dict(info.warnings)
    if counters is None:
        usage = Usage.total(cost.values())
    else:
        usage = counters.usage
        warnings = dict(counters.warnings)
    n_valid = count_valid_rows(store, info.id) if total is None else 0
    repeats = int(info.settings.get("repeats", 1))
    return Run(
        run_id=info.id,
        status=status or info.status,
        provider=info.provider,
        model=info.model,
        summary=stream_summary(store, info.id) if not_kept is None else merged_summary(store, info.id, not_kept),
        cost=cost,
        invalid_rows=invalid,
        total_tasks=total if total is not None else n_valid * len(info.scorers) * repeats,
        done_tasks=done if done is not None else store.count_finished(info.id),
        skipped_tasks=skipped,
        usage=usage,
        wall_s=wall_s,
        resumed=resumed,
        repeats=repeats,
        warnings=warnings,
        unsaved_tasks=len(not_kept.tasks) if not_kept is not None else 0,
        spill_file=not_kept.spill_file if not_kept is not None else None,
        spilled_tasks=not_kept.spilled if not_kept is not None else 0,
        not_kept=not_kept,
        store=store,
    )
