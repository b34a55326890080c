"""The store's connections, always at this program's schema: the one way into the database file.

``connect`` gives the current thread's connection to a store (``store.engine``: WAL, busy timeout, one per
thread and path); the first time a connection is opened it checks the schema version and brings an older
store up to date (``store.migrations``), so no module that reads or writes a table creates it. A store written
by a newer program is refused (``StoreTooNew``) before anything is written to it; a store that needs migrating
but cannot be written is read as it is where its old schema allows (``store.read_only``).

The rest of this module's names are the engine's (writes retried while locked, the warnings of lost cache and
call-log writes, the store's errors), here so a caller imports one module.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from rageval_core.core import paths
from rageval_core.store import engine, migrations
from rageval_core.store.engine import (  # noqa: F401 - the store's one import for its callers
    BACKOFF_S,
    DEFAULT_ATTEMPTS,
    DEFAULT_BUSY_TIMEOUT_S,
    STORE_ERRORS,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreNeedsMigration,
    StoreReadOnly,
    StoreTooNew,
    WriteWarning,
    add_listener,
    cannot_run,
    check_intact,
    corrupt,
    immediate,
    is_corrupt,
    is_locked,
    is_read_only,
    is_unwritable,
    limit_heap,
    read_only_reason,
    store_fault,
    warn,
    write,
)

__all__ = [  # the engine's names re-exported, so a caller imports one module
    "BACKOFF_S",
    "DEFAULT_ATTEMPTS",
    "DEFAULT_BUSY_TIMEOUT_S",
    "STORE_ERRORS",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreNeedsMigration",
    "StoreReadOnly",
    "StoreTooNew",
    "WriteWarning",
    "add_listener",
    "cannot_run",
    "check_intact",
    "corrupt",
    "immediate",
    "is_corrupt",
    "is_locked",
    "is_read_only",
    "is_unwritable",
    "limit_heap",
    "read_only_reason",
    "store_fault",
    "warn",
    "write",
    "connect",
    "open_store",
    "local_salt",
]


def connect(path: str | Path | None = None, *, busy_timeout_s: float | None = None) -> sqlite3.Connection:
    """This thread's connection to the store at ``path`` (default: the workbench's), migrated when first opened."""
    return engine.connect(path, busy_timeout_s=busy_timeout_s, on_open=_on_open)


# A full disk without root, for tests and demos: RAGEVAL_TEST_STORE_ROOM_PAGES=N lets the store grow by N pages
# past its size when this process first opened it (SQLite's ``max_page_count`` on every connection, the same cap
# for all), after which every write fails with SQLite's own "database or disk is full".
ROOM_PAGES_ENV = "RAGEVAL_TEST_STORE_ROOM_PAGES"
_caps: dict[str, int] = {}
_caps_lock = threading.Lock()


def _on_open(conn: sqlite3.Connection, path: str, read_only: bool) -> None:
    migrations.ensure(conn, path, read_only)
    room = os.environ.get(ROOM_PAGES_ENV, "").strip()
    if room and not read_only:
        with _caps_lock:
            cap = _caps.setdefault(path, int(conn.execute("PRAGMA page_count").fetchone()[0]) + int(room))
        conn.execute(f"PRAGMA max_page_count={cap}")


def open_store(path: str | Path | None = None, *, busy_timeout_s: float | None = None) -> sqlite3.Connection:
    """``connect``, and a migration an earlier open left unfinished (a move cut short) taken up again: what the
    store's openers (``Store``, the caches) call once, where ``connect`` is called for every statement."""
    target = str(path or paths.database_path())
    reused = engine.is_open(target)
    conn = connect(target, busy_timeout_s=busy_timeout_s)
    if reused:  # a new connection was migrated as it opened
        migrations.ensure(conn, target, is_read_only(target))
    return conn


def local_salt(path: str | Path | None = None) -> bytes:
    """A random 32-byte salt kept in this database, made on first use. Cache keys hold a keyed digest of
    base-URL credentials under it (``redact.url_identity``): stable across processes sharing the database,
    useless for checking a guessed password without the database itself."""
    import secrets

    conn = connect(path)
    row = conn.execute("SELECT salt FROM local_salt WHERE id = 1").fetchone()
    if row is None:
        write(lambda: conn.execute("INSERT OR IGNORE INTO local_salt (id, salt) VALUES (1, ?)", (secrets.token_bytes(32),)),
              what="local salt")
        row = conn.execute("SELECT salt FROM local_salt WHERE id = 1").fetchone()
    return bytes(row[0])
