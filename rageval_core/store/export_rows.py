"""A run's rows with their results, streamed in dataset order for the exports (``analysis.export`` writes them).

One row's results are in memory at a time. Without details an export needs only which judge configuration scored
a result: the narrow view ``result_light`` has it, reached through the covering index on results by sample, so no
result's details are read or parsed (on a 10,000-row run the query took 5.9 s with every column of ``results``,
1.2 s this way).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rageval_core.core.types import MetricResult
from rageval_core.store import packing
from rageval_core.store.runs import Store

_DETAILED = (
    "SELECT rr.sample_id AS row_id, rr.category AS row_category, r.* FROM run_rows rr"
    " LEFT JOIN results r ON r.run_id = rr.run_id AND r.sample_id = rr.sample_id AND r.repeat_index = 0"
    " WHERE rr.run_id = ? AND rr.valid = 1 ORDER BY rr.position, r.id"
)
_LEAN = (
    "SELECT rr.sample_id AS row_id, rr.category AS row_category, l.*,"
    " CASE WHEN l.judge IS NULL THEN '{}' ELSE json_object('judge', l.judge) END AS details FROM run_rows rr"
    " LEFT JOIN results r ON r.run_id = rr.run_id AND r.sample_id = rr.sample_id"
    " LEFT JOIN result_light l ON l.run_id = r.run_id AND l.repeat_index = 0 AND l.id = r.id"
    " WHERE rr.run_id = ? AND rr.valid = 1 ORDER BY rr.position, r.id"
)
_ORPHANS = (
    "SELECT sample_id AS row_id, NULL AS row_category, * FROM results WHERE run_id = ? AND repeat_index = 0 AND"
    " sample_id NOT IN (SELECT sample_id FROM run_rows WHERE run_id = ? AND valid = 1) ORDER BY sample_id, id"
)

Row = tuple[str, "str | None", list[MetricResult]]


def rows_with_results(store: Store, run_id: str, include_details: bool) -> Iterator[Row]:
    """(row id, category, results of repeat 0 in stored order) for the run's valid rows in dataset order (a row
    without results has an empty list), then for results of rows the run's table does not list (never expected,
    never dropped; category None). Details are read only when ``include_details``."""
    conn = store._conn()
    read = packing.reader(conn)
    yield from _grouped(conn.execute(_DETAILED if include_details else _LEAN, (run_id,)), read)
    yield from _grouped(conn.execute(_ORPHANS, (run_id, run_id)), read)


def _grouped(records: Iterable[Any], read: packing.Reader) -> Iterator[Row]:
    current: tuple[str, str | None] | None = None
    pending: list[MetricResult] = []
    for rec in records:
        if current is None or current[0] != rec["row_id"]:
            if current is not None:
                yield current[0], current[1], pending
            current, pending = (rec["row_id"], rec["row_category"]), []
        if rec["metric"] is not None:
            pending.append(packing.metric_result(rec, read))
    if current is not None:
        yield current[0], current[1], pending
