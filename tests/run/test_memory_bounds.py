"""What a long run keeps stays bounded: before its worker threads start, the CLI caps glibc's malloc arenas, maps
64 KiB socket reads on their own and caps SQLite's heap (``cli/allocator.py``); the rate limiter keeps the last
starts, not every one; the redaction memos keep to their budgets."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Eight threads alive at once, each allocating; then glibc's own report of its arenas on stderr.
_THREADS = """
import ctypes, sys, threading
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "limit":
    from rageval_core.session.allocator import limit_malloc_arenas
    assert limit_malloc_arenas(2)
barrier = threading.Barrier(8)
def work():
    keep = [bytes(2000) for _ in range(200)]
    barrier.wait()
    keep.clear()
threads = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
ctypes.CDLL(None).malloc_stats()
"""


def _glibc() -> bool:
    try:
        ctypes.CDLL(None).gnu_get_libc_version  # noqa: B018
        return sys.platform.startswith("linux")
    except (OSError, AttributeError):
        return False


def _arenas(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run([sys.executable, "-c", _THREADS, str(ROOT), mode], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return sum(1 for line in done.stderr.splitlines() if line.startswith("Arena "))


@pytest.mark.skipif(not _glibc(), reason="malloc arenas are glibc's (this libc is not glibc)")
def test_a_cli_run_keeps_at_most_two_arenas_for_its_threads() -> None:
    assert _arenas("free") > 2  # without the cap, threads get arenas of their own
    assert 1 <= _arenas("limit") <= 2


def test_an_explicit_malloc_arena_max_is_left_alone(monkeypatch) -> None:
    from rageval_core.session.allocator import limit_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False


@pytest.mark.skipif(not _glibc(), reason="the mmap threshold is glibc's (this libc is not glibc)")
def test_glibc_takes_the_mmap_threshold() -> None:
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from rageval_core.session.allocator import map_socket_reads; print(map_socket_reads())"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.stdout.strip() == "True", done.stderr[-2000:]


def test_only_runs_over_http_map_their_reads(monkeypatch) -> None:
    from rageval_core.session import allocator

    calls: list[str] = []
    monkeypatch.setattr(allocator, "limit_malloc_arenas", lambda: calls.append("arenas"))
    monkeypatch.setattr(allocator, "map_socket_reads", lambda: calls.append("reads"))
    monkeypatch.setattr(allocator, "limit_sqlite_heap", lambda: calls.append("sqlite"))
    for provider in ("offline", "replay", "openai-compatible", "gemini"):
        allocator.tune_memory_for_run(provider)
    assert calls == ["arenas", "sqlite"] * 2 + ["arenas", "sqlite", "reads"] * 2


def test_an_explicit_mmap_threshold_is_left_alone(monkeypatch) -> None:
    from rageval_core.session.allocator import map_socket_reads

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert map_socket_reads() is False


# Threads looking up random keys of a table, each through a connection of its own (as a run's workers read the
# response cache); prints SQLite's heap once they all looked.
_LOOKUPS = """
import ctypes, random, sqlite3, sys, threading
sys.path.insert(0, sys.argv[1])
from rageval_core.session.allocator import limit_sqlite_heap
path = sys.argv[2]
setup = sqlite3.connect(path)
setup.execute("CREATE TABLE t (key TEXT PRIMARY KEY, v TEXT)")
setup.executemany("INSERT INTO t VALUES (?, ?)", ((f"k{i:06d}", "x" * 400) for i in range(20_000)))
setup.commit()
setup.close()
if sys.argv[3] == "limit":
    assert limit_sqlite_heap(2 * 2**20) == 2 * 2**20
lib = ctypes.CDLL(sys.argv[4])
lib.sqlite3_memory_used.restype = ctypes.c_int64
looked = threading.Barrier(9)
def work(seed):
    conn = sqlite3.connect(path, check_same_thread=False)
    rng = random.Random(seed)
    for _ in range(1500):
        conn.execute("SELECT v FROM t WHERE key = ?", (f"k{rng.randrange(20_000):06d}",)).fetchone()
    looked.wait()
    looked.wait()
threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
[t.start() for t in threads]
looked.wait()
print(lib.sqlite3_memory_used())
looked.wait()
"""


def _sqlite_library() -> str | None:
    """The shared libsqlite3 this Python's ``sqlite3`` module loaded (its heap is one per library)."""
    import sqlite3  # noqa: F401  (maps the library into this process)

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    return next((line.split()[-1] for line in maps.splitlines() if "libsqlite3" in line), None)


@pytest.mark.skipif(_sqlite_library() is None, reason="no shared libsqlite3 to ask for its heap (SQLite built into Python)")
def test_sqlite_page_caches_stay_under_the_soft_heap_limit(tmp_path) -> None:
    def heap(mode: str) -> int:
        done = subprocess.run([sys.executable, "-c", _LOOKUPS, str(ROOT), str(tmp_path / f"{mode}.db"), mode, _sqlite_library()],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return int(done.stdout.split()[-1])

    free, limited = heap("free"), heap("limit")
    assert free > 8 * 2**20  # eight connections, each filling its own 2 MB of pages
    assert limited < 4 * 2**20


def test_the_rate_limiter_keeps_the_last_starts_not_every_one() -> None:
    from rageval_core.core.clock import FakeClock
    from rageval_core.llm.transport.ratelimit import HISTORY, RateLimiter

    limiter = RateLimiter(clock=FakeClock())
    for _ in range(HISTORY + 500):
        limiter.acquire()
    starts = limiter.starts()
    assert len(starts) == HISTORY <= 4096  # a 12,000-row run books 108,000


def test_the_redaction_memos_stay_within_their_budget_of_characters() -> None:
    from rageval_core.core import redact

    memos = redact._Memos(None)
    for i in range(40_000):  # distinct short and long texts, as distinct rows give
        memos.redact(f"evidence sentence {i} of a distinct row")
        if i % 10 == 0:
            memos.redact(f"{i} " + "judge answer " * 40)
    short, long = memos._short, memos._long
    assert 0 < sum(map(len, short.memo)) == short.used <= redact._SHORT_MEMO_CHARS
    assert 0 < sum(map(len, long.memo)) == long.used <= redact._LONG_MEMO_CHARS
    assert memos.redact("evidence sentence 39999 of a distinct row") == "evidence sentence 39999 of a distinct row"
