"""A store locked by another process: the run goes on, every finished result is saved, lost log or cache
writes are counted warnings. The lock is a real second sqlite3 connection holding BEGIN IMMEDIATE; the
waits between retries go through a FakeClock, whose time moves only when someone waits."""

import json
import sqlite3
import threading

from rageval_core.store import db
from rageval_core.llm.base import Completion, LLMRequest, Message
from rageval_core.llm.transport.cache import CachedLLM, ResponseCache
from rageval_core.core.clock import FakeClock
from tests.support.runs import run_rows
from rageval_core.run.persist import ResultSink, spill_path
from rageval_core.store.runs import Store
from rageval_core.core.types import MetricResult
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM
from tests.run.test_runner import ValueScorer, samples

BUSY = 0.02  # seconds SQLite waits for the outside lock before an attempt fails


class OutsideLock:
    """Another connection holding the write lock from ``take()`` until the clock passes ``release_at``."""

    def __init__(self, path, clock: "ReleasingClock", release_at: float) -> None:
        self.conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.clock, self.release_at = clock, release_at
        self.held = self.released = False
        self.taken_at: float | None = None
        self._lock = threading.Lock()
        clock.watchers.append(self.maybe_release)

    def take(self) -> None:
        with self._lock:
            if not self.held and not self.released:
                self.conn.execute("BEGIN IMMEDIATE")
                self.held, self.taken_at = True, self.clock.now()

    def maybe_release(self, now: float) -> None:
        with self._lock:
            if self.held and now - self.taken_at >= self.release_at:
                self.conn.execute("ROLLBACK")
                self.held, self.released = False, True


class ReleasingClock(FakeClock):
    def __init__(self) -> None:
        super().__init__()
        self.watchers = []

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        for watch in self.watchers:
            watch(self.now())


def test_a_lock_held_past_the_busy_timeout_leaves_the_run_going_and_every_result_saved(tmp_path):
    path = tmp_path / "r.sqlite"
    clock = ReleasingClock()
    store = Store(path, clock=clock, busy_timeout_s=BUSY)
    outside = OutsideLock(path, clock, release_at=70.0)  # the 70 s lock that crashed a run before

    def answer(req: LLMRequest):
        if "faithfulness 2 " in req.prompt_text:
            outside.take()  # taken mid-run, after row 1 may already be stored
        return {"v": 1.0}

    result = run_rows(samples(6), [ValueScorer(), ValueScorer("judge:rubric5", "judge:rubric5", ("faithfulness",), "judge")],
                 ScriptedLLM(default=answer), HashEmbedder(), store=store, concurrency=2)

    assert outside.taken_at is not None and outside.released  # the lock really was held, then let go
    assert max(clock.sleeps) >= 1.0 and clock.now() - outside.taken_at >= 70.0  # waits went through the clock
    assert result.status == "done" and result.done_tasks == result.total_tasks == 12
    saved = store.results(result.run_id)
    assert len(saved) == 12 and all(r.value == 1.0 for r in saved)  # nothing became provider_error
    assert result.summary["decomposed"]["faithfulness"]["scored"] == 6
    assert result.warnings.get("call_log", 0) >= 1  # lost log writes are counted, not raised
    assert store.get_run(result.run_id).status == "done"
    assert store.get_run(result.run_id).warnings == result.warnings


def test_results_the_store_refuses_to_the_end_are_spilled_and_the_resume_writes_them_back(tmp_path):
    path = tmp_path / "r.sqlite"
    clock = ReleasingClock()
    store = Store(path, clock=clock, busy_timeout_s=BUSY)
    outside = OutsideLock(path, clock, release_at=10_000.0)
    llm = ScriptedLLM(default=lambda req: (outside.take(), {"v": 0.5})[1])

    result = run_rows(samples(3), [ValueScorer()], llm, HashEmbedder(), store=store, concurrency=1, store_patience_s=30.0)

    assert result.unsaved_tasks == 3 and result.spill_file == str(spill_path(store, result.run_id))
    kept = [json.loads(line) for line in open(result.spill_file, encoding="utf-8")]
    assert sorted(k["sample_id"] for k in kept) == ["1", "2", "3"]
    outside.conn.execute("ROLLBACK")
    outside.held = False

    again = run_rows(samples(3), [ValueScorer()], llm, HashEmbedder(), store=store, run_id=result.run_id, resume=True)
    assert again.skipped_tasks == 3 and len(llm.requests) == 3  # restored from the spill file, not asked again
    assert [r.value for r in store.results(result.run_id)] == [0.5, 0.5, 0.5]
    assert not spill_path(store, result.run_id).exists()


def test_the_sink_keeps_a_refused_task_and_writes_it_when_the_lock_goes(tmp_path):
    path = tmp_path / "r.sqlite"
    clock = ReleasingClock()
    store = Store(path, clock=clock, busy_timeout_s=BUSY)
    rid = store.create_run(scorers=["faithfulness"])
    outside = OutsideLock(path, clock, release_at=5.0)
    outside.take()
    sink = ResultSink(store, rid)
    sink.save("1", "faithfulness", [MetricResult("1", "faithfulness", "decomposed", 1.0)])
    sink.save("2", "faithfulness", [MetricResult("2", "faithfulness", "decomposed", 0.0)])
    assert sink.unsaved == 2 and sink.deferred == 2 and store.results(rid) == []
    assert clock.sleeps[: db.DEFAULT_ATTEMPTS - 1] == list(db.BACKOFF_S[: db.DEFAULT_ATTEMPTS - 1])
    assert sink.drain(patience_s=60.0)
    assert sink.unsaved == 0 and [r.sample_id for r in store.results(rid)] == ["1", "2"]


def test_a_cache_write_refused_by_a_lock_is_a_warning_and_the_answer_still_comes_back(tmp_path):
    path = tmp_path / "c.sqlite"
    clock = ReleasingClock()
    cache = ResponseCache(path, clock=clock, busy_timeout_s=BUSY)
    outside = OutsideLock(path, clock, release_at=10_000.0)
    outside.take()
    seen = []
    stop = db.add_listener(seen.append)
    try:
        inner = ScriptedLLM(default=lambda req: {"v": 1})
        completion = CachedLLM(inner, cache).complete(LLMRequest("judge", (Message("user", "hi"),)))
    finally:
        stop()
        outside.conn.execute("ROLLBACK")
    assert isinstance(completion, Completion) and json.loads(completion.text) == {"v": 1}
    assert [w.kind for w in seen] == ["cache"] and "locked" in seen[0].message
    assert cache.count() == 0


def test_store_uses_wal_and_the_busy_timeout(tmp_path):
    store = Store(tmp_path / "r.sqlite", busy_timeout_s=1.5)
    conn = store._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1500
