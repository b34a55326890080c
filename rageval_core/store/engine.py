"""SQLite connections below the schema: one per thread and path, the errors, and the retries of a locked write.

This module opens connections configured for many threads and processes (WAL, a busy timeout) and gives
every writer the same answer to a database locked by someone else: ``write`` retries a bounded number of
times with backoff through the injectable clock, then raises ``StoreBusy``. Writes whose loss must never
change a result (call log, caches) report it through ``warn`` instead, which the runner counts and shows.
A database file that cannot be written (the file or its folder read-only, for this process or by its mode: a
0400 file is read-only even to root) is opened read-only, and a write to it is a ``StoreReadOnly`` naming the
file and what to do. A file that is not an SQLite database, or one whose pages are damaged, is a ``StoreCorrupt``
naming the file and what to do, and is never written, let alone "repaired". Everything
above the store opens connections through ``store.db.connect``, which checks and migrates the schema
(``store.migrations``) the first time a connection is opened; this module knows nothing of tables.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from rageval_core.core import paths
from rageval_core.core.messages import say
from rageval_core.core.private import private_dir, tighten_file, touch_private
from rageval_core.core.clock import SYSTEM_CLOCK, Clock as Clock  # re-exported: the store's clock type
from rageval_core.core.errors import StoreError as StoreError  # re-exported: the store's error root

# SQLite waits this long for another writer's lock before saying "database is locked"; ``write`` then
# retries. Short enough that a stuck outside lock shows up in seconds, long enough for normal contention.
DEFAULT_BUSY_TIMEOUT_S = 5.0
DEFAULT_ATTEMPTS = 4
BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)

_local = threading.local()
T = TypeVar("T")


class StoreTooNew(StoreError):
    """A store written by a newer program (its schema version above this program's): never opened, never written."""


class StoreNeedsMigration(StoreError):
    """An older store that must be migrated before it can be read, in a file or folder that cannot be written."""


class StoreBusy(StoreError):
    """A write that still found the database locked (or failing) after the bounded retries."""


class StoreCorrupt(StoreError):
    """The store file is not an SQLite database, or its pages are damaged: never written, the user moves it aside."""


class StoreReadOnly(StoreError, sqlite3.OperationalError):
    """A write to a store opened read-only. Also an ``sqlite3.OperationalError``, as SQLite's own "attempt to write a
    readonly database" was, so code that keeps going past a lost cache write still does."""


# SQLite's words for a file it cannot read as a database (SQLITE_NOTADB, SQLITE_CORRUPT).
_CORRUPT = ("file is not a database", "malformed", "file is encrypted", "database corrupt")


def is_corrupt(exc: BaseException) -> bool:
    """Whether an SQLite error means the file is not a database or is damaged (not worth retrying, not a bug)."""
    return isinstance(exc, sqlite3.DatabaseError) and any(s in str(exc).lower() for s in _CORRUPT)


def corrupt(path: str | Path, exc: BaseException) -> StoreCorrupt:
    """The ``StoreCorrupt`` that says ``path`` cannot be read as a database and what to do."""
    return StoreCorrupt(say("store.corrupt", path=str(path), error=str(exc)))


def store_fault(exc: BaseException, path: str | Path) -> StoreError | None:
    """SQLite's own error for a damaged store or a write to a read-only one, met outside ``write`` (a page's query,
    a bare ``execute``), as the store's error naming ``path`` and what to do; None for any other error."""
    if isinstance(exc, StoreError) or not isinstance(exc, sqlite3.Error):
        return None
    if is_corrupt(exc):
        return corrupt(path, exc)
    if "readonly database" in str(exc).lower():
        return read_only(path, str(exc))
    return None


def check_intact(conn: sqlite3.Connection, path: str | Path) -> None:
    """``StoreCorrupt`` unless SQLite's quick check finds every page of the store at ``path`` sound: what a command
    about to keep results (evaluate) runs once before it computes anything, so a damaged store is said up front,
    not after the run (about 0.6 s for a 220 MB store; every open reads the schema, not every page)."""
    try:
        found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as exc:
        if is_locked(exc):
            return  # another writer's lock: its own problem, and the run's writes wait for it as usual
        raise corrupt(path, exc) from exc
    if found != ["ok"]:
        raise corrupt(path, sqlite3.DatabaseError("database disk image is malformed: " + "; ".join(found)))


def read_only_reason(path: str | Path) -> str | None:
    """Why an existing store cannot be written (the file's or its folder's mode, or this process's rights), or
    None when it can (or does not exist yet)."""
    target = Path(path)
    if str(path) == ":memory:" or not target.exists():
        return None
    if not _writable(target):
        return say("store.why_file")
    if not _writable(target.parent):
        return say("store.why_folder")
    return None


def cannot_run(path: str | Path, command: str) -> StoreReadOnly:
    """The ``StoreReadOnly`` that refuses ``command`` up front: it keeps its results in the store at ``path``."""
    why = read_only_reason(path) or say("store.why_file")
    return StoreReadOnly(say("store.cannot_run", path=str(path), why=why, command=command))


def read_only(path: str | Path, what: str) -> StoreReadOnly:
    """The ``StoreReadOnly`` that says ``what`` cannot be saved in the store at ``path`` and how to fix it."""
    why = read_only_reason(path) or say("store.why_file")
    return StoreReadOnly(say("store.read_only", path=str(path), why=why, what=what))


# What a caller outside the store catches for "the store refused this" (locked past the retries, a full disk,
# a read-only file): SQLite's own errors stay a detail of this package.
STORE_ERRORS: tuple[type[BaseException], ...] = (StoreBusy, sqlite3.Error)

OnOpen = Callable[[sqlite3.Connection, str, bool], None]


def connect(
    path: str | Path | None = None, *, busy_timeout_s: float | None = None, on_open: OnOpen | None = None
) -> sqlite3.Connection:
    """A connection for the current thread (one per thread and path, reused), in WAL mode unless read-only.

    ``on_open(conn, path, read_only)`` runs once on a new connection, before anything is written to the file
    (``store.db`` checks the schema version there and migrates); when it raises, the connection is not kept."""
    target = str(path or paths.database_path())
    cache: dict[str, sqlite3.Connection] = getattr(_local, "connections", None) or {}
    _local.connections = cache
    timeouts: dict[str, float] = getattr(_local, "timeouts", None) or {}
    _local.timeouts = timeouts
    wanted = DEFAULT_BUSY_TIMEOUT_S if busy_timeout_s is None else float(busy_timeout_s)
    conn = cache.get(target)
    if conn is None:
        read_only = target != ":memory:" and _read_only_file(Path(target))
        if read_only:
            conn = sqlite3.connect(_read_only_uri(Path(target)), uri=True, timeout=wanted, isolation_level=None,
                                   check_same_thread=False)
        else:
            if target != ":memory:":
                _private_database(Path(target))
            conn = sqlite3.connect(target, timeout=wanted, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(wanted * 1000)}")
        try:
            # The schema read first, before anything could be written: a file that is not a database, or whose
            # schema pages are damaged, stops here untouched.
            conn.execute("SELECT COUNT(*) FROM main.sqlite_master").fetchone()
            if on_open is not None:
                on_open(conn, target, read_only)
            if not read_only:
                _set_wal(conn)
                conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            conn.close()
            if is_corrupt(exc):
                raise corrupt(target, exc) from exc
            if is_locked(exc):
                raise StoreBusy(f"the store {target} is locked by another process (waited {wanted:g} s to open it): "
                                "try again when that process is done, or point RAGEVAL_HOME (or --db) at another "
                                "folder") from exc
            if not read_only:
                raise
            raise StoreError(
                f"the store {target} cannot be written (the file or its folder is read-only) and cannot be read as it "
                f"is ({exc}; a store copied with its -wal file needs its folder writable to be read). Make the file and "
                "its folder writable, or copy the store to a writable folder (--db, or RAGEVAL_HOME)") from exc
        except BaseException:
            conn.close()
            raise
        cache[target] = conn
        timeouts[target] = wanted
        _read_only_paths(target, read_only)
    elif timeouts.get(target) != wanted:
        conn.execute(f"PRAGMA busy_timeout={int(wanted * 1000)}")
        timeouts[target] = wanted
    return conn


def is_open(path: str | Path | None = None) -> bool:
    """Whether this thread has a connection to ``path`` already."""
    return str(path or paths.database_path()) in (getattr(_local, "connections", None) or {})


def is_read_only(path: str | Path | None = None) -> bool:
    """Whether this thread's connection to ``path`` was opened read-only (the file or its folder cannot be
    written); False before one is opened."""
    return bool((getattr(_local, "read_only", None) or {}).get(str(path or paths.database_path())))


def _read_only_paths(target: str, read_only: bool) -> None:
    marks: dict[str, bool] = getattr(_local, "read_only", None) or {}
    _local.read_only = marks
    marks[target] = read_only


def _read_only_file(target: Path) -> bool:
    """An existing database this process may not write (the file, or the folder its journal goes in)."""
    return target.exists() and not (_writable(target) and _writable(target.parent))


def _writable(target: Path) -> bool:
    """Whether this process may write ``target`` and its mode lets anyone write it: a file the user made 0400 is
    read-only to root too (root's writes would ignore the mode; the user's intent is to keep it as it is)."""
    try:
        return os.access(target, os.W_OK) and bool(target.stat().st_mode & 0o222)
    except OSError:
        return False


def _read_only_uri(target: Path) -> str:
    """The URI that opens ``target`` read-only. A file whose mode lets no one write it, or in a folder nobody can
    write, with no journal or WAL beside it, is not being written by anyone either: then it is opened
    ``immutable`` (SQLite cannot make the shared-memory file a WAL store needs to be read in such a folder, and
    would otherwise leave -wal and -shm files beside a store the user made read-only; there is nothing they would
    hold)."""
    uri = f"file:{urllib.parse.quote(str(target.resolve()))}?mode=ro"
    side = [Path(f"{target}{end}") for end in ("-wal", "-journal", "-shm")]
    no_writer = not target.stat().st_mode & 0o222 or not _writable(target.parent)
    if no_writer and not any(p.exists() for p in side):
        uri += "&immutable=1"
    return uri


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


def add_column(conn: sqlite3.Connection, table: str, column: str, decl: str) -> None:
    """Add a column an older database lacks (``store.migrations``: the schema grows by ``ALTER TABLE ADD COLUMN``)."""
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
    fn: Callable[[], T], *, clock: Clock | None = None, attempts: int = DEFAULT_ATTEMPTS, what: str = "write",
    path: str | Path | None = None,
) -> T:
    """Run ``fn`` (one whole write transaction), retrying while the database is locked.

    Each attempt already waited the busy timeout inside SQLite; between attempts the wait grows through
    ``BACKOFF_S`` on ``clock`` (tests pass a ``FakeClock``). Other SQLite errors are not retried. With ``path``
    (the store written), a store opened read-only gives ``StoreReadOnly`` saying ``what`` was not saved.
    """
    clock = clock or SYSTEM_CLOCK
    for attempt in range(max(1, attempts)):
        try:
            return fn()
        except sqlite3.Error as exc:
            if path is not None and "readonly database" in str(exc).lower() and not isinstance(exc, StoreReadOnly):
                raise read_only(path, what) from exc
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


def limit_heap(limit: int) -> int:
    """Set SQLite's soft heap limit (process-wide, every connection of this SQLite library); the limit now in force."""
    with sqlite3.connect(":memory:") as conn:
        return int(conn.execute(f"PRAGMA soft_heap_limit={int(limit)}").fetchone()[0])
