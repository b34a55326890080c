"""Once per older store: results' details and the call log's texts moved to ``texts``, in place, resumably.

A store written before ``store.texts`` keeps every prompt and response inline, in each result's details and
in the call log. Opening it converts the rows in batches of ``BATCH``, one transaction each, oldest first, and
records the last id done in ``store_migrations``: a process killed mid-way (or a database locked by another)
leaves converted and unconverted rows, both readable, and the next open goes on from the recorded id. The
decoded details and calls are equal to what they were (``details_codec`` keeps key order and values), so
exports of a run are byte-identical before and after.

The space freed inside the file is reused by later writes; the file shrinks only on ``VACUUM`` (by hand:
``sqlite3 .rageval/rageval.sqlite VACUUM``, which needs the file's size again free on disk).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Callable

from rageval_core.store import engine, packing, texts

BATCH = 200
_RESULTS = "texts_results"
_CALLS = "texts_calls"


def _state(conn: sqlite3.Connection, name: str) -> tuple[int, bool]:
    row = conn.execute("SELECT done_upto, finished FROM store_migrations WHERE name = ?", (name,)).fetchone()
    return (0, False) if row is None else (int(row[0]), bool(row[1]))


def _record(conn: sqlite3.Connection, name: str, upto: int, finished: bool) -> None:
    conn.execute("INSERT OR REPLACE INTO store_migrations (name, done_upto, finished) VALUES (?, ?, ?)",
                 (name, upto, int(finished)))


def _results_batch(conn: sqlite3.Connection, after: int, memo: dict[str, int]) -> int | None:
    """Convert the next results after id ``after``; the last id converted, None when none is left."""
    rows = conn.execute("SELECT id, details, details_pack FROM results WHERE id > ? ORDER BY id LIMIT ?",
                        (after, BATCH)).fetchall()
    for rid, details, refs in rows:
        if refs is None:
            skeleton, new_refs = packing.pack_details(conn, json.loads(details), memo)
            conn.execute("UPDATE results SET details = ?, details_pack = ? WHERE id = ?", (skeleton, new_refs, rid))
    return int(rows[-1][0]) if rows else None


def _calls_batch(conn: sqlite3.Connection, after: int, memo: dict[str, int]) -> int | None:
    rows = conn.execute("SELECT id, prompt, response, prompt_parts, response_id FROM call_log WHERE id > ? ORDER BY id"
                        " LIMIT ?", (after, BATCH)).fetchall()
    for cid, prompt, response, parts, response_id in rows:
        if parts is None and response_id is None and (prompt is not None or response is not None):
            # already redacted when first written: stored as they are
            new_parts, new_response = packing.pack_call_texts(conn, prompt, response, memo)
            conn.execute("UPDATE call_log SET prompt = NULL, response = NULL, prompt_parts = ?, response_id = ?"
                         " WHERE id = ?", (new_parts, new_response, cid))
    return int(rows[-1][0]) if rows else None


def _run(conn: sqlite3.Connection, name: str, step: Callable[[sqlite3.Connection, int, dict[str, int]], int | None],
         max_batches: int | None) -> bool:
    """Batches of one table until done (True) or ``max_batches`` ran (False: the rest on a later open)."""
    batches = 0
    while max_batches is None or batches < max_batches:
        def one() -> bool:
            with engine.immediate(conn):
                upto, finished = _state(conn, name)
                last = None if finished else step(conn, upto, texts.Memo())
                _record(conn, name, upto if last is None else last, last is None)
            return last is None

        if engine.write(one, what=f"migrate {name}"):
            return True
        batches += 1
    return False


def pending(conn: sqlite3.Connection) -> bool:
    """Whether this store still has rows to convert (one look at ``store_migrations``, made by the ``texts`` step
    of ``store.migrations``)."""
    return not (_state(conn, _RESULTS)[1] and _state(conn, _CALLS)[1])


def migrate(conn: sqlite3.Connection, *, max_batches: int | None = None) -> bool:
    """Convert what is left (at most ``max_batches`` batches a table when given); True once all is done.

    A store created by this version has nothing to convert: its first open finds no rows and marks both done."""
    if not pending(conn):
        return True
    done_results = _run(conn, _RESULTS, _results_batch, max_batches)
    done_calls = _run(conn, _CALLS, _calls_batch, max_batches)
    return done_results and done_calls
