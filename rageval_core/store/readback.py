"""Reading a stored run back by the columns, not the results: the CLI's closing tables and failure lines, the
analysis frame and History's leaderboard at 100,000 rows (``run.readback``, ``analysis.run_tables`` and
``analysis.leaderboard`` fold what these yield).

A result with its details is a dict of claims, prompts and raw answers; these read the few columns each reader
folds, with a cursor (the narrow views ``result_light`` and ``call_light`` carry the judge id, so no detail is
parsed), and yield plain tuples.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from rageval_core.store.runs import Store

CHUNK = 20_000  # rows fetched at a time


class AnalysisRow(NamedTuple):
    sample_id: str
    metric: str
    method: str
    judge: Any
    value: float | None
    unscored_reason: str | None
    provider: str | None


def analysis_rows(store: Store, run_id: str) -> Iterator[AnalysisRow]:
    """Repeat 0's results in stored order with what the analysis frame reads."""
    cur = store._conn().execute(
        "SELECT sample_id, metric, method, json_extract(details, '$.judge'), value, unscored_reason, provider FROM results"
        " WHERE run_id = ? AND repeat_index = 0 ORDER BY id",
        (run_id,),
    )
    while True:
        rows = cur.fetchmany(CHUNK)
        if not rows:
            return
        for row in rows:
            yield AnalysisRow(*row)


def method_metric_pairs(store: Store, run_id: str) -> Iterator[tuple[str, str, Any]]:
    """The distinct (method, metric, judge id) of repeat 0 (unordered), read without the results."""
    yield from store._conn().execute(
        "SELECT DISTINCT method, metric, judge FROM result_light WHERE run_id = ? AND repeat_index = 0", (run_id,))


def unscored(store: Store, run_id: str) -> Iterator[tuple[str, str | None, str | None, str | None]]:
    """Repeat 0's unscored results in stored order: sample id, unscored reason, reason, the details' error."""
    yield from store._conn().execute(
        "SELECT sample_id, unscored_reason, reason, json_extract(details, '$.error') FROM results"
        " WHERE run_id = ? AND repeat_index = 0 AND value IS NULL ORDER BY id",
        (run_id,),
    )


# Valid rows in dataset order, each row's results in stored order; the narrow view ``result_light`` carries the
# judge id, so no result's details are read.
_IN_ORDER = (
    "SELECT l.sample_id, l.method, l.judge, l.metric, l.value, l.provider FROM run_rows rr"
    " JOIN results r ON r.run_id = rr.run_id AND r.sample_id = rr.sample_id AND r.repeat_index = 0"
    " JOIN result_light l ON l.run_id = r.run_id AND l.repeat_index = 0 AND l.id = r.id"
    " WHERE rr.run_id = ? AND rr.valid = 1 ORDER BY rr.position, r.id"
)
# Results of rows the run's table does not list (never expected, never dropped), after the others.
_ORPHANS = (
    "SELECT sample_id, method, judge, metric, value, provider FROM result_light WHERE run_id = ? AND repeat_index = 0"
    " AND sample_id NOT IN (SELECT sample_id FROM run_rows WHERE run_id = ? AND valid = 1) ORDER BY sample_id, id"
)


def values_in_row_order(store: Store, run_id: str) -> Iterator[tuple[str, str, Any, str, float | None, str | None]]:
    """Repeat 0's (sample id, method, judge id, metric, value, provider): valid rows in dataset order, each row's
    results in stored order, then results of rows the run's table does not list."""
    conn = store._conn()
    yield from conn.execute(_IN_ORDER, (run_id,))
    yield from conn.execute(_ORPHANS, (run_id, run_id))


def leaderboard_means(store: Store, run_ids: Sequence[str]) -> Iterator[tuple[str, str, Any, str, float | None, int, int]]:
    """Per run, method, judge id and metric of repeat 0: the mean over scored rows, scored and all results."""
    marks = ",".join("?" * len(run_ids))
    yield from store._conn().execute(
        "SELECT run_id, method, judge, metric, AVG(value), COUNT(value), COUNT(*)"
        f" FROM result_light WHERE repeat_index = 0 AND run_id IN ({marks}) GROUP BY run_id, method, judge, metric",
        list(run_ids),
    )


def leaderboard_calls(store: Store, run_ids: Sequence[str]) -> Iterator[tuple[str, int, float]]:
    """Per run: provider calls made (not cached, not failed) and their cost."""
    marks = ",".join("?" * len(run_ids))
    for run_id, calls, cost in store._conn().execute(
        "SELECT run_id, SUM(CASE WHEN cached = 0 AND error IS NULL THEN 1 ELSE 0 END), SUM(cost_usd) FROM call_light"
        f" WHERE run_id IN ({marks}) GROUP BY run_id",
        list(run_ids),
    ):
        yield run_id, int(calls or 0), float(cost or 0.0)
