"""Issue 27: a run the app starts over HTTP gets the CLI's allocator and SQLite limits (cli/allocator.py), before
its worker threads start; an offline run leaves the defaults. Checked on the settings themselves: SQLite's soft
heap limit as the library reports it."""

from __future__ import annotations

import sqlite3

from rageval_core.session import allocator
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.samples import DROPOUT_JA
from rageval_ui import jobs


def _soft_heap_limit() -> int:
    with sqlite3.connect(":memory:") as conn:
        return int(conn.execute("PRAGMA soft_heap_limit").fetchone()[0])


def test_an_http_run_from_the_app_applies_the_cli_limits_and_an_offline_one_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    before = _soft_heap_limit()
    calls: list[str] = []
    monkeypatch.setattr(allocator, "map_socket_reads", lambda *a: calls.append("mmap") or True)
    monkeypatch.setattr(allocator, "limit_malloc_arenas", lambda *a: calls.append("arenas") or True)
    try:
        allocator.limit_sqlite_heap(0)
        job = jobs.start(jobs.evaluation_spec([DROPOUT_JA], build_scorers(["faithfulness"]), ProviderConfig(), dataset_name="d",
                                                    dataset_hash="h"))
        job._thread.join(120)
        assert calls == [] and _soft_heap_limit() == 0  # offline: glibc's and SQLite's defaults kept
        with FakeLLMServer() as server:
            cfg = ProviderConfig(provider="openai-compatible", base_url=server.openai_base_url, model="m", cache=False)
            job = jobs.start(jobs.evaluation_spec([DROPOUT_JA], build_scorers(["faithfulness"]), cfg, dataset_name="d",
                                                  dataset_hash="h"))
            job._thread.join(120)
        assert job.error is None and job.result is not None
        assert calls == ["arenas", "mmap"] and _soft_heap_limit() == allocator.SQLITE_HEAP
    finally:
        allocator.limit_sqlite_heap(before)
