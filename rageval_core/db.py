"""SQLite connections shared by the store, the response cache, rubric versions and human labels.

Each module owns its tables and creates them with ``CREATE TABLE IF NOT EXISTS`` through ``ensure_schema``;
this module only opens connections configured for many threads and processes (WAL, busy timeout).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from rageval_core import paths

_local = threading.local()


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """A connection for the current thread (one per thread and path, reused), in WAL mode."""
    target = str(path or paths.database_path())
    cache: dict[str, sqlite3.Connection] = getattr(_local, "connections", None) or {}
    _local.connections = cache
    conn = cache.get(target)
    if conn is None:
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(target, timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        cache[target] = conn
    return conn


def ensure_schema(conn: sqlite3.Connection, ddl: str) -> None:
    """Run a module's CREATE TABLE / INDEX IF NOT EXISTS statements."""
    conn.executescript(ddl)
