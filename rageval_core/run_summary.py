"""A stored run as the Compare, Inspect and History pages read it: the results frame without details, the
call log summed per method, one row's full results, each read with SQL and the first two cached per run.

The pages rerun on every click, and a 1,000-row run holds about 10,000 results whose details (claims,
verdicts, prompts and responses) are most of the database. Everything here except one row's results reads
the narrow copies of ``rageval_core.light_tables`` (no details, prompts or responses), orders and joins in
SQLite, and keeps what it built per run until the run's results change (``stamp``: status, end time, result
and call counts and last ids), so a rerun of a finished run reads a few integers. The inspector reads one
row's results with details (``row_results``).
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from rageval_core.call_log import CallEntry, call_entry
from rageval_core.compare import RESULT_COLUMNS, MethodCost, results_frame
from rageval_core.runner.persist import stream_cost
from rageval_core.store import RunInfo, Store, _metric_result
from rageval_core.types import MetricResult, Usage

T = TypeVar("T")
CACHED_RUNS = 8  # runs kept per process (a 10,000-row run's light results are about 100 MB of objects at most)

_LIGHT_COLUMNS = (
    "sample_id, metric, method, value, unscored_reason, reason, raw_score, provider, model, calls, cached_calls,"
    " input_tokens, output_tokens, cached_input_tokens, cost_usd, latency_s, judge"
)
# ``judges.labels.result_method`` in SQL: ``<method>@<judge id>`` when the result names a (truthy) judge.
_DISPLAY_METHOD = "CASE WHEN h.judge IS NULL OR h.judge = '' OR h.judge = 0 THEN h.method ELSE h.method || '@' || h.judge END"
# ``compare.results_frame``'s columns but the category (mapped in Python: it may come from the dataset's texts),
# in the order written (the table's key order: no sort in SQLite).
_FRAME_SQL = (
    f"SELECT h.sample_id, h.metric, {_DISPLAY_METHOD}, h.value, h.unscored_reason, h.reason, h.provider, h.model,"
    " h.calls, h.cached_calls, h.input_tokens, h.output_tokens, h.cost_usd, h.latency_s"
    " FROM result_light h WHERE h.run_id = ? AND h.repeat_index = 0 ORDER BY h.id"
)
_lock = threading.Lock()
_cache: OrderedDict[tuple[str, str, str], tuple[tuple[Any, ...], Any]] = OrderedDict()


def stamp(store: Store, run_id: str) -> tuple[Any, ...]:
    """What changes whenever the run's stored results or calls do: status, end time, result count, last ids."""
    conn = store._conn()
    run = conn.execute("SELECT status, finished_at FROM runs WHERE id = ?", (run_id,)).fetchone()
    res = conn.execute("SELECT COUNT(*), MAX(id) FROM result_light WHERE run_id = ?", (run_id,)).fetchone()
    calls = conn.execute("SELECT COUNT(*), MAX(id) FROM call_light WHERE run_id = ?", (run_id,)).fetchone()
    return (None if run is None else (run[0], run[1]), tuple(res), tuple(calls))


def cached(store: Store, run_id: str, what: str, build: Callable[[], T], *, at: tuple[Any, ...] | None = None) -> T:
    """``build()`` for this run, kept until the run's ``stamp`` changes (``what`` names the value; ``at`` is
    the stamp when the caller has just read it: a page asks for a dozen values of the run it loaded)."""
    key = (str(store.path), run_id, what)
    now = stamp(store, run_id) if at is None else at
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == now:
            _cache.move_to_end(key)
            return hit[1]
    value = build()
    with _lock:
        _cache[key] = (now, value)
        while len(_cache) > CACHED_RUNS * 32:  # a run's frames, costs, tables, charts and diffs
            _cache.popitem(last=False)
    return value


