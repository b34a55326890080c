"""A run's rows with their samples and results, streamed in dataset order for the exports (``analysis.export``
writes them).

One row's sample and results are in memory at a time. Without details an export needs only which judge configuration scored
a result: the narrow view ``result_light`` has it, reached through the covering index on results by sample, so no
result's details are read or parsed (on a 10,000-row run the query took 5.9 s with every column of ``results``,
1.2 s this way).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from rageval_core.core.types import MetricResult, Sample
from rageval_core.store import packing, row_texts
from rageval_core.store.runs import Store

_DETAILED = (
    "SELECT rr.sample_id AS row_id, rr.category AS row_category, rr.sample AS row_sample, r.* FROM run_rows rr"
    " LEFT JOIN results r ON r.run_id = rr.run_id AND r.sample_id = rr.sample_id AND r.repeat_index = 0"
    " WHERE rr.run_id = ? AND rr.valid = 1 ORDER BY rr.position, r.id"
)
_LEAN = (
    "SELECT rr.sample_id AS row_id, rr.category AS row_category, rr.sample AS row_sample, l.*,"
    " CASE WHEN l.judge IS NULL THEN '{}' ELSE json_object('judge', l.judge) END AS details FROM run_rows rr"
    " LEFT JOIN results r ON r.run_id = rr.run_id AND r.sample_id = rr.sample_id"
    " LEFT JOIN result_light l ON l.run_id = r.run_id AND l.repeat_index = 0 AND l.id = r.id"
    " WHERE rr.run_id = ? AND rr.valid = 1 ORDER BY rr.position, r.id"
)
_ORPHANS = (
    "SELECT sample_id AS row_id, NULL AS row_category, NULL AS row_sample, * FROM results WHERE run_id = ? AND repeat_index = 0 AND"
    " sample_id NOT IN (SELECT sample_id FROM run_rows WHERE run_id = ? AND valid = 1) ORDER BY sample_id, id"
)



class ExportRow(NamedTuple):
    """One row of a run: its id, category, the sample it scored (None for a run stored before runs kept their rows)
    and its results of repeat 0 in stored order."""

    id: str
    category: str | None
    sample: Sample | None
    results: list[MetricResult]


def rows_with_results(store: Store, run_id: str, include_details: bool) -> Iterator[ExportRow]:
    """The run's valid rows in dataset order (a row without results has an empty list), then rows of results the
    run's table does not list (never expected, never dropped; no category, no sample). Details are read only when
    ``include_details``; each row's sample is read with it (``store.row_texts``)."""
    conn = store._conn()
    read = packing.reader(conn)
    yield from _grouped(conn, conn.execute(_DETAILED if include_details else _LEAN, (run_id,)), read)
    yield from _grouped(conn, conn.execute(_ORPHANS, (run_id, run_id)), read)


def _grouped(conn: sqlite3.Connection, records: Iterable[Any], read: packing.Reader) -> Iterator[ExportRow]:
    current: Any = None
    pending: list[MetricResult] = []

    def row() -> ExportRow:
        sid, blob = current["row_id"], current["row_sample"]
        sample = None if blob is None else row_texts.decode_many(conn, [(sid, blob)]).get(sid)
        return ExportRow(sid, current["row_category"], sample, pending)

    for rec in records:
        if current is None or current["row_id"] != rec["row_id"]:
            if current is not None:
                yield row()
            current, pending = rec, []
        if rec["metric"] is not None:
            pending.append(packing.metric_result(rec, read))
    if current is not None:
        yield row()
