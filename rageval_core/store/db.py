"""SQLite connections shared by the store, the response cache, rubric versions and human labels.

Each module owns its tables and creates them with ``CREATE TABLE IF NOT EXISTS`` through ``ensure_schema``;
this module opens connections configured for many threads and processes (WAL, a busy timeout) and gives
every writer the same answer to a database locked by someone else: ``write`` retries a bounded number of
times with backoff through the injectable clock, then raises ``StoreBusy``. Writes whose loss must never
change a result (call log, caches) report it through ``warn`` instead, which the runner counts and shows.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from rageval_core.core import paths
from rageval_core.core.private import private_dir, tighten_file, touch_private
from rageval_core.core.clock import SYSTEM_CLOCK, Clock
from rageval_core.core.errors import StoreError

# SQLite waits this long for another writer's lock before saying "database is locked"; ``write`` then
# retries. Short enough that a stuck outside lock shows up in seconds, long enough for normal contention.
DEFAULT_BUSY_TIMEOUT_S = 5.0
DEFAULT_ATTEMPTS = 4
BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)

_local = threading.local()
T = TypeVar("T")


class StoreBusy(StoreError):
    """A write that still found the database locked (or failing) after the bounded retries."""


def connect(path: str | Path | None = None, *, busy_timeout_s: float | None = None) -> sqlite3.Connection:
    """A connection for the current thread (one per thread and path, reused), in WAL mode."""
    target = str(path or paths.database_path())
    cache: dict[str, sqlite3.Connection] = getattr(_local, "connections", None) or {}
    _local.connections = cache
    timeouts: dict[str, float] = getattr(_local, "timeouts", None) or {}
    _local.timeouts = timeouts
    wanted = DEFAULT_BUSY_TIMEOUT_S if busy_timeout_s is None else float(busy_timeout_s)
    conn = cache.get(target)
    if conn is None:
        if target != ":memory:":
            _private_database(Path(target))
        conn = sqlite3.connect(target, timeout=wanted, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(wanted * 1000)}")
        _set_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        cache[target] = conn
        timeouts[target] = wanted
    elif timeouts.get(target) != wanted:
        conn.execute(f"PRAGMA busy_timeout={int(wanted * 1000)}")
        timeouts[target] = wanted
    return conn


_private_lock = threading.Lock()  # one thread at a time checks for, and creates, a missing database file


def _private_database(target: Path) -> None:
    """The database file made 0600 before SQLite first opens it in this process: SQLite gives its -wal and
    -shm files the database file's mode, so all three stay private whatever the umask (older, looser ones are
    tightened by path). A file descriptor only to create a missing file: closing any descriptor of a database
    file drops every POSIX lock this process holds on it (SQLite's own warning), which showed as "disk I/O
    error" in a run while another thread's connection was writing."""
    with _private_lock:
        if not target.exists():
            if not target.parent.is_dir():
                private_dir(target.parent, tighten=False)
            touch_private(target)
        for name in (str(target), f"{target}-wal", f"{target}-shm", f"{target}-journal"):
            tighten_file(name)  # by path: a looser file (an older version's) is tightened on every new connection


def _set_wal(conn: sqlite3.Connection) -> None:
    """WAL lets readers go on while one writer writes; switching needs a moment without other writers, so a
    database locked right now keeps its mode (already WAL once any earlier connection set it)."""
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:
        if not is_locked(exc):
            raise


def ensure_schema(conn: sqlite3.Connection, ddl: str) -> None:
    """Run a module's CREATE TABLE / INDEX IF NOT EXISTS statements."""
    write(lambda: conn.executescript(ddl), what="create tables")


_SALT_DDL = "CREATE TABLE IF NOT EXISTS local_salt (id INTEGER PRIMARY KEY CHECK (id = 1), salt BLOB NOT NULL);"


def local_salt(path: str | Path | None = None) -> bytes:
    """A random 32-byte salt kept in this database, made on first use. Cache keys hold a keyed digest of
    base-URL credentials under it (``redact.url_identity``): stable across processes sharing the database,
    useless for checking a guessed password without the database itself."""
    import secrets

    conn = connect(path)
    ensure_schema(conn, _SALT_DDL)
    write(lambda: conn.execute("INSERT OR IGNORE INTO local_salt (id, salt) VALUES (1, ?)", (secrets.token_bytes(32),)),
          what="local salt")
    return bytes(conn.execute("SELECT salt FROM local_salt WHERE id = 1").fetchone()[0])


def add_column(conn: sqlite3.Connection, table: str, column: str, decl: str) -> None:
    """Add a column an older database lacks (the schema grows by ``ALTER TABLE ADD COLUMN`` only)."""
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()}
    if column not in have:
        write(lambda: conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}"), what=f"add {table}.{column}")


def is_locked(exc: BaseException) -> bool:
    """Whether an SQLite error means another connection holds the lock (worth waiting for)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


_UNWRITABLE = ("disk is full", "readonly database", "read-only", "disk i/o error", "unable to open database")


def is_unwritable(exc: BaseException) -> bool:
    """Whether an SQLite error means the store cannot be written at all (a full disk, a read-only folder):
    not worth waiting for, unlike a lock."""
    return isinstance(exc, (sqlite3.Error, StoreBusy)) and any(s in str(exc).lower() for s in _UNWRITABLE)


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction taken at its start (BEGIN IMMEDIATE), committed, or rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def write(
    fn: Callable[[], T], *, clock: Clock | None = None, attempts: int = DEFAULT_ATTEMPTS, what: str = "write"
) -> T:
    """Run ``fn`` (one whole write transaction), retrying while the database is locked.

    Each attempt already waited the busy timeout inside SQLite; between attempts the wait grows through
    ``BACKOFF_S`` on ``clock`` (tests pass a ``FakeClock``). Other SQLite errors are not retried.
    """
    clock = clock or SYSTEM_CLOCK
    for attempt in range(max(1, attempts)):
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not is_locked(exc):
                raise
            if attempt + 1 >= max(1, attempts):
                raise StoreBusy(f"{what}: {exc} after {attempts} attempts") from exc
            clock.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
    raise AssertionError("unreachable")


# ---- warnings: writes that failed without changing any result ----------------------------------------------
@dataclass(frozen=True)
class WriteWarning:
    """A failed write that was given up on: ``kind`` is ``call_log``, ``cache`` or ``embedding_cache``."""

    kind: str
    message: str


_listeners: list[Callable[[WriteWarning], None]] = []
_listeners_lock = threading.Lock()


def warn(kind: str, exc: BaseException) -> None:
    """Report a lost call-log or cache write to every listener (the runner counts them); never raises."""
    warning = WriteWarning(kind, f"{type(exc).__name__}: {exc}")
    with _listeners_lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(warning)
        except Exception:  # a listener's bug must not turn a warning into a failure
            pass


def add_listener(listener: Callable[[WriteWarning], None]) -> Callable[[], None]:
    """Listen for write warnings; returns the function that stops listening."""
    with _listeners_lock:
        _listeners.append(listener)

    def remove() -> None:
        with _listeners_lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return remove
