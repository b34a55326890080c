"""The last trust report computed for each run (table ``trust_reports``): what the run's export JSON carries as
its ``trust`` block (``analysis.trust.run_report`` computes it)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from rageval_core.store import db
from rageval_core.store.runs import Store


def save_report(store: Store, run_id: str, report: Mapping[str, Any]) -> None:
    """Keep ``report`` as the run's latest trust report (replacing an earlier one)."""
    conn = db.connect(store.path)
    db.write(lambda: conn.execute(
        "INSERT INTO trust_reports (run_id, created_at, report) VALUES (?,?,?) ON CONFLICT (run_id) DO UPDATE SET"
        " created_at = excluded.created_at, report = excluded.report",
        (run_id, time.time(), json.dumps(report, ensure_ascii=False, default=str)),
    ), clock=store.clock, what="save trust report", path=store.path)


def saved_report(store: Store, run_id: str) -> dict[str, Any] | None:
    """The last saved trust report of a run, or ``None`` when none was computed."""
    row = db.connect(store.path).execute("SELECT report FROM trust_reports WHERE run_id = ?", (run_id,)).fetchone()
    return None if row is None else json.loads(row["report"])