def _light(row: Sequence[Any]) -> MetricResult:
    judge = row[16]
    return MetricResult(
        sample_id=row[0], metric=row[1], method=row[2], value=row[3], unscored_reason=row[4], reason=row[5],
        raw_score=row[6], details={"judge": judge} if judge else {}, provider=row[7], model=row[8], calls=row[9],
        cached_calls=row[10], usage=Usage(row[11], row[12], row[13]), cost_usd=row[14], latency_s=row[15],
    )


def light_results(store: Store, run_id: str) -> list[MetricResult]:
    """The run's results (repeat 0, in the order written) with ``details`` cut to the judge id; cached.
    Treat the list as read-only: every page of the process shares it."""
    def build() -> list[MetricResult]:
        rows = store._conn().execute(
            f"SELECT {_LIGHT_COLUMNS} FROM result_light WHERE run_id = ? AND repeat_index = 0 ORDER BY id", (run_id,)
        )
        return [_light(r) for r in rows]

    return cached(store, run_id, "results", build)


def run_frame(store: Store, run_id: str, categories: Mapping[str, str | None]) -> pd.DataFrame:
    """``compare.results_frame`` of the run's results (repeat 0) in dataset order (``categories``' order: the
    run's rows; results of rows not in it last, each row's in the order written), ``categories`` mapping sample
    id → category: the same frame, built from columns read in SQL instead of result objects."""
    cur = store._conn().cursor()
    cur.row_factory = None  # plain tuples
    rows = cur.execute(_FRAME_SQL, (run_id,)).fetchall()
    if not rows:
        return results_frame([], categories)
    position = {sid: i for i, sid in enumerate(categories)}
    sample_ids = [r[0] for r in rows]
    order = np.argsort(np.fromiter((position.get(s, len(position)) for s in sample_ids), int, len(rows)), kind="stable")
    pick = operator.itemgetter(*order.tolist()) if len(rows) > 1 else (lambda col: (col[0],))
    names = [c for c in RESULT_COLUMNS if c != "category"]
    columns: dict[str, Any] = {name: list(pick(col)) for name, col in zip(names, zip(*rows))}
    columns["category"] = [categories.get(sid) for sid in columns["sample_id"]]
    frame = pd.DataFrame(columns, columns=RESULT_COLUMNS)
    frame["value"] = frame["value"].astype(float)
    return frame


def row_results(store: Store, run_id: str, sample_id: str) -> list[MetricResult]:
    """One row's results with their details (what the inspector shows), in the order written."""
    rows = store._conn().execute(
        "SELECT * FROM results WHERE run_id = ? AND sample_id = ? AND repeat_index = 0 ORDER BY id", (run_id, sample_id)
    ).fetchall()
    return [_metric_result(r) for r in rows]


def row_calls(store: Store, run_id: str, sample_id: str) -> list[CallEntry]:
    """One row's logged calls (prompts and responses), in the order made."""
    rows = store._conn().execute(  # the row's call ids from the narrow copy: no other call's prompt is read
        "SELECT * FROM call_log WHERE id IN (SELECT id FROM call_light WHERE run_id = ? AND sample_id = ?) ORDER BY id",
        (run_id, sample_id),
    ).fetchall()
    return [call_entry(r) for r in rows]


def method_costs(store: Store, run_id: str) -> dict[str, MethodCost]:
    """``compare.cost_by_method`` of the run's call log, summed by SQLite (``persist.stream_cost``); cached."""
    return cached(store, run_id, "costs", lambda: stream_cost(store, run_id))


def run_b_choices(infos: Sequence[RunInfo], a: RunInfo) -> list[str]:
    """Runs to compare ``a`` with, the default first: the newest other run on the same dataset version, then
    runs on a dataset of the same name (another version), newest first, then every other run."""
    others = sorted((i for i in infos if i.id != a.id), key=lambda i: -i.created_at)
    same = [i.id for i in others if a.dataset_hash and i.dataset_hash == a.dataset_hash]
    named = [i.id for i in others if i.id not in same and a.dataset_name and i.dataset_name == a.dataset_name]
    return same + named + [i.id for i in others if i.id not in same and i.id not in named]
