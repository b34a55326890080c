"""The run loop: rows × scorers on a thread pool, the project's one concurrency boundary.

Each (row, scorer) pair is one task. Tasks run on a pool with more threads than the LLM concurrency limit
so a task blocked on a dependency (a shared claim extraction, the next step of its own chain) never
leaves a model slot idle; the slots go first to the call with the most dependent calls still ahead of it,
then to the oldest task (longest-remaining-chain-first list scheduling), so no long chain is left to start
at the end and the tail of a run stays short (bench/runner.py: the last 0.25 s before the end had 7 of 16
slots busy instead of the last second tapering 15, 10, 3, 1). Tasks are taken from a generator in a
bounded window, and each row gets its own memo that is dropped when the row's last task ends, so memory
does not grow with the dataset; a file read while the run goes (``feed``) is read only as the window has room.
Finished tasks are written to the store at once (``persist.ResultSink``);
a resumed run skips them, and calls that finished but were never stored come back as cache hits from the
provider cache. Providers stay synchronous; there is no event loop anywhere.
"""

from __future__ import annotations

import contextvars
import dataclasses
import gc
import queue
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence, cast

from rageval_core.store import db
from rageval_core.scoring.judges.bound import judge_group, judge_settings
from rageval_core.llm.base import LLM, Embedder
from rageval_core.scoring.metrics.base import EvalContext, Memo, Scorer
from rageval_core.run.repeats import RepeatLLM
from rageval_core.run.execute import (
    _CURRENT,
    Counters,
    PriorityGate,
    RunEmbedder,
    RunLLM,
    TaskTag,
    default_embedder,
    embedding_settings,
    failed_results,
    judge_stacks,
)
from rageval_core.run import spill as spilling
from rageval_core.run.persist import ResultSink, Run, load_run, restore_spilled
from rageval_core.run.spill import NotKept, Reserve
from rageval_core.run.spec import RunSpec
from rageval_core.run.plan import (
    RunError,
    _check_resumable,
    _jsonable_options,
    dataset_hash,
    finished_pairs,
    scorer_chain_length,
    scorer_versions,
    task_order,
)
from rageval_core.run.feed import StreamFeed, check_same_file, comparable_versions
from rageval_core.store.runs import CANCELLED, DONE, FAILED, RowInfo, Store, new_run_id
from rageval_core.core.types import Sample, Usage, UsageAlias

if TYPE_CHECKING:
    from rageval_core.data.datasets.live import LiveDataset


@dataclass
class Progress:
    """What the progress callback receives after each finished task (and about twice a second): tasks done, and
    in ``usage`` this invocation's calls so far (provider calls with their tokens and cost, cache hits, errors)."""

    done: int
    total: int
    usage: Usage
    elapsed_s: float
    eta_s: float | None
    last_sample_id: str | None = None
    skipped: int = 0
    unsaved: int = 0  # finished tasks waiting for a locked store
    warnings: int = 0  # store writes lost beside results (call log, cache, the run's record)
    total_known: bool = True  # False while a file read as the run goes is not read to its end (total from its rows)

    calls = UsageAlias("calls")
    cached_calls = UsageAlias("cached_calls")
    errors = UsageAlias("errors")
    input_tokens = UsageAlias("input_tokens")
    output_tokens = UsageAlias("output_tokens")
    cost_usd = UsageAlias("cost_usd")

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else self.done / self.total


class _RowContexts:
    """One ``EvalContext`` (and memo) per row, repeat and judge configuration, alive while it has tasks in flight
    or to come. A repeat never reuses another's claim extraction, nor a judge another judge's; repeats 1+ send
    their requests through ``RepeatLLM``. ``llms`` maps a judge group ("" for the run's provider) to its LLM
    per repeat."""

    def __init__(self, llms: Mapping[str, Sequence[Any]], embedder: RunEmbedder, options: dict[str, Any]) -> None:
        self._llms, self._embedder, self._options = llms, embedder, options
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, int, str], list[Any]] = {}

    def open(self, sample_id: str, repeat: int, n_tasks: int, group: str = "") -> EvalContext:
        ctx = EvalContext(llm=self._llms[group][repeat], embedder=self._embedder, options=self._options, memo=Memo())
        with self._lock:
            self._rows[(sample_id, repeat, group)] = [ctx, n_tasks]
        return ctx

    def close_one(self, key: tuple[str, int, str]) -> None:
        with self._lock:
            entry = self._rows.get(key)
            if entry is not None:
                entry[1] -= 1
                if entry[1] <= 0:
                    del self._rows[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)


