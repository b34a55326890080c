"""Label splits and test looks, kept with the human labels (same database, keyed by dataset hash + row id).

``label_splits`` holds each row's split and the seed and fractions that made it, so the split survives
restarts and a row keeps its split when more labels arrive. ``split_test_looks`` has one row per look at
test figures: the count is the product's own guard against tuning on test, so it is never reset by
re-splitting. Both tables are made by the ``label_splits`` step of ``store.migrations``: an older store gets
them empty and simply has no split yet.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass

from rageval_core.store import db
from rageval_core.store.runs import Store

@dataclass(frozen=True)
class StoredSplit:
    """A dataset's stored split: ``{row_id: split}`` and the seed and fractions it was dealt with."""

    assignment: dict[str, str]
    seed: int
    fractions: dict[str, float]


def _conn(store: Store) -> sqlite3.Connection:
    return db.connect(store.path)


def _key(fractions: Mapping[str, float]) -> str:
    return json.dumps({k: round(float(v), 6) for k, v in sorted(fractions.items())}, sort_keys=True)


def load_split(store: Store, dataset_hash: str) -> StoredSplit | None:
    """The stored split of a dataset, or ``None`` when it was never split. Rows dealt under another seed
    or fractions than the latest (never left behind by ``save_split``) are not returned."""
    rows = _conn(store).execute(
        "SELECT row_id, split, seed, fractions FROM label_splits WHERE dataset_hash = ? ORDER BY ts DESC, row_id",
        (dataset_hash,),
    ).fetchall()
    if not rows:
        return None
    seed, fractions = int(rows[0]["seed"]), rows[0]["fractions"]
    assignment = {r["row_id"]: r["split"] for r in rows if int(r["seed"]) == seed and r["fractions"] == fractions}
    return StoredSplit(assignment, seed, {k: float(v) for k, v in json.loads(fractions).items()})


def save_split(
    store: Store, dataset_hash: str, assignment: Mapping[str, str], seed: int, fractions: Mapping[str, float],
    *, replace: bool = False,
) -> None:
    """Store rows' splits; ``replace`` drops the dataset's earlier split first (a new seed or fractions)."""
    now = time.time()
    key = _key(fractions)
    conn = _conn(store)

    def write() -> None:
        with db.immediate(conn):
            if replace:
                conn.execute("DELETE FROM label_splits WHERE dataset_hash = ?", (dataset_hash,))
            conn.executemany(
                "INSERT INTO label_splits (dataset_hash, row_id, split, seed, fractions, ts) VALUES (?,?,?,?,?,?)"
                " ON CONFLICT (dataset_hash, row_id) DO UPDATE SET split = excluded.split, seed = excluded.seed,"
                " fractions = excluded.fractions, ts = excluded.ts",
                [(dataset_hash, str(rid), s, int(seed), key, now) for rid, s in assignment.items()],
            )

    db.write(write, clock=store.clock, what="save label split", path=store.path)


def record_test_look(store: Store, dataset_hash: str, what: str | None = None) -> int:
    """Count one look at a dataset's test figures (``what``: where, e.g. ``cli`` or ``trust page``);
    returns the count including this one."""
    conn = _conn(store)
    db.write(lambda: conn.execute(
        "INSERT INTO split_test_looks (dataset_hash, what, ts) VALUES (?,?,?)", (dataset_hash, what, time.time())
    ), clock=store.clock, what="count test look", path=store.path)
    return count_test_looks(store, dataset_hash)


def count_test_looks(store: Store, dataset_hash: str) -> int:
    """How many times this dataset's test figures were opened."""
    row = _conn(store).execute("SELECT COUNT(*) FROM split_test_looks WHERE dataset_hash = ?", (dataset_hash,)).fetchone()
    return int(row[0])


__all__ = ["StoredSplit", "load_split", "record_test_look", "count_test_looks", "save_split"]
