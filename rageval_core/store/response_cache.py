"""The response cache's rows: a completion's answers and usage under its key (``llm.transport.cache`` makes the
keys and decides what is cached; this module only reads and writes the table).

A row holds the first 16 bytes of the key, the id of its origin (provider, model, redacted URL, task:
``store.cache_tables``), the original usage and the ids of the redacted answers in ``store.texts`` (shared with
the call log's copy of the same response). A row of an older store not moved to the narrow table yet (its move
cut short) is read where it is. A cache that cannot be read or written (a database locked past the retries) is a
warning (``db.warn``), never a failure: the caller goes on with the answer in hand.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from rageval_core.core import paths
from rageval_core.core.redact import redact
from rageval_core.core.types import Usage
from rageval_core.store import cache_tables, db
from rageval_core.store.engine import Clock
from rageval_core.store import texts as text_store

_TABLE = cache_tables.RESPONSES


class ResponseRows:
    """Get and put cached completions in the ``llm_response_cache`` table of one store."""

    def __init__(self, db_path: str | Path | None = None, *, clock: Clock | None = None,
                 busy_timeout_s: float | None = None) -> None:
        self.db_path = db_path
        self.clock = clock
        self.busy_timeout_s = busy_timeout_s
        self._path = str(db_path or paths.database_path())
        # an older store's rows move to the narrow table once (store.migrations); until they all have, misses look
        # there too
        self._moved = cache_tables.old_table(self._open(), _TABLE) is None

    def _open(self) -> sqlite3.Connection:
        return db.open_store(self.db_path, busy_timeout_s=self.busy_timeout_s)

    def _conn(self) -> sqlite3.Connection:
        return db.connect(self.db_path, busy_timeout_s=self.busy_timeout_s)

    def get(self, key: str) -> tuple[list[str], Usage] | None:
        """The answers and original usage stored under ``key``; None on a miss or an unreadable cache (warned)."""
        try:
            conn = self._conn()
            row = conn.execute(f"SELECT text_ids, input_tokens, output_tokens, cached_input_tokens FROM {_TABLE}"
                               " WHERE key = ?", (cache_tables.stored_key(key),)).fetchone()
            if row is None:
                return None if self._moved else self._get_old(conn, key)
            ids = json.loads(row[0])
            found = text_store.get_many(conn, ids)
            return [found[i] for i in ids], Usage(int(row[1]), int(row[2]), int(row[3]))
        except (sqlite3.Error, LookupError) as exc:  # an unreadable cache (or an answer's text gone) is a miss, reported
            db.warn("cache", exc)
            return None

    def _get_old(self, conn: sqlite3.Connection, key: str) -> tuple[list[str], Usage] | None:
        """A row of an older store not moved yet (its move cut short): read as that layout kept it."""
        old = cache_tables.old_table(conn, _TABLE)
        row = None if old is None else conn.execute(f"SELECT texts, text_ids, usage FROM {old} WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        usage = Usage(**json.loads(row[2]))
        if row[1] is None:
            return list(json.loads(row[0])), usage
        ids = json.loads(row[1])
        found = text_store.get_many(conn, ids)
        return [found[i] for i in ids], usage

    def put(self, key: str, answers: Sequence[str], usage: Usage, *, provider: str, model: str,
            base_url: str | None, task: str) -> bool:
        """Store a completion's answers (redacted) and usage; False (and a ``cache`` warning) when the database
        stayed locked or failed. ``base_url`` is stored as given: the caller passes it redacted."""
        try:
            db.write(lambda: self._insert(key, answers, usage, provider, model, base_url, task), clock=self.clock,
                     what="cache write")
            return True
        except db.STORE_ERRORS as exc:
            db.warn("cache", exc)
            return False

    def _insert(self, key: str, answers: Sequence[str], u: Usage, provider: str, model: str, base_url: str | None,
                task: str) -> None:
        conn = self._conn()
        # the origin first, outside the transaction (its id is remembered only there), then one transaction for
        # the texts and the row: one commit a completion, not one a statement
        origin = cache_tables.origin_id(conn, self._path, provider, model, base_url, task)
        redacted = [redact(t) for t in answers]
        with db.immediate(conn):
            # the answers by reference to ``texts``, where the call log's copy of the same response already is
            memo = text_store.Memo()
            ids = [text_store.put(conn, t, memo) for t in redacted]
            conn.execute(
                f"INSERT OR REPLACE INTO {_TABLE} (key, origin, text_ids, input_tokens, output_tokens,"
                " cached_input_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cache_tables.stored_key(key), origin, json.dumps(ids, separators=(",", ":")), u.input_tokens,
                 u.output_tokens, u.cached_input_tokens, time.time()),
            )

    def count(self) -> int:
        conn = self._conn()
        old = cache_tables.old_table(conn, _TABLE)
        extra = 0 if old is None else int(conn.execute(f"SELECT COUNT(*) FROM {old}").fetchone()[0])
        return int(conn.execute(f"SELECT COUNT(*) FROM {_TABLE}").fetchone()[0]) + extra

    def clear(self, *, provider: str | None = None, model: str | None = None) -> int:
        """Delete entries (all, or one provider / model); returns how many."""
        conn = self._conn()
        where, args = cache_tables.origins_where(provider, model)
        deleted = int(conn.execute(f"DELETE FROM {_TABLE} WHERE {where}", args).rowcount or 0)
        old = cache_tables.old_table(conn, _TABLE)
        if old is not None:  # the first layout named them in its own columns
            clauses = [f"{c} = ?" for c, v in (("provider", provider), ("model", model)) if v is not None]
            values = [v for v in (provider, model) if v is not None]
            old_where = " AND ".join(clauses) or "1"
            deleted += int(conn.execute(f"DELETE FROM {old} WHERE {old_where}", values).rowcount or 0)
        return deleted
