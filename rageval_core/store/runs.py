"""SQLite run history: runs, per-row results, the call log and human labels.

Everything lives in the one workbench database (``rageval_core.store.db``; ``.rageval/`` or RAGEVAL_HOME).
Results are written the moment a (row, scorer) task finishes, in one transaction per task, so a killed
process loses at most the tasks that were in flight and a resumed run knows exactly what is done.
Every write goes through ``db.write``: a database locked by another process is waited for (busy timeout),
retried with backoff on the store's clock, and only then reported as ``db.StoreBusy`` for the caller to keep.
API keys are never passed in and never stored: every text and setting written goes through the one redaction
step (``rageval_core.core.redact``; ``stored_settings`` for settings) as a last guard, and the base URL is stored
without its credentials.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from rageval_core.store import db, packing, row_texts, texts
from rageval_core.core import paths
from rageval_core.store.call_log import CallEntry, call_entry, call_insert
from rageval_core.store.human_labels import HumanLabels
from rageval_core.store.human_labels import rows_with_labels as rows_with_labels  # re-exported
from rageval_core.core.clock import Clock
from rageval_core.core.redact import redact_data, redact_optional, redact_url, redactor
from rageval_core.core.types import MetricResult, Sample

RUNNING = "running"
DONE = "done"
CANCELLED = "cancelled"
FAILED = "failed"
STATUSES = (RUNNING, DONE, CANCELLED, FAILED)
T = TypeVar("T")

def stored_settings(value: Mapping[str, Any]) -> Any:
    """Run settings or versions as the store keeps them: redacted, credential-named entries dropped."""
    return redact_data(dict(value), drop_secret_fields=True)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class RunInfo:
    """One row of the runs table, decoded."""

    id: str
    created_at: float
    status: str
    dataset_name: str | None
    dataset_hash: str | None
    scorers: list[str]
    versions: dict[str, Any]
    provider: str | None
    model: str | None
    base_url: str | None
    settings: dict[str, Any]
    n_rows: int = 0
    finished_at: float | None = None
    note: str | None = None
    warnings: dict[str, int] = field(default_factory=dict)  # lost call-log / cache writes by kind
    name: str | None = None  # the user's name for the run (History), None until set

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class RowInfo:
    """A dataset row as the run saw it: position, category, why it was rejected if it was, and the sample it scored
    (kept with the run: ``store.row_texts``; None for a rejected row or a run stored before rows were kept)."""

    sample_id: str
    position: int
    category: str | None = None
    valid: bool = True
    error: str | None = None
    sample: Sample | None = None


class Store(HumanLabels):
    """Run history in SQLite. Thread-safe: each thread gets its own connection from ``rageval_core.store.db``."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        clock: Clock | None = None,
        busy_timeout_s: float | None = None,
        attempts: int = db.DEFAULT_ATTEMPTS,
    ) -> None:
        self.path = str(path) if path is not None else str(paths.database_path())
        self.clock = clock
        self.busy_timeout_s = busy_timeout_s
        self.attempts = attempts
        self._lock = threading.Lock()
        self._known = texts.Known()  # ids of the texts this store has committed (``_write_texts``)
        # the schema checked and an older store migrated (store.migrations), a move an earlier open cut short too
        db.open_store(self.path, busy_timeout_s=busy_timeout_s)

    def _conn(self) -> sqlite3.Connection:
        return db.connect(self.path, busy_timeout_s=self.busy_timeout_s)

    def read_only_reason(self) -> str | None:
        """Why this store cannot be written (it was opened read-only: reading works, saving does not), or None."""
        if not db.is_read_only(self.path):
            return None
        return db.read_only_reason(self.path) or "read-only"

    def require_writable(self, command: str) -> None:
        """Refuse ``command`` up front (exit 2) when the store cannot be written (``StoreReadOnly``) or has damaged
        pages (``StoreCorrupt``): a command that keeps results here (evaluate) must not compute them first and
        lose them at the end."""
        conn = self._conn()  # this thread's connection, which knows whether the file was opened read-only
        if db.is_read_only(self.path):
            raise db.cannot_run(self.path, command)
        db.check_intact(conn, self.path)

    def _write(self, fn: Callable[[sqlite3.Connection], T], what: str) -> T:
        """One write transaction (BEGIN IMMEDIATE … COMMIT), one thread at a time, retried while locked."""

        def attempt() -> T:
            conn = self._conn()
            with self._lock:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    out = fn(conn)
                    conn.execute("COMMIT")
                    return out
                except BaseException:
                    if conn.in_transaction:  # SQLite already rolled back on a full disk: keep its error, not ours
                        conn.execute("ROLLBACK")
                    raise

        return db.write(attempt, clock=self.clock, attempts=self.attempts, what=what, path=self.path)

    def _write_texts(self, fn: Callable[[sqlite3.Connection, texts.Memo], T], what: str) -> T:
        """``_write`` for a transaction that puts texts: ``fn`` gets the transaction's memo over the ids this store
        has committed before (``texts.Known``), and the ids it put are known to later transactions once committed."""
        memos: list[texts.Memo] = []

        def run(conn: sqlite3.Connection) -> T:
            memos[:] = [texts.Memo(self._known)]  # a fresh one each attempt: a retried attempt's ids were rolled back
            return fn(conn, memos[0])

        out = self._write(run, what)
        self._known.add(memos[0])  # committed: _write returned
        return out

    # ---- runs -------------------------------------------------------------------------------------
    def create_run(
        self,
        *,
        scorers: Sequence[str],
        run_id: str | None = None,
        dataset_name: str | None = None,
        dataset_hash: str | None = None,
        versions: Mapping[str, Any] | None = None,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        settings: Mapping[str, Any] | None = None,
        rows: Iterable[RowInfo] = (),
    ) -> str:
        """Record a new run (status ``running``) and the rows it covers, each with the sample it scores; returns its id."""
        rid = run_id or new_run_id()
        rows = list(rows)

        def insert(conn: sqlite3.Connection, memo: texts.Memo) -> None:
            conn.execute(
                "INSERT INTO runs (id, created_at, status, dataset_name, dataset_hash, scorers, versions, provider,"
                " model, base_url, settings, n_rows) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    rid,
                    time.time(),
                    RUNNING,
                    dataset_name,
                    dataset_hash,
                    _dumps(list(scorers)),
                    _dumps(stored_settings(versions or {})),
                    provider,
                    model,
                    redact_url(base_url),
                    _dumps(stored_settings(settings or {})),
                    sum(1 for r in rows if r.valid),
                ),
            )
            conn.executemany("INSERT " + row_texts.INSERT_ROW, [
                row_texts.row_values(conn, rid, r.sample_id, r.position, r.category, r.valid, redact_optional(r.error),
                                     r.sample, memo) for r in rows])

        self._write_texts(insert, "create run")
        return rid

    def get_run(self, run_id: str) -> RunInfo | None:
        row = self._conn().execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return None if row is None else _run_info(row)

    def find_run(self, prefix: str) -> RunInfo | None:
        """A run by full id or by a unique id prefix (the CLI accepts short ids)."""
        exact = self.get_run(prefix)
        if exact is not None:
            return exact
        rows = self._conn().execute("SELECT * FROM runs WHERE id LIKE ? ORDER BY created_at", (prefix + "%",)).fetchall()
        return _run_info(rows[0]) if len(rows) == 1 else None

    def list_runs(self, limit: int | None = None) -> list[RunInfo]:
        sql = "SELECT * FROM runs ORDER BY created_at DESC"
        params: tuple[Any, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (int(limit),)
        return [_run_info(r) for r in self._conn().execute(sql, params).fetchall()]

    def set_status(
        self, run_id: str, status: str, note: str | None = None, warnings: Mapping[str, int] | None = None
    ) -> None:
        """Set a run's status; ``warnings`` (lost call-log / cache writes by kind) replaces the stored counts."""
        if status not in STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        finished = None if status == RUNNING else time.time()
        counts = None if warnings is None else _dumps(dict(warnings))
        self._write(
            lambda conn: conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, note = COALESCE(?, note), warnings = COALESCE(?, warnings)"
                " WHERE id = ?",
                (status, finished, redact_optional(note), counts, run_id),
            ),
            "set run status",
        )

    def label_run(self, run_id: str, *, name: str | None = None, note: str | None = None) -> None:
        """Set a run's name and note as the user typed them (History); "" clears one, None leaves it."""
        def update(conn: sqlite3.Connection) -> None:
            if name is not None:
                conn.execute("UPDATE runs SET name = ? WHERE id = ?", (redact_optional(name.strip() or None), run_id))
            if note is not None:
                conn.execute("UPDATE runs SET note = ? WHERE id = ?", (redact_optional(note.strip() or None), run_id))

        self._write(update, "label run")

    def delete_run(self, run_id: str) -> None:
        def delete(conn: sqlite3.Connection) -> None:
            for table, col in (("results", "run_id"), ("run_rows", "run_id"), ("call_log", "run_id"), ("runs", "id")):
                conn.execute(f"DELETE FROM {table} WHERE {col} = ?", (run_id,))

        self._write(delete, "delete run")

    def rows(self, run_id: str) -> list[RowInfo]:
        """The run's rows in dataset order, without their samples (``samples`` reads those)."""
        return [
            RowInfo(r["sample_id"], r["position"], r["category"], bool(r["valid"]), r["error"])
            for r in self._conn().execute(
                "SELECT sample_id, position, category, valid, error FROM run_rows WHERE run_id = ? ORDER BY position",
                (run_id,),
            ).fetchall()
        ]

    def samples(self, run_id: str) -> dict[str, Sample]:
        """The samples the run scored, ``{row id: Sample}`` in dataset order, as they were when it was created (empty
        for a run stored before runs kept their rows: ``keeps_samples``)."""
        return row_texts.samples_by_id(self._conn(), run_id)

    def keeps_samples(self, run_id: str) -> bool:
        """Whether the run keeps the samples it scored (False: stored before runs kept them)."""
        return row_texts.has_samples(self._conn(), run_id)

    def attach_samples(self, run_id: str, samples: Sequence[Sample]) -> int:
        """Keep ``samples`` with the run's rows that have none (a run stored before runs kept them, resumed on the
        same data); how many rows got theirs."""
        return self._write(lambda conn: row_texts.attach_rows(conn, run_id, samples), "attach samples")

    # ---- results ----------------------------------------------------------------------------------
    def save_task(
        self, run_id: str, sample_id: str, scorer: str, results: Sequence[MetricResult], *, repeat: int = 0
    ) -> None:
        """Write all results of one finished (row, scorer, repeat) task in one transaction, replacing any earlier
        ones. ``repeat`` is the run repeat (0 for a run without repeats; see ``RunSpec.repeats``)."""
        self.save_tasks(run_id, [(sample_id, scorer, results, repeat)])

    def save_tasks(self, run_id: str, tasks: Sequence[tuple[str, str, Sequence[MetricResult], int]]) -> None:
        """Write several finished (sample_id, scorer, results, repeat) tasks in one transaction, each replacing its
        earlier results; retried while the database is locked, then ``db.StoreBusy`` with nothing written."""
        now = time.time()

        def replace(conn: sqlite3.Connection, memo: texts.Memo) -> None:
            text = redactor()
            for sample_id, scorer, results, repeat in tasks:
                conn.execute(
                    "DELETE FROM results WHERE run_id = ? AND sample_id = ? AND scorer = ? AND repeat_index = ?",
                    (run_id, sample_id, scorer, int(repeat)),
                )
                conn.executemany(
                    packing.RESULT_INSERT,
                    [packing.result_row(conn, run_id, sample_id, scorer, r, now, memo, text) + (int(repeat),) for r in results],
                )

        self._write_texts(replace, "save results")

    def results(self, run_id: str, repeat: int = 0) -> list[MetricResult]:
        """Stored results of a run for one repeat (0: the run itself), in the order they were written."""
        return [r for _, r in self.results_with_scorer(run_id, repeat)]

    def results_with_scorer(self, run_id: str, repeat: int = 0) -> list[tuple[str, MetricResult]]:
        rows = self._conn().execute(
            "SELECT * FROM results WHERE run_id = ? AND repeat_index = ? ORDER BY id", (run_id, int(repeat))
        ).fetchall()
        read = packing.reader(self._conn())
        return [(row["scorer"], _metric_result(row, read)) for row in rows]

    def results_by_repeat(self, run_id: str) -> dict[int, list[MetricResult]]:
        """Every repeat's results, ``{repeat: results}`` (one key, 0, for a run without repeats)."""
        out: dict[int, list[MetricResult]] = {}
        read = packing.reader(self._conn())
        for row in self._conn().execute(
            "SELECT * FROM results WHERE run_id = ? ORDER BY repeat_index, id", (run_id,)
        ).fetchall():
            out.setdefault(int(row["repeat_index"]), []).append(_metric_result(row, read))
        return out

    def finished_tasks(self, run_id: str, repeat: int = 0) -> set[tuple[str, str]]:
        """(sample_id, scorer) pairs whose results are stored for one repeat."""
        rows = self._conn().execute(
            "SELECT DISTINCT sample_id, scorer FROM results WHERE run_id = ? AND repeat_index = ?", (run_id, int(repeat))
        ).fetchall()
        return {(r["sample_id"], r["scorer"]) for r in rows}

    def count_finished(self, run_id: str) -> int:
        """How many (sample_id, scorer, repeat) tasks have stored results, all repeats (counted in SQL)."""
        row = self._conn().execute(
            "SELECT COUNT(*) FROM (SELECT DISTINCT sample_id, scorer, repeat_index FROM results WHERE run_id = ?)",
            (run_id,),
        ).fetchone()
        return int(row[0])

    def iter_results(self, run_id: str, repeat: int = 0, batch: int = 1000) -> Iterator[tuple[str, MetricResult]]:
        """(scorer, result) pairs of one repeat in the order they were written, read in batches."""
        cur = self._conn().execute(
            "SELECT * FROM results WHERE run_id = ? AND repeat_index = ? ORDER BY id", (run_id, int(repeat))
        )
        read = packing.reader(self._conn())
        while True:
            chunk = cur.fetchmany(batch)
            if not chunk:
                return
            for row in chunk:
                yield row["scorer"], _metric_result(row, read)

    def iter_calls(self, run_id: str, batch: int = 500) -> Iterator[CallEntry]:
        """The run's call log in order, read in batches (never the whole log in memory)."""
        cur = self._conn().execute("SELECT * FROM call_log WHERE run_id = ? ORDER BY id", (run_id,))
        read = packing.reader(self._conn())
        while True:
            chunk = cur.fetchmany(batch)
            if not chunk:
                return
            for row in chunk:
                yield call_entry(row, read)

    # ---- call log ---------------------------------------------------------------------------------
    def log_call(self, entry: CallEntry) -> None:
        """Append one call to the log at once (its own transaction)."""
        self.log_calls([entry])

    def log_calls(self, entries: Sequence[CallEntry]) -> None:
        """Append several calls in one transaction (the runner's group commit: ``run.calllog``)."""

        def insert(conn: sqlite3.Connection, memo: texts.Memo) -> None:
            text = redactor()
            for entry in entries:
                conn.execute(*call_insert(conn, entry, memo, text))

        self._write_texts(insert, "log call")

    def calls(self, run_id: str) -> list[CallEntry]:
        rows = self._conn().execute("SELECT * FROM call_log WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()
        read = packing.reader(self._conn())
        return [call_entry(r, read) for r in rows]


def new_run_id() -> str:
    """Sortable, short, unique: UTC timestamp plus random suffix."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def _run_info(row: sqlite3.Row) -> RunInfo:
    return RunInfo(
        id=row["id"],
        created_at=row["created_at"],
        status=row["status"],
        dataset_name=row["dataset_name"],
        dataset_hash=row["dataset_hash"],
        scorers=json.loads(row["scorers"]),
        versions=json.loads(row["versions"]),
        provider=row["provider"],
        model=row["model"],
        base_url=row["base_url"],
        settings=json.loads(row["settings"]),
        n_rows=row["n_rows"],
        finished_at=row["finished_at"],
        note=row["note"],
        warnings=json.loads(row["warnings"]) if row["warnings"] else {},
        name=row["name"] if "name" in row.keys() else None,
    )


def _metric_result(row: sqlite3.Row, read: packing.Reader | None = None) -> MetricResult:
    """One ``results`` row decoded (``packing.metric_result``; kept under this name for its importers)."""
    return packing.metric_result(row, read)
