"""The response and embedding caches' tables: narrow rows, and the once-per-store move from their first layout.

Why: the caches were a fifth of the store (about 350 bytes a result at 5721487). Each row held its key as 64 hex
characters (the rowid embedding table a second time, in its key index), and the response cache its provider,
model, base URL and task as text and its usage as JSON. Now a row holds a 16-byte key (the first half of the
SHA-256 the key names; collisions are out of reach, as for ``store.texts``), the id of its ``cache_origins``
row (provider, model, redacted base URL, task: a handful a store), and its own values; both tables are
``WITHOUT ROWID``, so the key is their only index.

An older store's tables keep their names: the first open renames each to ``<name>_v1``, creates the new one and
moves the rows over in batches of ``BATCH``, one transaction each (converted rows deleted from the old table),
so a killed process or a locked database leaves both tables readable (``lookup_old``) and the next open goes on;
the empty old table is dropped. No dataset text or secret is added: origins hold what the rows held.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from typing import Any, Callable

from rageval_core.store import engine, texts

BATCH = 500
RESPONSES = "llm_response_cache"
EMBEDDINGS = "embedding_cache"

DDL = f"""
CREATE TABLE IF NOT EXISTS cache_origins (
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    base_url TEXT NOT NULL,
    task TEXT NOT NULL,
    UNIQUE (provider, model, base_url, task)
);
CREATE TABLE IF NOT EXISTS {RESPONSES} (
    key BLOB PRIMARY KEY,
    origin INTEGER NOT NULL,
    text_ids TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {EMBEDDINGS} (
    key BLOB PRIMARY KEY,
    origin INTEGER NOT NULL,
    vector BLOB NOT NULL
) WITHOUT ROWID;
"""
# A column only the first layout has: its presence says the table is still to be moved.
_OLD_MARK = {RESPONSES: "usage", EMBEDDINGS: "dim"}


def stored_key(key: str) -> bytes:
    """What a row holds for a key: the first 16 bytes of the hex SHA-256 it is (the caches' keys), or of the
    SHA-256 of any other string (a caller's own key)."""
    if len(key) == 64:
        try:
            return bytes.fromhex(key)[:16]
        except ValueError:
            pass
    return hashlib.sha256(key.encode("utf-8")).digest()[:16]


_origins: dict[tuple[str, str, str, str, str], int] = {}  # (database, provider, model, base_url, task) -> id
_origins_lock = threading.Lock()


def origin_id(conn: sqlite3.Connection, path: str, provider: str, model: str, base_url: str | None, task: str) -> int:
    """The ``cache_origins`` id of these values, added if new (remembered per database outside a transaction:
    an id made inside one that rolls back must not outlive it)."""
    values = (provider or "", model or "", base_url or "", task or "")
    memo_key = (path, *values)
    with _origins_lock:
        found = _origins.get(memo_key)
    if found is not None:
        return found
    where = "provider = ? AND model = ? AND base_url = ? AND task = ?"
    row = conn.execute(f"SELECT id FROM cache_origins WHERE {where}", values).fetchone()
    if row is None:
        conn.execute("INSERT OR IGNORE INTO cache_origins (provider, model, base_url, task) VALUES (?, ?, ?, ?)", values)
        row = conn.execute(f"SELECT id FROM cache_origins WHERE {where}", values).fetchone()
    if not conn.in_transaction:
        with _origins_lock:
            _origins[memo_key] = int(row[0])
    return int(row[0])


def origins_where(provider: str | None, model: str | None) -> tuple[str, list[Any]]:
    """``origin IN (...)`` for the origins of a provider and / or model (all rows when both are None)."""
    clauses, args = [], []
    for column, value in (("provider", provider), ("model", model)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if not clauses:
        return "1", []
    return f"origin IN (SELECT id FROM cache_origins WHERE {' AND '.join(clauses)})", args


# ---- the move from the first layout ------------------------------------------------------------------------
def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}


def old_table(conn: sqlite3.Connection, table: str) -> str | None:
    """The name of ``table``'s first-layout rows still to move (``<table>_v1``), None when there are none."""
    name = f"{table}_v1"
    return name if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() else None


def _move_response(conn: sqlite3.Connection, path: str, row: dict[str, Any]) -> tuple[Any, ...]:
    ids = json.loads(row["text_ids"]) if row.get("text_ids") is not None else [texts.put(conn, t) for t in json.loads(row["texts"])]
    usage = json.loads(row["usage"])
    origin = origin_id(conn, path, row["provider"], row["model"], row["base_url"], row["task"])
    return (stored_key(row["key"]), origin, json.dumps(ids), int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)), int(usage.get("cached_input_tokens", 0)), row["created_at"])


def _move_embedding(conn: sqlite3.Connection, path: str, row: dict[str, Any]) -> tuple[Any, ...]:
    return stored_key(row["key"]), origin_id(conn, path, row["provider"], row["model"], None, ""), row["vector"]


_INSERTS = {
    RESPONSES: f"INSERT OR IGNORE INTO {RESPONSES} (key, origin, text_ids, input_tokens, output_tokens,"
               " cached_input_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    EMBEDDINGS: f"INSERT OR IGNORE INTO {EMBEDDINGS} (key, origin, vector) VALUES (?, ?, ?)",
}
_MOVES: dict[str, Callable[[sqlite3.Connection, str, dict[str, Any]], tuple[Any, ...]]] = {
    RESPONSES: _move_response, EMBEDDINGS: _move_embedding}


def ensure(conn: sqlite3.Connection, path: str, *, max_batches: int | None = None) -> bool:
    """Create the cache tables (a step of ``store.migrations``, after ``texts``), moving a first-layout table's
    rows (at most ``max_batches`` batches a table when given); True once nothing is left to move."""
    done = True
    for table in (RESPONSES, EMBEDDINGS):
        _rename_old(conn, table)
        engine.write(lambda: conn.executescript(DDL), what="create cache tables")
        done = _move_rows(conn, path, table, max_batches) and done
    return done


def _rename_old(conn: sqlite3.Connection, table: str) -> None:
    if _OLD_MARK[table] not in _columns(conn, table):
        return
    if table == RESPONSES:  # the first layout before its answers were by reference (500ef79) lacks the column
        engine.add_column(conn, table, "text_ids", "TEXT")

    def rename() -> None:
        with engine.immediate(conn):  # looked at again under the lock: another process may have renamed it meanwhile
            if _OLD_MARK[table] in _columns(conn, table) and old_table(conn, table) is None:
                conn.execute(f"ALTER TABLE {table} RENAME TO {table}_v1")

    engine.write(rename, what=f"rename {table}")


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _move_rows(conn: sqlite3.Connection, path: str, table: str, max_batches: int | None) -> bool:
    batches = 0
    while old_table(conn, table) is not None:
        if max_batches is not None and batches >= max_batches:
            return False

        def one() -> None:
            with engine.immediate(conn):
                old = old_table(conn, table)
                rows = _rows(conn, f"SELECT * FROM {old} LIMIT ?", (BATCH,)) if old else []
                if old and not rows:
                    conn.execute(f"DROP TABLE {old}")
                elif old:
                    conn.executemany(_INSERTS[table], [_MOVES[table](conn, path, r) for r in rows])
                    conn.executemany(f"DELETE FROM {old} WHERE key = ?", [(r["key"],) for r in rows])

        engine.write(one, what=f"move {table}")
        batches += 1
    return True
