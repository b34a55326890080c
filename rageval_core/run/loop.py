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
import gc
import queue
import sqlite3
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

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
    build_from_config,
    default_embedder,
    embedding_settings,
    failed_results,
    judge_stacks,
    needs_embeddings,
)
from rageval_core.run.persist import ResultSink, Run, load_run, restore_spilled
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
from rageval_core.run import feed as feeds
from rageval_core.run.feed import StreamFeed, check_same_file, comparable_versions
from rageval_core.store.runs import CANCELLED, DONE, FAILED, RowInfo, Store
from rageval_core.core.types import Sample


@dataclass
class Progress:
    """What the progress callback receives after each finished task (and about twice a second)."""

    done: int
    total: int
    calls: int
    cached_calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    elapsed_s: float
    eta_s: float | None
    last_sample_id: str | None = None
    skipped: int = 0
    unsaved: int = 0  # finished tasks waiting for a locked store
    warnings: int = 0  # call-log / cache writes lost (results unaffected)
    total_known: bool = True  # False while a file read as the run goes is not read to its end (total from its rows)

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else self.done / self.total


class _RowContexts:
    """One ``EvalContext`` (and memo) per row, repeat and judge configuration, alive while it has tasks in flight
    or to come. A repeat never reuses another's claim extraction, nor a judge another judge's; repeats 1+ send
    their requests through ``RepeatLLM``. ``llms`` maps a judge group ("" for the run's provider) to its LLM
    per repeat."""

    def __init__(self, llms: Mapping[str, Sequence[Any]], embedder: Any, options: dict[str, Any]) -> None:
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
    samples: Sequence[Sample],
    scorers: Sequence[Scorer],
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    *,
    config: Any = None,
    store: Store | None = None,
    concurrency: int = 8,
    workers: int | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    run_id: str | None = None,
    resume: bool = False,
    retry_errors: bool = True,
    dataset_name: str | None = None,
    dataset_digest: str | None = None,
    invalid_rows: Sequence[RowInfo] | Callable[[], Sequence[RowInfo]] = (),
    settings: Mapping[str, Any] | None = None,
    late_settings: Callable[[], Mapping[str, Any]] | None = None,
    on_read: Callable[[int], None] | None = None,
    log_calls: bool | None = None,
    gate_embeddings: bool | None = None,
    clock: Callable[[], float] = time.monotonic,
    store_patience_s: float = 600.0,
    repeats: int | None = None,
    repeat_temperature: float | None = None,
) -> Run:
    """Score every (row, scorer) pair and store each finished task at once.

    Pass either ``llm`` (+ ``embedder``) or a providers ``config`` (``ProviderConfig``): with a config
    the runner builds the full provider stack itself with the store's call log as ``call_hook`` and the
    response cache in the store's database. With a bare ``llm`` the runner logs calls itself unless
    ``log_calls=False`` (use that when the llm was built with ``make_call_hook``).

    ``run_id`` with ``resume=True`` continues an existing run: finished pairs are skipped, pairs that
    ended in provider errors are redone (``retry_errors``). ``cancel`` stops scheduling, abandons calls
    in flight at their next step, and marks the run cancelled; nothing half-done is stored. A store locked
    by another process never stops the run: results it refuses are written when it lets go; at the end the
    run waits up to ``store_patience_s`` (on the store's clock) and then keeps them in a spill file the
    next resume writes back.

    ``samples`` may be a dataset read while the run goes (``datasets.live.LiveDataset``): the run then starts on
    its first rows and reads the next only as tasks are sent (memory O(concurrency), not O(rows)); the rows,
    content hash, ``invalid_rows`` (then a callable) and ``late_settings()`` are written to the run once the
    reader reaches the end (``runner.feed``). A resume checks the file against the SHA-256 of the file stored
    with the run. ``on_read(n)`` hears the good rows read so far (tests).

    ``repeats=K`` scores every pair K times (repeat 0 is the ordinary run; the others vary the seed and
    bypass the response cache, see ``rageval_core.run.repeats``), each repeat stored under its index;
    ``repeat_temperature`` sets the temperature of every repeat. A resumed run keeps its own repeats.
    """
    store = store or Store()
    cancel = cancel or threading.Event()
    options = dict(options or {})
    live = samples if getattr(samples, "streamed", False) else None  # a file read while the run goes (datasets.live)
    if live is None:
        samples = list(samples)
        plan_rows: Sequence[Sample] = samples
    else:
        plan_rows = live.head(feeds.HEAD_ROWS)  # the plan is made on the first rows; the rest is read as tasks are sent
    scorers = list(scorers)
    names = [s.name for s in scorers]
    if len(set(names)) != len(names):
        raise RunError(f"scorer names must be unique: {names}")
    if live is None and len({s.id for s in samples}) != len(samples):
        raise RunError("sample ids must be unique within a run")

    base_url = None
    embedder_from_config = config is not None and embedder is None
    if config is not None:
        llm, embedder = build_from_config(
            config, store, llm, embedder, needs_embeddings=needs_embeddings(plan_rows, scorers), cancel=cancel
        )
        base_url = getattr(config, "base_url", None)
        if log_calls is None:
            log_calls = False
    if llm is None:
        raise RunError("run() needs an llm or a provider config")
    if embedder is None:
        embedder = default_embedder()
    if log_calls is None:
        log_calls = True
    stacks = judge_stacks(scorers, llm, bool(log_calls), store, cancel=cancel)
    freeze_imported()
    if gate_embeddings is None:
        gate_embeddings = getattr(embedder, "provider", "") not in ("offline", "hash")

    if repeats is not None and repeats < 1:
        raise RunError("repeats must be at least 1")
    digest = dataset_digest or (None if live is not None else dataset_hash(samples))
    versions = scorer_versions(scorers, plan_rows, options)
    resumed = False
    if resume:
        if not run_id:
            raise RunError("resume needs a run id")
        info = store.find_run(run_id)
        if info is None:
            raise RunError(f"no run {run_id!r} to resume")
        if live is not None:
            from rageval_core.scoring.metrics.steps import sample_language

            check_same_file(info, live)
            info.versions = comparable_versions(info.versions or {}, {sample_language(s) for s in plan_rows})
        elif info.dataset_hash and info.dataset_hash != digest:
            raise RunError(f"run {info.id} was made on a different dataset (hash {info.dataset_hash[:12]}…)")
        _check_resumable(info, names, llm, versions)
        stored_repeats = int(info.settings.get("repeats", 1))
        if repeats is not None and repeats != stored_repeats:
            raise RunError(f"run {info.id} was made with {stored_repeats} repeat(s), not {repeats}; resume it as it was")
        repeats = stored_repeats
        repeat_temperature = info.settings.get("repeat_temperature")
        run_id = info.id
        resumed = True
        restore_spilled(store, run_id)
        store.set_status(run_id, "running")
    else:
        repeats = repeats or 1
        rows = [] if live is not None else [RowInfo(s.id, i, s.category, True, None) for i, s in enumerate(samples)]
        start = len(rows)
        if live is None:
            rows += [RowInfo(r.sample_id, start + i, r.category, False, r.error) for i, r in enumerate(_rows_of(invalid_rows))]
        run_id = store.create_run(
            scorers=names,
            run_id=run_id,
            dataset_name=dataset_name,
            dataset_hash=digest,
            versions=versions,
            provider=llm.provider,
            model=llm.model,
            base_url=base_url,
            settings={
                "concurrency": concurrency, "options": _jsonable_options(options), **judge_settings(scorers),
                **dict(settings or {}),
                **({"data_sha256": live.sha256} if live is not None else {}),
                **({"repeats": repeats, "repeat_temperature": repeat_temperature} if repeats > 1 or repeat_temperature is not None else {}),
                "embeddings": embedding_settings(config if embedder_from_config else None, embedder),
            },
            rows=rows,
        )
        del rows

    finished = finished_pairs(store, run_id, retry_errors=retry_errors) if resumed else set()
    feed = None if live is None else StreamFeed(live, store, run_id, scorers, finished, repeats, plan_rows, options)
    if feed is not None:
        feed.on_read = on_read
        total = feed.total()
        skipped = 0
    else:
        total = len(samples) * len(scorers) * repeats
        ids = {s.id for s in samples}
        skipped = sum(1 for sid, n, rep in finished if sid in ids and n in names and rep < repeats)
    to_do = total - skipped

    counters = Counters()
    gate = PriorityGate(concurrency, cancel)
    run_embedder = RunEmbedder(embedder, gate, counters, gated=bool(gate_embeddings))
    llms: dict[str, list[Any]] = {}
    for group, (group_llm, logs_here) in stacks.items():
        run_llm = RunLLM(group_llm, gate, cancel, counters, store if logs_here else None)
        llms[group] = [
            run_llm if rep == 0 and repeat_temperature is None else RepeatLLM(run_llm, rep, repeat_temperature)
            for rep in range(repeats)
        ]
    contexts = _RowContexts(llms, run_embedder, options)
    sink = ResultSink(store, run_id, patience_s=store_patience_s)
    started = clock()

    def work(priority: int, sample: Sample, scorer: Scorer, rep: int, ctx: EvalContext) -> bool:
        tag = TaskTag(run_id, sample.id, scorer.name, scorer.method, priority, chain=scorer_chain_length(scorer))
        group = judge_group(scorer)
        answered_by = stacks[group][0]
        token = _CURRENT.set(tag)
        try:
            if cancel.is_set():
                return False
            try:
                results = list(scorer.score(sample, ctx))
                if not results:
                    raise RuntimeError(f"scorer {scorer.name} returned no results")
            except Exception as exc:  # a scorer bug or provider failure is an unscored result, never a crash
                results = failed_results(sample, scorer, exc, answered_by)
            if tag.cancelled or (cancel.is_set() and any(r.unscored_reason == "cancelled" for r in results)):
                return False  # abandoned mid-way: store nothing, resume redoes it
            for r in results:
                r.provider = r.provider or answered_by.provider
                r.model = r.model or answered_by.model
            sink.save(sample.id, scorer.name, results, rep)  # written now, or kept for later; never raises for a lock
            return True
        finally:
            _CURRENT.reset(token)
            contexts.close_one((sample.id, rep, group))

    done = 0
    status = DONE
    workers = workers or max(4, concurrency * 3)
    window = max(2 * workers, 2 * len(scorers))

    def report(last: str | None) -> None:
        nonlocal total, skipped, to_do
        if feed is not None:  # the totals grow exact as the file is read
            total, skipped = feed.total(), feed.skipped
            to_do = total - skipped
        if progress is None:
            return
        elapsed = clock() - started
        remaining = to_do - done
        eta = (elapsed / done * remaining) if done else None
        with counters.lock:
            snap = Progress(
                done=done + skipped, total=total, calls=counters.calls, cached_calls=counters.cached_calls,
                errors=counters.errors, input_tokens=counters.input_tokens, output_tokens=counters.output_tokens,
                cost_usd=counters.cost_usd, elapsed_s=elapsed, eta_s=eta, last_sample_id=last, skipped=skipped,
                unsaved=sink.unsaved, warnings=sum(counters.warnings.values()), total_known=live is None or live.done,
            )
        progress(snap)

    stop_listening = db.add_listener(lambda w: counters.warn(w.kind))
    report(None)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rageval-run")
    interrupted = abandon = False
    try:
        futures: dict[Future, tuple[str, int, str]] = {}
        rows_left = feed.tasks() if feed is not None else _row_tasks(samples, scorers, finished, repeats)
        priority = 0
        pending: set[Future] = set()
        # Finished futures arrive on a queue (a done callback), so handling a completion costs O(1): no
        # ``wait`` over every future in flight after each one (issue 14 measured 1.77 ms of main-thread CPU
        # a task at 4,800 tasks that way).
        completed: queue.SimpleQueue[Future] = queue.SimpleQueue()

        def fill() -> None:
            nonlocal priority
            while len(pending) < window and not cancel.is_set():
                nxt = next(rows_left, None)
                if nxt is None:
                    return
                sample, rep, todo = nxt
                by_group = Counter(judge_group(s) for s in todo)
                ctxs = {g: contexts.open(sample.id, rep, n, g) for g, n in by_group.items()}
                for scorer in todo:
                    group = judge_group(scorer)
                    fut = pool.submit(contextvars.copy_context().run, work, priority, sample, scorer, rep, ctxs[group])
                    futures[fut] = (sample.id, rep, group)
                    pending.add(fut)
                    fut.add_done_callback(completed.put)
                    priority += 1

        def take(block: bool) -> Future | None:
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
                    contexts.close_one(key)
                elif fut.result():
                    done += 1
                    last = key[0]
                fut = take(block=False)
            sink.retry_due()
            if cancel.is_set() and not cancelled_seen:
                cancelled_seen = True
                for other in list(pending):
                    other.cancel()
                gate.wake()
            fill()
            report(last)
        if feed is not None:
            report(None)
            if live.done:
                try:
                    feed.finish(_rows_of(invalid_rows), late_settings() if late_settings is not None else {})
                except (db.StoreBusy, sqlite3.Error):
                    counters.warn("run_dataset")  # hash and bad rows not written; every result is
        if cancel.is_set() and (done < to_do or (live is not None and not live.done)):
            status = CANCELLED
    except KeyboardInterrupt:
        # A second Ctrl-C: stop now. Calls in flight are abandoned (nothing half-done is stored, a resume
        # redoes them); waiting for them here is what made an abort take 38 s.
        cancel.set()
        gate.wake()
        status = CANCELLED
        interrupted = abandon = True
        raise
    except BaseException:
        cancel.set()
        gate.wake()
        status = FAILED
        interrupted = True
        raise
    finally:
        pool.shutdown(wait=not abandon, cancel_futures=True)
        if feed is not None and not feed.flush_rows():
            counters.warn("run_rows")  # rows read but not listed in the run's table (their results are stored)
        spill = _settle(sink, store_patience_s, interrupted, lambda: report(None))
        stop_listening()
        try:
            store.set_status(run_id, status, warnings=dict(counters.warnings))
        except (db.StoreBusy, sqlite3.Error):
            counters.warn("run_status")  # the run stays "running" in the store; a resume still works
    return load_run(
        store, run_id, status=status, counters=counters, wall_s=clock() - started, total=total,
        done=done + skipped, skipped=skipped, resumed=resumed, unsaved=(spill[0], spill[1]),
    )


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


def _settle(sink: ResultSink, patience_s: float, interrupted: bool, on_wait: Callable[[], None]) -> tuple[int, str | None]:
    """Results the store refused: wait for it (not when interrupted), else keep them in the spill file."""
    if not sink.unsaved:
        return 0, None
    if not interrupted and sink.drain(patience_s, on_wait=lambda _n: on_wait()):
        return 0, None
    kept = sink.unsaved
    path = sink.spill()
    return kept, None if path is None else str(path)


def _rows_of(invalid_rows: Sequence[RowInfo] | Callable[[], Sequence[RowInfo]]) -> Sequence[RowInfo]:
    return invalid_rows() if callable(invalid_rows) else invalid_rows