def _row_tasks(
    samples: Sequence[Sample], scorers: Sequence[Scorer], finished: set[tuple[str, str, int]], repeats: int
) -> Iterator[tuple[Sample, int, list[Scorer]]]:
    """Each row and repeat with the scorers still to run on it (longest chain first); those with none are left out."""
    order = task_order(scorers)
    for rep in range(repeats):
        for sample in samples:
            todo = [scorers[i] for i in order if (sample.id, scorers[i].name, rep) not in finished]
            if todo:
                yield sample, rep, todo


def run(
    spec: RunSpec,
    llm: LLM,
    embedder: Embedder | None = None,
    store: Store | None = None,
    *,
    judges: Mapping[str, LLM] | None = None,
    logs_calls: bool = False,
    embedding: Mapping[str, Any] | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    on_read: Callable[[int], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Run:
    """Run ``spec`` with built providers: score every (row, scorer) pair and store each finished task at once.

    ``llm`` and ``embedder`` (default the bundled offline encoder) answer the run; ``judges`` maps judge ids to
    their stacks (``session.for_run.build_for_run`` builds all of these from ``spec.provider``: pass its
    ``RunProviders`` fields). ``logs_calls`` says the stacks write the store's call log themselves (built with
    ``make_call_hook``); otherwise the runner logs each call. ``embedding`` is the embedding choice recorded
    with the run (default: what the embedder names itself).

    ``spec.run_id`` with ``spec.resume`` continues an existing run: finished pairs are skipped, pairs that
    ended in provider errors are redone (``retry_errors``). ``cancel`` stops scheduling, abandons calls in
    flight at their next step, and marks the run cancelled; nothing half-done is stored. A store locked by
    another process never stops the run: results it refuses are written when it lets go; at the end the run
    waits up to ``spec.store_patience_s`` (on the store's clock) and then keeps them in a spill file the next
    resume writes back.

    ``spec.samples`` may be a dataset read while the run goes (``datasets.live.LiveDataset``): the run then
    starts on its first rows and reads the next only as tasks are sent (memory O(concurrency), not O(rows));
    the rows, content hash, ``invalid_rows`` (then a callable) and ``late_settings()`` are written to the run
    once the reader reaches the end (``run.feed``). A resume checks the file against the SHA-256 of the file
    stored with the run. ``on_read(n)`` hears the good rows read so far (tests).

    ``spec.repeats=K`` scores every pair K times (repeat 0 is the ordinary run; the others vary the seed and
    bypass the response cache, see ``rageval_core.run.repeats``), each repeat stored under its index;
    ``repeat_temperature`` sets the temperature of every repeat. A resumed run keeps its own repeats.
    """
    store = store or Store()
    cancel = cancel or threading.Event()
    embedder = embedder or default_embedder()
    stacks = judge_stacks(spec.scorers, llm, not logs_calls, judges or {})
    freeze_imported()
    if spec.run_id is None:
        spec = dataclasses.replace(spec, run_id=new_run_id())
    room = spec.spill or spilling.reserve(store, str(spec.run_id), spec.planned_tasks, spec.spill_beside)
    try:
        opened = _open_run(spec, store, llm, embedder, embedding, room)
    except BaseException:
        room.release()
        raise
    return _Execution(spec, store, opened, stacks, embedder, cancel, clock, progress, on_read, room).execute()


@dataclass
class _Opened:
    """A run created or reopened in the store: what the loop needs to know about it."""

    run_id: str
    resumed: bool
    repeats: int
    repeat_temperature: float | None
    finished: set[tuple[str, str, int]]


def _open_run(spec: RunSpec, store: Store, llm: LLM, embedder: Embedder, embedding: Mapping[str, Any] | None,
              room: Reserve) -> _Opened:
    """Reopen the run a resume names (checked against this dataset and these scorers) or create a new one."""
    live = cast("LiveDataset", spec.samples) if spec.streamed else None
    plan_rows = spec.plan_rows()
    digest = spec.dataset_digest or (None if live is not None else dataset_hash(plan_rows))
    versions = scorer_versions(spec.scorers, plan_rows, spec.options)
    if spec.resume:
        return _resume(spec, store, llm, digest, versions)
    repeats = spec.repeats or 1
    rows = [] if live is not None else [RowInfo(s.id, i, s.category, True, None, s) for i, s in enumerate(spec.samples)]
    if live is None:
        start = len(rows)
        rows += [RowInfo(r.sample_id, start + i, r.category, False, r.error) for i, r in enumerate(_rows_of(spec.invalid_rows))]
    settings = {
        "concurrency": spec.concurrency, "options": _jsonable_options(spec.options), **judge_settings(spec.scorers),
        **spec.settings,
        **({"data_sha256": live.sha256} if live is not None else {}),
        **({"repeats": repeats, "repeat_temperature": spec.repeat_temperature}
           if repeats > 1 or spec.repeat_temperature is not None else {}),
        "embeddings": dict(embedding) if embedding is not None else embedding_settings(embedder),
        **({"spill_file": str(room.target)} if room.target is not None else {}),
    }
    run_id = store.create_run(
        scorers=spec.scorer_names, run_id=spec.run_id, dataset_name=spec.dataset_name, dataset_hash=digest,
        versions=versions, provider=llm.provider, model=llm.model,
        base_url=spec.provider.base_url if spec.provider is not None else None, settings=settings, rows=rows,
    )
    return _Opened(run_id, False, repeats, spec.repeat_temperature, set())


def _resume(spec: RunSpec, store: Store, llm: LLM, digest: str | None, versions: dict[str, Any]) -> _Opened:
    """The stored run ``spec.run_id``, checked to be the same dataset, scorers and repeats, set running again."""
    info = store.find_run(str(spec.run_id))
    if info is None:
        raise RunError(f"no run {spec.run_id!r} to resume")
    if spec.streamed:
        from rageval_core.scoring.metrics.steps import sample_language

        check_same_file(info, spec.samples)
        info.versions = comparable_versions(info.versions or {}, {sample_language(s) for s in spec.plan_rows()})
    elif info.dataset_hash and info.dataset_hash != digest:
        raise RunError(f"run {info.id} was made on a different dataset (hash {info.dataset_hash[:12]}…)")
    _check_resumable(info, spec.scorer_names, llm, versions)
    stored_repeats = int(info.settings.get("repeats", 1))
    if spec.repeats is not None and spec.repeats != stored_repeats:
        raise RunError(f"run {info.id} was made with {stored_repeats} repeat(s), not {spec.repeats}; resume it as it was")
    restore_spilled(store, info.id, spec.spill_beside, [str(info.settings.get("spill_file") or "")])
    if not spec.streamed and not store.keeps_samples(info.id):
        store.attach_samples(info.id, spec.plan_rows())  # a run stored before runs kept their rows: the same data, checked
    store.set_status(info.id, "running")
    finished = finished_pairs(store, info.id, retry_errors=spec.retry_errors)
    return _Opened(info.id, True, stored_repeats, info.settings.get("repeat_temperature"), finished)


class _Execution:
    """One run's pool: the wrapped providers, the row contexts, the result sink and the progress totals."""

    def __init__(
        self, spec: RunSpec, store: Store, opened: _Opened, stacks: dict[str, tuple[LLM, bool]], embedder: Embedder,
        cancel: threading.Event, clock: Callable[[], float], progress: Callable[[Progress], None] | None,
        on_read: Callable[[int], None] | None, room: Reserve,
    ) -> None:
        self.spec, self.store, self.opened, self.stacks, self.cancel, self.clock = spec, store, opened, stacks, cancel, clock
        self.progress, self.on_read, self.room = progress, on_read, room
        self.live = cast("LiveDataset", spec.samples) if spec.streamed else None
        self.counters = Counters()
        self.gate = PriorityGate(spec.concurrency, cancel)
        gated = spec.gate_embeddings
        if gated is None:
            gated = getattr(embedder, "provider", "") not in ("offline", "hash")
        run_embedder = RunEmbedder(embedder, self.gate, self.counters, gated=bool(gated))
        self.contexts = _RowContexts(self._repeat_llms(), run_embedder, dict(spec.options))
        self.sink = ResultSink(store, opened.run_id, patience_s=spec.store_patience_s)
        self.feed: StreamFeed | None = None
        self.done = 0
        self.total = self.skipped = 0
        self.started = clock()

    def _repeat_llms(self) -> dict[str, list[Any]]:
        """Per judge group, the LLM of each repeat: the runner's wrapper, varied by ``RepeatLLM`` for repeats 1+."""
        llms: dict[str, list[Any]] = {}
        temperature = self.opened.repeat_temperature
        for group, (group_llm, runner_logs) in self.stacks.items():
            run_llm = RunLLM(group_llm, self.gate, self.cancel, self.counters, self.store if runner_logs else None)
            llms[group] = [
                run_llm if rep == 0 and temperature is None else RepeatLLM(run_llm, rep, temperature)
                for rep in range(self.opened.repeats)
            ]
        return llms

    def _count(self) -> None:
        """The totals: every pair to run and those a resume skips (a streamed file's grow as it is read)."""
        spec, opened = self.spec, self.opened
        if self.live is not None:
            self.feed = StreamFeed(self.live, self.store, opened.run_id, spec.scorers, opened.finished, opened.repeats,
                                   spec.plan_rows(), spec.options)
            self.feed.on_read = self.on_read
            self.total, self.skipped = self.feed.total(), 0
            return
        names = set(spec.scorer_names)
        rows = spec.plan_rows()  # not streamed: every row
        ids = {s.id for s in rows}
        self.total = len(rows) * len(spec.scorers) * opened.repeats
        self.skipped = sum(1 for sid, n, rep in opened.finished if sid in ids and n in names and rep < opened.repeats)

    def work(self, priority: int, sample: Sample, scorer: Scorer, rep: int, ctx: EvalContext) -> bool:
        """One task on a pool thread: score, turn a failure into unscored results, store; False if abandoned."""
        tag = TaskTag(self.opened.run_id, sample.id, scorer.name, scorer.method, priority, chain=scorer_chain_length(scorer))
        group = judge_group(scorer)
        answered_by = self.stacks[group][0]
        token = _CURRENT.set(tag)
        try:
            if self.cancel.is_set():
                return False
            try:
                results = list(scorer.score(sample, ctx))
                if not results:
                    raise RuntimeError(f"scorer {scorer.name} returned no results")
            except Exception as exc:  # a scorer bug or provider failure is an unscored result, never a crash
                results = failed_results(sample, scorer, exc, answered_by)
            if tag.cancelled or (self.cancel.is_set() and any(r.unscored_reason == "cancelled" for r in results)):
                return False  # abandoned mid-way: store nothing, resume redoes it
            for r in results:
                r.provider = r.provider or answered_by.provider
                r.model = r.model or answered_by.model
            self.sink.save(sample.id, scorer.name, results, rep)  # written now, or kept for later; never raises for a lock
            return True
        finally:
            _CURRENT.reset(token)
            self.contexts.close_one((sample.id, rep, group))

    def report(self, last: str | None) -> None:
        """Hand the progress callback a snapshot of the totals."""
        if self.feed is not None:  # the totals grow exact as the file is read
            self.total, self.skipped = self.feed.total(), self.feed.skipped
        if self.progress is None:
            return
        elapsed = self.clock() - self.started
        remaining = self.total - self.skipped - self.done
        eta = (elapsed / self.done * remaining) if self.done else None
        c = self.counters
        with c.lock:
            snap = Progress(
                done=self.done + self.skipped, total=self.total, usage=c.usage, elapsed_s=elapsed, eta_s=eta,
                last_sample_id=last, skipped=self.skipped, unsaved=self.sink.unsaved,
                warnings=sum(c.warnings.values()), total_known=self.live is None or self.live.done,
            )
        self.progress(snap)

    def execute(self) -> Run:
        """Run the pool to the end (or the cancel), settle what the store refused, and read the run back."""
        self._count()
        status = DONE
        stop_listening = db.add_listener(lambda w: self.counters.warn(w.kind))
        self.report(None)
        workers = self.spec.workers or max(4, self.spec.concurrency * 3)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rageval-run")
        interrupted = abandon = False
        try:
            self._drive(pool, max(2 * workers, 2 * len(self.spec.scorers)))
            self._finish_feed()
            if self.cancel.is_set() and (self.done < self.total - self.skipped or (self.live is not None and not self.live.done)):
                status = CANCELLED
        except KeyboardInterrupt:
            # A second Ctrl-C: stop now. Calls in flight are abandoned (nothing half-done is stored, a resume
            # redoes them); waiting for them here is what made an abort take 38 s.
            self._stop()
            status, interrupted, abandon = CANCELLED, True, True
            raise
        except BaseException:
            self._stop()
            status, interrupted = FAILED, True
            raise
        finally:
            pool.shutdown(wait=not abandon, cancel_futures=True)
            not_kept = self._settle(interrupted)
            stop_listening()
            if not_kept is not None and status == DONE:
                status = FAILED  # finished, but not kept whole: never "done" until a resume writes the rest back
            self._set_status(status)
        return load_run(
            self.store, self.opened.run_id, status=status, counters=self.counters, wall_s=self.clock() - self.started,
            total=self.total, done=self.done + self.skipped, skipped=self.skipped, resumed=self.opened.resumed,
            not_kept=not_kept,
        )

    def _stop(self) -> None:
        self.cancel.set()
        self.gate.wake()

    def _drive(self, pool: ThreadPoolExecutor, window: int) -> None:
        """Keep up to ``window`` tasks in flight, taken from the rows in order, until none is left or the
        cancel; finished futures arrive on a queue (a done callback), so handling a completion costs O(1): no
        ``wait`` over every future in flight after each one (issue 14 measured 1.77 ms of main-thread CPU a
        task at 4,800 tasks that way)."""
        opened = self.opened
        rows_left = (self.feed.tasks() if self.feed is not None
                     else _row_tasks(self.spec.plan_rows(), self.spec.scorers, opened.finished, opened.repeats))
        futures: dict[Future[bool], tuple[str, int, str]] = {}
        pending: set[Future[bool]] = set()
        completed: queue.SimpleQueue[Future[bool]] = queue.SimpleQueue()
        priority = 0

        def fill() -> None:
            nonlocal priority
            while len(pending) < window and not self.cancel.is_set():
                nxt = next(rows_left, None)
                if nxt is None:
                    return
                sample, rep, todo = nxt
                by_group = Counter(judge_group(s) for s in todo)
                ctxs = {g: self.contexts.open(sample.id, rep, n, g) for g, n in by_group.items()}
                for scorer in todo:
                    group = judge_group(scorer)
                    fut = pool.submit(contextvars.copy_context().run, self.work, priority, sample, scorer, rep, ctxs[group])
                    futures[fut] = (sample.id, rep, group)
                    pending.add(fut)
                    fut.add_done_callback(completed.put)
                    priority += 1

        def take(block: bool) -> Future[bool] | None:
            try:
                return completed.get(timeout=0.5) if block else completed.get_nowait()
            except queue.Empty:
                return None

        fill()
        cancelled_seen = False
        while pending:
            last = None
            fut = take(block=True)
            while fut is not None:
                pending.discard(fut)
                key = futures.pop(fut)
                if fut.cancelled():
                    self.contexts.close_one(key)
                elif fut.result():
                    self.done += 1
                    last = key[0]
                fut = take(block=False)
            self.sink.retry_due()
            if self.cancel.is_set() and not cancelled_seen:
                cancelled_seen = True
                for other in list(pending):
                    other.cancel()
                self.gate.wake()
            fill()
            self.report(last)

    def _finish_feed(self) -> None:
        """A streamed file read to its end: write the run's rows, hash, bad rows and late settings."""
        if self.feed is None:
            return
        assert self.live is not None  # a feed reads a streamed file
        self.report(None)
        if self.live.done:
            late = self.spec.late_settings
            try:
                self.feed.finish(_rows_of(self.spec.invalid_rows), late() if late is not None else {})
            except db.STORE_ERRORS:
                self.counters.warn("run_dataset")  # hash and bad rows not written; every result is

    def _settle(self, interrupted: bool) -> NotKept | None:
        """After the pool: the streamed rows' table, then the results the store refused (waited for, or spilled)."""
        if self.feed is not None and not self.feed.flush_rows():
            self.counters.warn("run_rows")  # rows read but not listed in the run's table (their results are stored)
        return self.sink.settle(self.spec.store_patience_s, interrupted, lambda: self.report(None), self.room)

    def _set_status(self, status: str) -> None:
        try:
            self.store.set_status(self.opened.run_id, status, warnings=dict(self.counters.warnings))
        except db.STORE_ERRORS:
            self.counters.warn("run_status")  # the run stays "running" in the store; a resume still works


_frozen = threading.Event()


def freeze_imported() -> None:
    """Once per process, when the first run has built its providers: move every object alive now (the
    modules, the SDK's ~650 answer models and their validators) to the collector's permanent generation, so
    the run's full collections scan what the run made, not the imports again (bench/runner.py: 0.19 s of
    full collections a 48-row run before, 0.11 s after, each one a pause of every thread). Nothing is kept
    alive by it; only cyclic garbage that exists at that moment is never collected, once."""
    if not _frozen.is_set():
        _frozen.set()
        gc.freeze()


def _rows_of(invalid_rows: Sequence[RowInfo] | Callable[[], Sequence[RowInfo]]) -> Sequence[RowInfo]:
    return invalid_rows() if callable(invalid_rows) else invalid_rows
