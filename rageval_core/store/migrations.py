"""The store's schema as one ordered list of named migrations; its version is ``PRAGMA user_version``.

Why: the schema used to grow in four places (each module's ``CREATE TABLE IF NOT EXISTS`` on first use, the
store's column additions, the light tables, the caches' and the texts' moves), with nothing that said which
schema a file had, so a store written by a newer program was opened and written without a word. Now every
table, column, index, view and data move is a step of ``MIGRATIONS``, in the order they were made; a store's
``user_version`` is the number of steps it has taken (like simonw/llm's ``migrations.py``). A new schema change
is a new step at the end, never an edit of an old one (tests/store/test_migrations.py pins the names).

Every step is idempotent (``IF NOT EXISTS``, a column added only when missing, a move that finds nothing left to
move): a store written before the version existed (``user_version`` 0) takes every step, each finding done what
the program that wrote it had already done. Two steps move rows in batches and may be cut short (a killed
process); a step cut short keeps the version below it, the steps after it still run (each is independent of the
unmoved rows, which every reader reads as they are), and the next open goes on where the move stopped.

``ensure`` is called by ``store.db`` when a connection is first opened: a store whose version is above
``SCHEMA_VERSION`` is refused (``StoreTooNew``) before anything is written to it; one below it is migrated in
place, or, when it cannot be written, read as it is (``store.read_only``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Callable

from rageval_core.store import cache_tables, columns, engine, light_tables, migrate_texts
from rageval_core.store import read_only as read_only_store
from rageval_core.store.engine import StoreTooNew


@dataclass(frozen=True)
class Migration:
    """One step: ``apply(conn, path)`` returns False when it was cut short (the rest on the next open)."""

    name: str
    apply: Callable[[sqlite3.Connection, str], bool | None]


def _script(ddl: str) -> Callable[[sqlite3.Connection, str], None]:
    def apply(conn: sqlite3.Connection, path: str) -> None:
        engine.write(lambda: conn.executescript(ddl), what="create tables")

    return apply


def _columns(*added: tuple[str, str, str]) -> Callable[[sqlite3.Connection, str], None]:
    def apply(conn: sqlite3.Connection, path: str) -> None:
        for table, column, decl in added:
            engine.add_column(conn, table, column, decl)

    return apply


# The first tables, as the first release made them: the columns added by later steps are left out here, so a new
# store and an old one take the same path (and get their columns in the same order).
_LATER = {"results": ("repeat_index", "details_pack"),
          "call_log": ("reask", "structured_output", "prompt_parts", "response_id")}


def _first(name: str, cols: tuple[tuple[str, str], ...]) -> str:
    return columns.create_table(name, tuple(c for c in cols if c[0] not in _LATER[name]))


_RUNS = f"""
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    dataset_name TEXT,
    dataset_hash TEXT,
    scorers TEXT NOT NULL,
    versions TEXT NOT NULL,
    provider TEXT,
    model TEXT,
    base_url TEXT,
    settings TEXT NOT NULL,
    n_rows INTEGER NOT NULL DEFAULT 0,
    note TEXT
);
CREATE TABLE IF NOT EXISTS run_rows (
    run_id TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    category TEXT,
    valid INTEGER NOT NULL DEFAULT 1,
    error TEXT,
    PRIMARY KEY (run_id, sample_id)
);
{_first("results", columns.RESULTS)}
CREATE INDEX IF NOT EXISTS results_run ON results (run_id, sample_id, scorer);
{_first("call_log", columns.CALL_LOG)}
CREATE INDEX IF NOT EXISTS call_log_run ON call_log (run_id);
"""

_HUMAN_LABELS = """
CREATE TABLE IF NOT EXISTS human_labels (
    dataset_hash TEXT NOT NULL,
    row_id TEXT NOT NULL,
    criterion TEXT NOT NULL,
    label REAL,
    note TEXT,
    ts REAL NOT NULL,
    PRIMARY KEY (dataset_hash, row_id, criterion)
);
"""

_RUBRIC_VERSIONS = """
CREATE TABLE IF NOT EXISTS rubric_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    name TEXT,
    subject TEXT NOT NULL,
    language TEXT,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS rubric_versions_lookup ON rubric_versions (kind, name, created_at);
