"""Large stored runs for page timings: an evaluated run cloned in SQL to any number of rows.

Every row of the template run (the sample it scored, its results with their details, and its call log) is copied
``copies`` times under new sample ids (``<id>~<copy>``), so a 1,000- or 10,000-row run has the shape and the
detail sizes of a real one without evaluating 10,000 rows. Used by bench (``bench.big_run``: the pages' and the
browser's timings) and the tests of large runs.
"""

from __future__ import annotations

import time

from rageval_core.store.runs import Store, new_run_id


def _columns(store: Store, table: str) -> list[str]:
    return [r[1] for r in store._conn().execute(f"PRAGMA table_info({table})")]


def clone_run(store: Store, template: str, copies: int, *, dataset_hash: str | None = None,
              dataset_name: str | None = None, created_at: float | None = None) -> str:
    """A new finished run holding ``copies`` copies of ``template``'s rows; returns its id."""
    new = new_run_id()
    n_template = store._conn().execute("SELECT COUNT(*) FROM run_rows WHERE run_id = ?", (template,)).fetchone()[0]
    n = f"WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < {int(copies) - 1})"
    run_cols = [c for c in _columns(store, "runs")]
    picks = {"id": "?", "created_at": "?", "dataset_hash": "COALESCE(?, dataset_hash)",
             "dataset_name": "COALESCE(?, dataset_name)", "n_rows": "n_rows * ?"}
    params = {"id": new, "created_at": created_at or time.time(), "dataset_hash": dataset_hash,
              "dataset_name": dataset_name, "n_rows": int(copies)}
    select = ", ".join(picks.get(c, c) for c in run_cols)
    ordered = [params[c] for c in run_cols if c in picks]
    res_cols = [c for c in _columns(store, "results") if c != "id"]
    call_cols = [c for c in _columns(store, "call_log") if c != "id"]

    def rename(cols: list[str]) -> str:
        return ", ".join("? AS run_id" if c == "run_id" else "sample_id || '~' || k" if c == "sample_id" else c for c in cols)

    def write(conn) -> None:  # type: ignore[no-untyped-def]
        conn.execute(f"INSERT INTO runs ({', '.join(run_cols)}) SELECT {select} FROM runs WHERE id = ?", (*ordered, template))
        conn.execute(
            f"{n} INSERT INTO run_rows (run_id, sample_id, position, category, valid, error, sample)"
            f" SELECT ?, sample_id || '~' || k, k * {n_template} + position, category, valid, error, sample"
            " FROM run_rows, n WHERE run_id = ? ORDER BY k, position", (new, template))
        conn.execute(f"{n} INSERT INTO results ({', '.join(res_cols)}) SELECT {rename(res_cols)}"
                     " FROM results, n WHERE run_id = ? ORDER BY k, id", (new, template))
        conn.execute(f"{n} INSERT INTO call_log ({', '.join(call_cols)}) SELECT {rename(call_cols)}"
                     " FROM call_log, n WHERE run_id = ? ORDER BY k, id", (new, template))

    store._write(write, "clone run")
    return new
