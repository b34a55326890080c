"""Memory settings for a CLI run (glibc's malloc, SQLite's page caches), so that its memory stays flat however
many rows it runs.

Two patterns of a long run leave free memory inside glibc's heaps that no later request can use:

- **Arenas.** glibc gives every new thread an arena of its own until there are 8 per core (16 on this 2-core
  machine). A run's 48 worker threads build short-lived strings (prompts, responses, JSON bodies) in all of
  them, and the free space left inside one arena is never used by another: on 600 distinct rows against the
  fake server the heaps' free bytes grew from 1 to 17 MB over the run; with two arenas, 1 to 9 MB, the same
  wall time. The workers hold the GIL while they allocate, so two arenas (one per core) cost no measurable
  contention.
- **Socket reads.** httpcore reads a response with ``recv(65536)``: CPython allocates 64 KiB for it, then
  shrinks the bytes object to the few KiB that came. The freed tail (41–65 KiB) is too small for the next
  64 KiB read, and another thread's allocation usually sits right after it, so each read can leave a hole
  and take fresh memory from the top of the heap. glibc's own report (``malloc_info``) after 600 distinct
  rows: 15 MB of free chunks, 14 MB of them 41–65 KiB in size. With a 64 KiB mmap threshold, a read the
  heap's top cannot serve gets a mapping of its own (shrunk by ``mremap``, unmapped when freed) instead of
  growing the heap: 1–2 MB of free chunks on the same rows, and the process 103 MB instead of 118 MB.
  Only for runs whose provider speaks HTTP: the offline encoder's numpy temporaries above 64 KiB would each
  be a fresh mapping (10–16 % more CPU a row on 1,000 offline rows, measured).

And one cache grows with the run's store: every worker thread reads the response cache through a connection of
its own, and each connection keeps up to 2 MB of pages (SQLite's default). Distinct rows make every lookup touch
pages no other lookup touched, so the caches fill as the tables grow: 32 threads looking up 100,000 keys held
64.7 MB. A soft heap limit makes SQLite reuse its least recent pages instead (9.4 MB on the same lookups).

Set only by the CLI (a library call must not change the allocator of the app that imports it), and never over
the environment's own ``MALLOC_ARENA_MAX`` or ``MALLOC_MMAP_THRESHOLD_``.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_MMAP_THRESHOLD = -3  # mallopt's parameter numbers in glibc's malloc.h
M_ARENA_MAX = -8
ARENAS = 2
MMAP_THRESHOLD = 64 * 1024  # a 64 KiB socket read (65,536 bytes and its header) is mapped on its own
SQLITE_HEAP = 8 * 2**20  # SQLite's whole heap, all connections: about what their schemas and statements take


def _glibc_mallopt(param: int, value: int, env: str) -> bool:
    """``mallopt(param, value)`` on glibc; False elsewhere, or where the environment set ``env`` itself."""
    if os.environ.get(env) or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only: musl's mallopt does nothing with these)
        return bool(libc.mallopt(ctypes.c_int(param), ctypes.c_int(value)))
    except (OSError, AttributeError):
        return False


def limit_malloc_arenas(count: int = ARENAS) -> bool:
    """Cap glibc's arenas at ``count`` for the threads started from now on; False where there is no glibc, or
    the environment chose its own (``MALLOC_ARENA_MAX``)."""
    return _glibc_mallopt(M_ARENA_MAX, count, "MALLOC_ARENA_MAX")


def map_socket_reads(threshold: int = MMAP_THRESHOLD) -> bool:
    """Serve allocations of ``threshold`` bytes and more from mappings of their own (see the module's text);
    False where there is no glibc, or the environment chose its own (``MALLOC_MMAP_THRESHOLD_``)."""
    return _glibc_mallopt(M_MMAP_THRESHOLD, threshold, "MALLOC_MMAP_THRESHOLD_")


def limit_sqlite_heap(limit: int = SQLITE_HEAP) -> int:
    """Set SQLite's soft heap limit (process-wide, every connection of this SQLite library); the limit now in force."""
    from rageval_core.store.db import limit_heap

    return limit_heap(limit)


def tune_memory_for_run(provider: str) -> None:
    """These settings, before a run's worker threads start; the mmap threshold only when ``provider`` speaks HTTP."""
    limit_malloc_arenas()
    limit_sqlite_heap()
    if provider not in ("offline", "replay"):
        map_socket_reads()