CREATE INDEX IF NOT EXISTS rubric_versions_hash ON rubric_versions (kind, content_hash);
"""

_BATCH_JOBS = """
CREATE TABLE IF NOT EXISTS batch_jobs (
    job_id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    round INTEGER NOT NULL,
    keys TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at REAL NOT NULL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS batch_answers (
    key TEXT PRIMARY KEY,
    job_id TEXT NOT NULL,
    texts TEXT,
    usage TEXT,
    error_kind TEXT,
    error_message TEXT,
    status INTEGER
);
"""

_TRUST_REPORTS = """
CREATE TABLE IF NOT EXISTS trust_reports (
    run_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    report TEXT NOT NULL
);
"""

_LOCAL_SALT = "CREATE TABLE IF NOT EXISTS local_salt (id INTEGER PRIMARY KEY CHECK (id = 1), salt BLOB NOT NULL);"

_LABEL_SPLITS = """
CREATE TABLE IF NOT EXISTS label_splits (
    dataset_hash TEXT NOT NULL,
    row_id TEXT NOT NULL,
    split TEXT NOT NULL,
    seed INTEGER NOT NULL,
    fractions TEXT NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (dataset_hash, row_id)
);
CREATE TABLE IF NOT EXISTS split_test_looks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_hash TEXT NOT NULL,
    what TEXT,
    ts REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS split_test_looks_hash ON split_test_looks (dataset_hash);
"""

_ANNOTATIONS = """
CREATE TABLE IF NOT EXISTS annotator_labels (
    dataset_hash TEXT NOT NULL,
    row_id TEXT NOT NULL,
    criterion TEXT NOT NULL,
    annotator TEXT NOT NULL,
    label REAL NOT NULL,
    note TEXT,
    ts REAL NOT NULL,
    PRIMARY KEY (dataset_hash, row_id, criterion, annotator)
);
CREATE TABLE IF NOT EXISTS annotation_queue (
    dataset_hash TEXT NOT NULL,
    row_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    criteria TEXT NOT NULL,
    position INTEGER NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (dataset_hash, row_id, annotator)
);
CREATE TABLE IF NOT EXISTS label_settlements (
    dataset_hash TEXT NOT NULL,
    row_id TEXT NOT NULL,
    criterion TEXT NOT NULL,
    label REAL NOT NULL,
    settled_by TEXT NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (dataset_hash, row_id, criterion)
);
"""

_TEXTS = """
CREATE TABLE IF NOT EXISTS texts (
    id INTEGER PRIMARY KEY,
    digest BLOB NOT NULL UNIQUE,
    body NOT NULL
);
CREATE TABLE IF NOT EXISTS store_migrations (name TEXT PRIMARY KEY, done_upto INTEGER NOT NULL, finished INTEGER NOT NULL);
"""


def _texts(conn: sqlite3.Connection, path: str) -> None:
    """The content-addressed texts (``store.texts``) and the columns that name them instead of holding them."""
    _script(_TEXTS)(conn, path)
    _columns(("call_log", "prompt_parts", "TEXT"), ("call_log", "response_id", "INTEGER"),
             ("results", "details_pack", "BLOB"))(conn, path)


def _move_texts(conn: sqlite3.Connection, path: str) -> bool:
    return migrate_texts.migrate(conn)  # looked up at the call: tests cut the move short


def _light_views(conn: sqlite3.Connection, path: str) -> bool:
    """The light tables become views once no row holds its texts inline (until then the copies stay)."""
    if migrate_texts.pending(conn):
        return False
    light_tables.to_views(conn)
    return True


def _caches(conn: sqlite3.Connection, path: str) -> bool:
    return cache_tables.ensure(conn, path)


# The steps, oldest first. Append only: a store's version is how many of them it has taken.
MIGRATIONS: tuple[Migration, ...] = (
    Migration("runs_results_call_log", _script(_RUNS)),
    Migration("human_labels", _script(_HUMAN_LABELS)),
    Migration("rubric_versions", _script(_RUBRIC_VERSIONS)),
    Migration("results_repeat_index", _columns(("results", "repeat_index", "INTEGER NOT NULL DEFAULT 0"))),
    Migration("runs_name", _columns(("runs", "name", "TEXT"))),
    Migration("runs_warnings", _columns(("runs", "warnings", "TEXT"))),
    Migration("call_log_reask_structured_output", _columns(("call_log", "reask", "INTEGER NOT NULL DEFAULT 0"),
                                                           ("call_log", "structured_output", "TEXT"))),
    Migration("batch_jobs", _script(_BATCH_JOBS)),
    Migration("trust_reports", _script(_TRUST_REPORTS)),
    Migration("local_salt", _script(_LOCAL_SALT)),
    Migration("light_tables", lambda conn, path: light_tables.ensure(conn)),
    Migration("label_splits", _script(_LABEL_SPLITS)),
    Migration("annotations", _script(_ANNOTATIONS)),
    Migration("texts", _texts),
    Migration("texts_move", _move_texts),
    Migration("cache_tables", _caches),
    Migration("light_views", _light_views),
    Migration("run_rows_sample", _columns(("run_rows", "sample", "BLOB"))),  # the rows a run scored (store.row_texts)
)
SCHEMA_VERSION = len(MIGRATIONS)


def version(conn: sqlite3.Connection) -> int:
    """The store's schema version: how many of ``MIGRATIONS`` it has taken (0: none, or written before it)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _set_version(conn: sqlite3.Connection, number: int) -> None:
    """Raise the version to ``number`` (never lower it: another process may have gone further meanwhile)."""

    def bump() -> None:
        with engine.immediate(conn):
            if version(conn) < number:
                conn.execute(f"PRAGMA user_version = {int(number)}")

    engine.write(bump, what="schema version")


def check(conn: sqlite3.Connection, path: str) -> int:
    """The store's version; ``StoreTooNew`` (nothing written) when a newer program wrote it."""
    found = version(conn)
    if found > SCHEMA_VERSION:
        raise StoreTooNew(
            f"the store {path} has schema version {found}, written by a newer version of rageval than this one "
            f"(which knows versions up to {SCHEMA_VERSION}); it was not opened and nothing was written to it. Upgrade "
            "rageval, or use another store (--db, or RAGEVAL_HOME)")
    return found


def pending(conn: sqlite3.Connection) -> list[str]:
    """The names of the steps this store has still to take."""
    return [m.name for m in MIGRATIONS[min(version(conn), SCHEMA_VERSION):]]


def ensure(conn: sqlite3.Connection, path: str, read_only: bool = False) -> None:
    """Check the store's version and take the steps it lacks (see the module's text). Cheap when it is current:
    one ``PRAGMA user_version`` read."""
    start = check(conn, path)
    if start == SCHEMA_VERSION:
        return
    if read_only:
        read_only_store.read_as_it_is(conn, path, pending(conn), "attempt to write a readonly database", migrate)
        return
    try:
        migrate(conn, path, start)
    except engine.STORE_ERRORS as exc:
        cause = exc.__cause__ if isinstance(exc, engine.StoreBusy) and exc.__cause__ is not None else exc
        if not engine.is_unwritable(cause):
            raise
        read_only_store.read_as_it_is(conn, path, pending(conn), str(cause), migrate)


def migrate(conn: sqlite3.Connection, path: str, start: int = 0) -> int:
    """Take every step from ``start`` on; the version reached (below the end when a move was cut short)."""
    reached = start
    for number, step in enumerate(MIGRATIONS[start:], start=start + 1):
        finished = step.apply(conn, path) is not False
        if finished and reached == number - 1:
            _set_version(conn, number)
            reached = number
    return reached
