"""The embedding cache's rows: a vector's float32 bytes under its key (``embeddings.cache`` makes the keys and
the vectors; this module only reads and writes the table).

A row holds the first 16 bytes of the key, its origin's id (``store.cache_tables``) and the vector's bytes exactly
as the provider's answer was normalised (lossless; its length gives the dimension). Rows of an older store not
moved to the narrow table yet (its move cut short) are read where they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rageval_core.core import paths
from rageval_core.store import cache_tables, db

_TABLE = cache_tables.EMBEDDINGS
_CHUNK = 500  # keys a lookup, under SQLite's variable limit


class VectorRows:
    """Look up and store vectors in the ``embedding_cache`` table of one store."""

    def __init__(self, db_path: str | Path | None = None) -> None:
        self.db_path = db_path
        self._path = str(db_path or paths.database_path())
        # an older store's rows move to the narrow table once (store.migrations); until they all have, misses look
        # there too
        self._moved = cache_tables.old_table(db.open_store(db_path), _TABLE) is None

    def lookup(self, keys: Sequence[str]) -> dict[str, bytes]:
        """The stored vectors (float32 bytes) of ``keys`` (hex digests) that the cache has."""
        conn = db.connect(self.db_path)
        found: dict[str, bytes] = {}
        by_stored = {cache_tables.stored_key(k): k for k in keys}
        stored = list(by_stored)
        for start in range(0, len(stored), _CHUNK):
            chunk = stored[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, vector in conn.execute(f"SELECT key, vector FROM {_TABLE} WHERE key IN ({marks})", chunk):
                found[by_stored[bytes(key)]] = bytes(vector)
        old = None if self._moved else cache_tables.old_table(conn, _TABLE)
        rest = [k for k in keys if k not in found] if old is not None else []
        for start in range(0, len(rest), _CHUNK):
            part = rest[start : start + _CHUNK]
            marks = ",".join("?" * len(part))
            for key, vector in conn.execute(f"SELECT key, vector FROM {old} WHERE key IN ({marks})", part):
                found[key] = bytes(vector)
        return found

    def store(self, keys: Sequence[str], vectors: Sequence[bytes], *, provider: str, model: str,
              base_url: str | None) -> bool:
        """Store vectors under their keys; False (and an ``embedding_cache`` warning) when the database stayed
        locked or failed: the vectors in hand are used either way."""
        conn = db.connect(self.db_path)

        def insert() -> None:
            # the origin outside the transaction (its id is remembered only there); the rows in one transaction:
            # in autocommit each row of an executemany was a commit of its own
            origin = cache_tables.origin_id(conn, self._path, provider, model, base_url, "")
            rows = [(cache_tables.stored_key(k), origin, v) for k, v in zip(keys, vectors)]
            with db.immediate(conn):
                conn.executemany(f"INSERT OR REPLACE INTO {_TABLE} (key, origin, vector) VALUES (?, ?, ?)", rows)

        try:
            db.write(insert, what="embedding cache write")
            return True
        except db.STORE_ERRORS as exc:
            db.warn("embedding_cache", exc)
            return False
