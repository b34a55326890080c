"""An older store that cannot be written, read as it is: what its old schema lacks is shown empty, never made.

Why: a store on a read-only disk (a copy handed over, an archive) or a full one still has to open for reading
(History, exports, reports); it cannot take its migrations, and it must not be refused for what reading does not
need. Every reader reads both the old layouts and the new (texts inline or by reference, the light copies as
tables or views, rows with or without their stored texts), so what is missing is only the tables and columns
added since: this connection gets TEMP views that name them. A table the store lacks is an empty view with the
current columns; a table that lacks columns is a view of it with those columns at their defaults (NULL unless
the step gave one); a view the store lacks is made from its current definition. TEMP objects live in the
connection's own temporary schema and shadow the file's names for this connection only: nothing is written to
the file, and a write to one of the views fails with the reason the file could not be written (a trigger), as a
write to the file itself does.

The current schema is read from an in-memory store migrated once per process.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from typing import Callable

from rageval_core.store.engine import StoreNeedsMigration

Migrate = Callable[[sqlite3.Connection, str], object]


@dataclass(frozen=True)
class _Object:
    kind: str  # "table" or "view"
    sql: str
    columns: tuple[tuple[str, str | None], ...]  # (name, default expression or None)


_made: dict[str, dict[str, _Object]] = {}
_made_lock = threading.Lock()


def _current(migrate: Migrate) -> dict[str, _Object]:
    """The tables and views of a store at this program's schema (an in-memory one, migrated once a process)."""
    with _made_lock:
        if "current" not in _made:
            _made["current"] = _schema_of(migrate)
        return _made["current"]


def _schema_of(migrate: Migrate) -> dict[str, _Object]:
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        migrate(conn, ":memory:")
        out = {}
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view')"
                                            " AND name NOT LIKE 'sqlite_%' ORDER BY rowid").fetchall():
            cols = tuple((r[1], r[4]) for r in conn.execute(f"PRAGMA table_info({name})").fetchall())
            out[name] = _Object(kind, sql, cols)
        return out
    finally:
        conn.close()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _view(conn: sqlite3.Connection, name: str, select: str, why: str) -> None:
    """A TEMP view ``name`` over ``select`` whose writes fail saying ``why`` (the file cannot be written)."""
    conn.execute(f"CREATE TEMP VIEW IF NOT EXISTS {_quote(name)} AS {select}")
    message = why.replace("'", "''")
    for op in ("INSERT", "UPDATE", "DELETE"):
        trigger = _quote(f"{name}_{op.lower()}_read_only")
        conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS {trigger} INSTEAD OF {op} ON {_quote(name)}"
                     f" BEGIN SELECT RAISE(ABORT, '{message}'); END")


def read_as_it_is(conn: sqlite3.Connection, path: str, steps: list[str], why: str, migrate: Migrate) -> None:
    """Make ``conn`` read the store at ``path`` as the current schema without writing it (see the module's text;
    ``migrate`` takes an empty store to the current schema); ``StoreNeedsMigration`` naming the steps and ``why``
    when it cannot."""
    try:
        conn.execute("PRAGMA temp_store = MEMORY")
        have = {name: kind for kind, name in conn.execute(
            "SELECT type, name FROM main.sqlite_master WHERE type IN ('table', 'view')").fetchall()}
        current = _current(migrate)
        for name, obj in current.items():
            if obj.kind != "table":
                continue
            if name not in have:
                shown = ", ".join(f"NULL AS {_quote(c)}" for c, _ in obj.columns)
                _view(conn, name, f"SELECT {shown} LIMIT 0", why)
                continue
            present = {r[1] for r in conn.execute(f"PRAGMA main.table_info({_quote(name)})").fetchall()}
            missing = [(c, d) for c, d in obj.columns if c not in present]
            if missing:
                added = ", ".join(f"{d if d is not None else 'NULL'} AS {_quote(c)}" for c, d in missing)
                _view(conn, name, f"SELECT *, {added} FROM main.{_quote(name)}", why)
        for name, obj in current.items():
            if obj.kind == "view" and name not in have:
                conn.execute(obj.sql.replace("CREATE VIEW", "CREATE TEMP VIEW IF NOT EXISTS", 1))
    except sqlite3.Error as exc:
        raise StoreNeedsMigration(
            f"the store {path} was written by an older version of rageval and needs migrating ({', '.join(steps)}), "
            f"but it cannot be written ({why}) and cannot be read as it is ({exc}). Make the file and its folder "
            "writable once, or copy the store to a writable folder (--db, or RAGEVAL_HOME)") from exc
