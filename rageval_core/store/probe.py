"""Looking at a store another process is writing, without joining it (bench/: the soak, stream and scale runs).

Why not ``store.db``: a probe polls a CLI run's store while that process writes it (and is killed in the middle of
it); opening it the store's way would migrate it, switch its journal mode and wait out its locks. A probe opens the
file read-only with a short timeout, never migrates, and answers 0 / nothing while the file is absent or busy.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def _rows(path: Path, sql: str, *params: Any, timeout_s: float = 30.0) -> list[tuple[Any, ...]]:
    if not path.exists():
        return []
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout_s)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:  # not written yet, or busy past the timeout: nothing to see this time
        return []


def _one(path: Path, sql: str, *params: Any, timeout_s: float = 30.0) -> Any:
    rows = _rows(path, sql, *params, timeout_s=timeout_s)
    return rows[0][0] if rows else None


def stored_results(path: Path, timeout_s: float = 0.2) -> int:
    """How many results the store holds (0 while it is absent or busy)."""
    return int(_one(path, "SELECT COUNT(*) FROM results", timeout_s=timeout_s) or 0)


def finished_tasks(path: Path) -> int:
    """Distinct (sample id, scorer) pairs with stored results, every run."""
    return int(_one(path, "SELECT COUNT(*) FROM (SELECT DISTINCT sample_id, scorer FROM results)") or 0)


def latest_run(path: Path) -> str | None:
    """The id of the run created last."""
    found = _one(path, "SELECT id FROM runs ORDER BY created_at DESC LIMIT 1")
    return None if found is None else str(found)


def last_call_id(path: Path) -> int:
    """The call log's highest id (0 when empty)."""
    return int(_one(path, "SELECT MAX(id) FROM call_log") or 0)


def provider_call_keys(path: Path, run_id: str, after_id: int = 0, *, failed: bool = True) -> list[str]:
    """Request keys of the run's calls that reached the provider (not cache hits) after call ``after_id``;
    ``failed=False`` leaves out the calls that failed."""
    where = "" if failed else " AND error IS NULL"
    return [k for (k,) in _rows(path, "SELECT request_key FROM call_log WHERE run_id = ? AND id > ? AND cached = 0"
                                + where, run_id, after_id)]


def reasked_calls(path: Path, run_id: str) -> int | None:
    """The run's calls that were re-asks; None when the call log cannot say (a build before re-asks)."""
    found = _one(path, "SELECT COUNT(*) FROM call_log WHERE run_id = ? AND reask > 0", run_id)
    return None if found is None else int(found)


def bytes_per_result(path: Path) -> float | None:
    """The store file's size after a WAL checkpoint ÷ the results it holds (None without a store or results); for
    a store no other process is writing any more."""
    if not path.is_file():
        return None
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        n = int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    finally:
        conn.close()
    return path.stat().st_size / n if n else None
