"""The call log's group commit (runner.calllog), the request key memo, and the collector's freeze at a run's start."""

import subprocess
import sys
import threading
from pathlib import Path

from rageval_core.store import db
from rageval_core.llm.base import LLMRequest, Message
from rageval_core.run import calllog
from rageval_core.run.calllog import CallLogWriter, writer_for
from rageval_core.store.runs import CallEntry, Store

ROOT = Path(__file__).resolve().parents[2]


def _entry(i: int, run_id: str = "r") -> CallEntry:
    return CallEntry(run_id, str(i), "faithfulness", "decomposed", "verify_claims", f"k{i}", prompt=f"p{i}")


class SlowStore(Store):
    """A store whose first call-log transaction waits until the test lets it go."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.entered = threading.Event()
        self.go = threading.Event()
        self.batches: list[int] = []

    def log_calls(self, entries):
        self.batches.append(len(entries))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.go.wait(30)
        super().log_calls(entries)


def test_workers_leave_their_entries_to_the_writer_at_work_and_none_is_lost(tmp_path):
    store = SlowStore(tmp_path / "s.sqlite")
    writer = CallLogWriter(store)
    first = threading.Thread(target=writer.add, args=(_entry(0),))
    first.start()
    assert store.entered.wait(30)  # thread 1 is writing (and holds the write lock)
    for i in range(1, 6):
        writer.add(_entry(i))  # returns at once: queued for the writer at work, not written by this thread
    assert store.calls("r") == []
    store.go.set()
    first.join(30)
    assert not first.is_alive()
    assert [c.sample_id for c in store.calls("r")] == [str(i) for i in range(6)]  # in the order logged
    assert store.batches == [1, 5]  # two transactions for six entries
    assert writer.transactions == 2


def test_a_full_queue_makes_the_next_worker_wait_for_the_writer(tmp_path):
    store = SlowStore(tmp_path / "s.sqlite")
    writer = CallLogWriter(store, max_queued=2)
    first = threading.Thread(target=writer.add, args=(_entry(0),))
    first.start()
    assert store.entered.wait(30)
    writer.add(_entry(1))
    writer.add(_entry(2))
    third = threading.Thread(target=writer.add, args=(_entry(3),))  # 3 queued > max_queued: waits for the lock
    third.start()
    third.join(0.3)
    assert third.is_alive()
    store.go.set()
    first.join(30)
    third.join(30)
    assert not third.is_alive()
    assert len(store.calls("r")) == 4


def test_a_refused_batch_is_one_warning_per_entry_never_an_error(tmp_path):
    class BusyStore(Store):
        def log_calls(self, entries):
            raise db.StoreBusy("database is locked")

    warnings = []
    stop = db.add_listener(lambda w: warnings.append(w.kind))
    try:
        writer = CallLogWriter(BusyStore(tmp_path / "b.sqlite"))
        writer.add(_entry(0))
        writer.add(_entry(1))
    finally:
        stop()
    assert warnings == ["call_log", "call_log"]


def test_one_writer_per_store_and_the_runner_logs_through_it(tmp_path):
    store = Store(tmp_path / "w.sqlite")
    assert writer_for(store) is writer_for(store)
    assert writer_for(Store(tmp_path / "w.sqlite")) is not writer_for(store)
    from rageval_core.run.execute import log_safely

    log_safely(store, _entry(7))
    assert [c.request_key for c in store.calls("r")] == ["k7"]
    assert writer_for(store).transactions == 1
    writer_for(store).flush()  # nothing queued: no transaction
    assert writer_for(store).transactions == 1
    assert len(calllog._WRITERS) >= 1


def test_the_request_key_and_prompt_are_memoised_and_follow_a_replace():
    import dataclasses
    import hashlib

    from rageval_core.llm.base import canonical_json

    request = LLMRequest("judge", (Message("system", "s"), Message("user", "u")), schema={"type": "object"})
    expected = hashlib.sha256(canonical_json(request.key_payload()).encode("utf-8")).hexdigest()
    assert request.key() == expected and request.key() == expected
    assert request.prompt_text == "[system]\ns\n\n[user]\nu"
    other = dataclasses.replace(request, messages=(Message("user", "v"),))
    assert other.key() != expected and other.prompt_text == "[user]\nv"
    assert request == LLMRequest("judge", (Message("system", "s"), Message("user", "u")), schema={"type": "object"})


def test_a_run_freezes_what_is_imported_once_per_process():
    code = (
        "import gc\n"
        "from rageval_core.run.loop import freeze_imported\n"
        "assert gc.get_freeze_count() == 0\n"
        "freeze_imported(); n = gc.get_freeze_count()\n"
        "x = [[] for _ in range(1000)]\n"
        "freeze_imported()\n"
        "print(n > 1000, gc.get_freeze_count() == n)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True"


def test_every_run_asks_for_the_freeze_after_building_its_providers(tmp_path, monkeypatch):
    from rageval_core.run import loop
    from tests.support.scripted_llm import HashEmbedder, ScriptedLLM
    from tests.run.test_runner import ValueScorer, answer, samples

    asked = []
    monkeypatch.setattr(loop, "freeze_imported", lambda: asked.append(True))
    llm = ScriptedLLM(default=answer(lambda req: 0.5))
    done = loop.run(loop.RunSpec(samples(2), [ValueScorer()]), llm, HashEmbedder(), Store(tmp_path / "f.sqlite"))
    assert asked == [True]
    assert sorted(c.sample_id for c in Store(tmp_path / "f.sqlite").calls(done.run_id)) == ["1", "2"]
