"""The run's row table when the rows arrive while the run goes (a file evaluated as it is read): rows added a
chunk at a time, and the dataset's identity (content hash, row count, issues, late versions) written once the
reader has reached the end (``run.feed`` calls these). Also the two reads ``load_run`` needs without building a
``RowInfo`` per row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from rageval_core.core.redact import redact_optional
from rageval_core.store import row_texts, texts
from rageval_core.store.runs import RowInfo, Store, _dumps, stored_settings


# A row already there is kept; one stored before runs kept their rows gets its sample now (a resume of such a run).
_KEEP_ROW = " ON CONFLICT (run_id, sample_id) DO UPDATE SET sample = COALESCE(run_rows.sample, excluded.sample)"


def add_run_rows(store: Store, run_id: str, rows: Sequence[RowInfo]) -> None:
    """Add rows to a run's row table, each with the sample it scores (a row already there is kept: a resume reads
    the file again) and set the run's row count to its valid rows so far, in one transaction."""

    def insert(conn: sqlite3.Connection, memo: texts.Memo) -> None:
        conn.executemany("INSERT " + row_texts.INSERT_ROW + _KEEP_ROW, [
            row_texts.row_values(conn, run_id, r.sample_id, r.position, r.category, r.valid, redact_optional(r.error),
                                 r.sample, memo) for r in rows])
        conn.execute(
            "UPDATE runs SET n_rows = (SELECT COUNT(*) FROM run_rows WHERE run_id = ? AND valid = 1) WHERE id = ?",
            (run_id, run_id),
        )

    store._write_texts(insert, "add run rows")


def finish_run_dataset(
    store: Store, run_id: str, *, dataset_hash: str | None, versions: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Write what is known of a dataset once it has been read to the end: its content hash, the versions of
    languages met after the first rows (``versions``, replacing), and ``settings`` merged into the run's."""

    def update(conn: sqlite3.Connection) -> None:
        row = conn.execute("SELECT settings FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return
        merged = {**json.loads(row[0]), **stored_settings(settings or {})}
        conn.execute("UPDATE runs SET settings = ?, dataset_hash = COALESCE(?, dataset_hash) WHERE id = ?",
                     (_dumps(merged), dataset_hash, run_id))
        if versions is not None:
            conn.execute("UPDATE runs SET versions = ? WHERE id = ?", (_dumps(stored_settings(versions)), run_id))

    store._write(update, "finish run dataset")


def invalid_rows(store: Store, run_id: str) -> list[RowInfo]:
    """The run's rejected rows, in order (a 100,000-row run has a handful; its valid rows are not read)."""
    cur = store._conn().execute(
        "SELECT sample_id, position, category, valid, error FROM run_rows WHERE run_id = ? AND valid = 0 ORDER BY position",
        (run_id,),
    )
    return [RowInfo(r[0], r[1], r[2], bool(r[3]), r[4]) for r in cur]


def count_valid_rows(store: Store, run_id: str) -> int:
    return int(store._conn().execute("SELECT COUNT(*) FROM run_rows WHERE run_id = ? AND valid = 1", (run_id,)).fetchone()[0])

