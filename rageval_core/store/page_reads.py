"""The reads the pages' read model makes of a run (``views.run_summary`` caches and shapes them): the stamp that
says whether a run changed, the results without details, the frame's columns as JSON arrays, the rows'
categories, one row's full results and calls, the call log without prompts.

Everything but one row's results and calls reads the narrow views ``result_light`` and ``call_light`` (no
details, prompts or responses) and leaves the ordering and joining to SQLite.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from rageval_core.core.types import MetricResult
from rageval_core.store import packing
from rageval_core.store.call_log import CallEntry, call_entry
from rageval_core.store.runs import Store

_LIGHT_COLUMNS = (
    "sample_id, metric, method, value, unscored_reason, reason, raw_score, provider, model, calls, cached_calls,"
    " input_tokens, output_tokens, cached_input_tokens, cost_usd, latency_s, judge"
)
# ``core.method_labels.result_method`` in SQL: ``<method>@<judge id>`` when the result names a (truthy) judge.
_DISPLAY_METHOD = "CASE WHEN h.judge IS NULL OR h.judge = '' OR h.judge = 0 THEN h.method ELSE h.method || '@' || h.judge END"
# ``compare.results_frame``'s columns but the category, in the order written (the table's key order: no join or
# sort in SQLite; the caller puts rows in order). The subquery names only the columns read: ``SELECT *`` would
# copy every column, the reasons' text included.
_WRITTEN = "SELECT {columns} FROM result_light WHERE run_id = ? AND repeat_index = 0 ORDER BY id"
TEXT_COLUMNS = {"sample_id": "h.sample_id", "metric": "h.metric", "method": _DISPLAY_METHOD,
                "unscored_reason": "h.unscored_reason", "reason": "h.reason", "provider": "h.provider", "model": "h.model"}
INTEGER_COLUMNS = ("calls", "cached_calls", "input_tokens", "output_tokens")
REAL_COLUMNS = ("value", "cost_usd", "latency_s")


def stamp(store: Store, run_id: str) -> tuple[Any, ...]:
    """What changes whenever the run's stored results or calls do: status, end time, result count, last ids."""
    conn = store._conn()
    run = conn.execute("SELECT status, finished_at FROM runs WHERE id = ?", (run_id,)).fetchone()
    res = conn.execute("SELECT COUNT(*), MAX(id) FROM result_light WHERE run_id = ?", (run_id,)).fetchone()
    calls = conn.execute("SELECT COUNT(*), MAX(id) FROM call_light WHERE run_id = ?", (run_id,)).fetchone()
    return (None if run is None else (run[0], run[1]), tuple(res), tuple(calls))


def light_rows(store: Store, run_id: str) -> Iterator[tuple[Any, ...]]:
    """Repeat 0's results in the order written, without details: sample_id, metric, method, value,
    unscored_reason, reason, raw_score, provider, model, calls, cached_calls, input, output and cached input
    tokens, cost_usd, latency_s, judge id."""
    cur = store._conn().cursor()
    cur.row_factory = None
    yield from cur.execute(
        f"SELECT {_LIGHT_COLUMNS} FROM result_light WHERE run_id = ? AND repeat_index = 0 ORDER BY id", (run_id,))


def frame_columns(store: Store, run_id: str, text: Sequence[str], integer: Sequence[str],
                  real: Sequence[str]) -> tuple[list[list[Any]], list[tuple[Any, ...]]]:
    """Repeat 0's results in the order written, by column: each of ``text`` (``TEXT_COLUMNS``, starting with
    sample_id, metric, method: the judge id makes the method's name) and ``integer`` as one list, and the
    ``real`` columns as rows. Text and integers come as one JSON array each (exact: JSON keeps text and integers
    as they are), so 100,000 results are a dozen strings to parse rather than 1.4 million values for Python to
    box one by one; reals come as plain rows (SQLite prints a real in JSON with 15 digits, not the 17 that keep it
    exact)."""
    inner = _WRITTEN.format(columns=", ".join(["sample_id", "metric", "method", "judge", *text[3:], *integer]))
    grouped = ("SELECT " + ", ".join(f"json_group_array({sql})" for sql in [*(TEXT_COLUMNS[c] for c in text),
                                                                            *(f"h.{c}" for c in integer)])
               + f" FROM ({inner}) h")
    cur = store._conn().cursor()
    cur.row_factory = None  # plain tuples
    lists = [json.loads(v) for v in cur.execute(grouped, (run_id,)).fetchone()]
    reals = cur.execute(_WRITTEN.format(columns=", ".join(real)), (run_id,)).fetchall() if real and lists[0] else []
    return lists, reals


def row_categories(store: Store, run_id: str) -> dict[str, str | None]:
    """The run's rows (sample id → stored category) in dataset order, as plain tuples: ``Store.rows`` builds an
    object per row, a tenth of a second on a 10,000-row run that the pages open on every new run."""
    cur = store._conn().cursor()
    cur.row_factory = None
    return dict(cur.execute("SELECT sample_id, category FROM run_rows WHERE run_id = ? ORDER BY position", (run_id,)))


def row_results(store: Store, run_id: str, sample_id: str) -> list[MetricResult]:
    """One row's results with their details (what the inspector shows), in the order written."""
    rows = store._conn().execute(
        "SELECT * FROM results WHERE run_id = ? AND sample_id = ? AND repeat_index = 0 ORDER BY id", (run_id, sample_id)
    ).fetchall()
    read = packing.reader(store._conn())
    return [packing.metric_result(r, read) for r in rows]


def row_calls(store: Store, run_id: str, sample_id: str) -> list[CallEntry]:
    """One row's logged calls (prompts and responses), in the order made."""
    rows = store._conn().execute(  # the row's call ids from the narrow view: no other call's prompt is read
        "SELECT * FROM call_log WHERE id IN (SELECT id FROM call_light WHERE run_id = ? AND sample_id = ?) ORDER BY id",
        (run_id, sample_id),
    ).fetchall()
    read = packing.reader(store._conn())
    return [call_entry(r, read) for r in rows]


def light_calls(store: Store, run_id: str) -> Iterator[dict[str, Any]]:
    """The run's call log in order, from the narrow view (``call_light``: no prompt or response), as the dicts
    the cost tables read (method, scorer, usage, cached, error, cost_usd, latency_s)."""
    cur = store._conn().cursor()
    cur.row_factory = None
    rows = cur.execute("SELECT method, scorer, input_tokens, output_tokens, cached, error, cost_usd, latency_s,"
                       " cached_input_tokens FROM call_light WHERE run_id = ? ORDER BY id", (run_id,))
    for method, scorer, inp, out, was_cached, error, cost, latency, hit in rows:
        yield {"method": method, "scorer": scorer, "usage": {"input_tokens": inp, "output_tokens": out, "cached_input_tokens": hit},
               "cached": bool(was_cached), "error": error, "cost_usd": cost, "latency_s": latency}
