"""``run_summary.cached`` builds each value once per run stamp, even when two threads (a read ahead and the
page that opens the run) ask for it at once; a failed build leaves the next caller to build its own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rageval_core.views import run_summary
from rageval_core.store.runs import Store

STAMP = ("done", 1)


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "runs.db")


def test_a_caller_waits_for_the_build_in_flight_instead_of_building_it_again(store: Store) -> None:
    started, release, calls = threading.Event(), threading.Event(), []

    def slow() -> list[int]:
        calls.append(threading.current_thread().name)
        started.set()
        assert release.wait(10)
        return [1, 2, 3]

    got: dict[str, object] = {}
    first = threading.Thread(target=lambda: got.update(first=run_summary.cached(store, "r1", "frame", slow, at=STAMP)))
    first.start()
    assert started.wait(10)
    assert run_summary.is_cached(store, "r1", "frame", STAMP)  # in flight: no read ahead starts beside it
    second = threading.Thread(target=lambda: got.update(second=run_summary.cached(store, "r1", "frame", slow, at=STAMP)))
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting, not building
    release.set()
    first.join(10), second.join(10)
    assert len(calls) == 1 and got["first"] is got["second"] == [1, 2, 3]
    assert run_summary.cached(store, "r1", "frame", slow, at=STAMP) is got["first"] and len(calls) == 1
    assert not run_summary.is_cached(store, "r1", "frame", ("done", 2))  # another stamp: built again
    assert run_summary.cached(store, "r1", "frame", lambda: [4], at=("done", 2)) == [4]


def test_when_the_build_in_flight_fails_the_waiting_caller_builds_its_own(store: Store) -> None:
    started, release = threading.Event(), threading.Event()

    def failing() -> list[int]:
        started.set()
        assert release.wait(10)
        raise OSError("database is locked")

    errors: list[BaseException] = []

    def first() -> None:
        try:
            run_summary.cached(store, "r2", "frame", failing, at=STAMP)
        except OSError as exc:
            errors.append(exc)

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(10)
    got: list[list[int]] = []
    waiter = threading.Thread(target=lambda: got.append(run_summary.cached(store, "r2", "frame", lambda: [7], at=STAMP)))
    waiter.start()
    release.set()
    thread.join(10), waiter.join(10)
    assert [str(e) for e in errors] == ["database is locked"] and got == [[7]]
    assert not run_summary.is_cached(store, "r2", "other", STAMP)


def test_a_finished_run_is_read_ahead_after_another_page_and_compare_then_reads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.scoring.metrics.registry import build_scorers
    from tests.support.runs import run_rows
    from tests.support.apptest import ROOT, assert_ok, start_app
    from tests.support.html_tables import page_tables
    from rageval_ui import read_ahead

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    ds = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
    stored = run_rows(ds.samples[:3], build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name,
                 dataset_digest=ds.content_hash)
    started: list[object] = []
    real = read_ahead.after_page
    monkeypatch.setattr(read_ahead, "after_page", lambda: started.append(real()) or started[-1])
    app = start_app(monkeypatch, str(tmp_path), check=False)
    app.switch_page("rageval_ui/app_pages/history.py").run()
    assert_ok(app)
    thread = next(t for t in started if t is not None)  # the newest run, finished: read ahead once
    thread.join(30)
    db = Store()
    assert run_summary.is_cached(db, stored.run_id, "costs", run_summary.stamp(db, stored.run_id))
    reads: list[str] = []
    real_frame = run_summary._run_frame
    monkeypatch.setattr(run_summary, "_run_frame", lambda *a: reads.append("frame") or real_frame(*a))
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert_ok(app)
    assert reads == [] and page_tables(app)  # drawn from what was read ahead
    assert all(t is None for t in started[started.index(thread) + 1:])  # nothing new to read: no other thread
    monkeypatch.setenv(read_ahead.ENV, "0")
    assert read_ahead.after_page() is None
