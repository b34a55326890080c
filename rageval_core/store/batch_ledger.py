"""Batch jobs and their answers in the store's SQLite database, so a run survives the process that submitted it
(``run.batch`` submits and collects them; this module is the tables' one door).

``batch_jobs`` remembers every submitted job (provider, model, the request keys it carries, its state);
``batch_answers`` holds each request's answer texts and usage, or its per-request error. Keys are the
response cache's keys (never a credential: the cache key is a digest).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from rageval_core.store import db
from rageval_core.core.redact import redact, redact_optional
from rageval_core.core.types import Usage

RUNNING = "running"
DONE = "done"
FAILED = "failed"


@dataclass(frozen=True)
class BatchAnswer:
    """One request's outcome in a batch job: texts and usage, or an error kind and message."""

    key: str
    job_id: str
    texts: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    error_kind: str | None = None
    error_message: str | None = None
    status: int | None = None

    @property
    def ok(self) -> bool:
        return self.error_kind is None


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    provider: str
    model: str
    round: int
    keys: tuple[str, ...]
    state: str


class Ledger:
    """Read and write the two batch tables of one database."""

    def __init__(self, db_path: str | Path | None = None) -> None:
        self.db_path = db_path
        db.open_store(db_path)  # the tables come with the schema (the ``batch_jobs`` step of store.migrations)

    def _conn(self) -> sqlite3.Connection:
        return db.connect(self.db_path)

    def add_job(self, job_id: str, provider: str, model: str, round_no: int, keys: Sequence[str]) -> None:
        db.write(lambda: self._conn().execute(
            "INSERT OR REPLACE INTO batch_jobs (job_id, provider, model, round, keys, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (job_id, provider, model, round_no, json.dumps(list(keys)), RUNNING, time.time()),
        ), what="batch job")

    def set_state(self, job_id: str, state: str) -> None:
        db.write(lambda: self._conn().execute(
            "UPDATE batch_jobs SET state = ?, finished_at = ? WHERE job_id = ?", (state, time.time(), job_id)
        ), what="batch job state")

    def running_jobs(self, provider: str, model: str) -> list[JobRecord]:
        """Jobs submitted earlier and not yet collected (a process died while they ran)."""
        rows = self._conn().execute(
            "SELECT * FROM batch_jobs WHERE provider = ? AND model = ? AND state = ? ORDER BY created_at",
            (provider, model, RUNNING),
        ).fetchall()
        return [JobRecord(r["job_id"], r["provider"], r["model"], int(r["round"]), tuple(json.loads(r["keys"])), r["state"]) for r in rows]

    def job(self, job_id: str) -> JobRecord | None:
        r = self._conn().execute("SELECT * FROM batch_jobs WHERE job_id = ?", (job_id,)).fetchone()
        return None if r is None else JobRecord(r["job_id"], r["provider"], r["model"], int(r["round"]), tuple(json.loads(r["keys"])), r["state"])

    def save_answers(self, answers: Iterable[BatchAnswer]) -> int:
        rows = [
            (a.key, a.job_id, json.dumps([redact(t) for t in a.texts], ensure_ascii=False) if a.ok else None,
             json.dumps(a.usage.to_dict()) if a.ok else None, a.error_kind, redact_optional(a.error_message), a.status)
            for a in answers
        ]

        def insert() -> None:
            conn = self._conn()
            with db.immediate(conn):
                conn.executemany(
                    "INSERT OR REPLACE INTO batch_answers (key, job_id, texts, usage, error_kind, error_message, status)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)", rows,
                )

        db.write(insert, what="batch answers")
        return len(rows)

    def answer(self, key: str) -> BatchAnswer | None:
        r = self._conn().execute("SELECT * FROM batch_answers WHERE key = ?", (key,)).fetchone()
        if r is None:
            return None
        if r["error_kind"] is not None:
            return BatchAnswer(r["key"], r["job_id"], error_kind=r["error_kind"], error_message=r["error_message"], status=r["status"])
        return BatchAnswer(r["key"], r["job_id"], tuple(json.loads(r["texts"])), Usage(**json.loads(r["usage"])), status=r["status"])

    def jobs_for(self, keys: Iterable[str]) -> list[str]:
        """The jobs that answered ``keys`` (for the run's settings and export)."""
        wanted = list(keys)
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self._conn().execute(f"SELECT DISTINCT job_id FROM batch_answers WHERE key IN ({marks})", chunk))
        return sorted(found)
