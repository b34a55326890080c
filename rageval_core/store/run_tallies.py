"""The grouped and narrow reads a run's summary, costs and resume are tallied from (``run.persist``, ``run.plan``).

Why: a 1,000-row run logs ~7,000 calls and stores ~10,000 results; building a dict or a ``MetricResult`` per row
to sum them took as long as writing the run. These read only the columns a tally needs, from the narrow views
(``call_light``, ``result_light``) where they have them, and leave the sums SQLite can do to SQLite.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from rageval_core.core.types import Usage
from rageval_core.store.runs import Store


def cost_by_method(store: Store, run_id: str, decomposed: str) -> dict[str, Usage]:
    """The call log summed per method (a judge's own method, else ``decomposed``), in first-call order."""
    rows = store._conn().execute(
        "SELECT COALESCE(NULLIF(method, ''), CASE WHEN scorer LIKE 'judge:%' THEN scorer ELSE ? END) AS m,"
        " SUM(error IS NULL AND cached = 0), SUM(error IS NULL AND cached != 0), SUM(error IS NOT NULL),"
        " SUM(CASE WHEN error IS NULL AND cached = 0 THEN input_tokens ELSE 0 END),"
        " SUM(CASE WHEN error IS NULL AND cached = 0 THEN output_tokens ELSE 0 END),"
        " SUM(CASE WHEN error IS NULL AND cached = 0 THEN cost_usd ELSE 0 END),"
        " SUM(CASE WHEN error IS NULL THEN latency_s ELSE 0 END),"
        " SUM(CASE WHEN error IS NULL AND cached = 0 THEN cached_input_tokens ELSE 0 END)"
        " FROM call_light WHERE run_id = ? GROUP BY m ORDER BY MIN(id)",
        (decomposed, run_id),
    )
    return {
        m: Usage(int(inp or 0), int(out or 0), int(hit or 0), calls=int(calls), cached_calls=int(cached), errors=int(errors),
                 cost_usd=float(cost or 0), latency_s=float(lat or 0))
        for m, calls, cached, errors, inp, out, cost, lat, hit in rows
    }


def lean_calls(store: Store, run_id: str) -> Iterator[dict[str, Any]]:
    """The run's call-log entries with only what the cost tables read (no prompt, response or request)."""
    cur = store._conn().execute(
        "SELECT scorer, method, input_tokens, output_tokens, cost_usd, latency_s, cached, error, cached_input_tokens"
        " FROM call_light WHERE run_id = ? ORDER BY id",
        (run_id,),
    )
    for r in cur:
        yield {
            "scorer": r[0], "method": r[1], "usage": {"input_tokens": r[2], "output_tokens": r[3], "cached_input_tokens": r[8]},
            "cost_usd": r[4], "latency_s": r[5], "cached": r[6], "error": r[7],
        }


class ResultHead(NamedTuple):
    """What a summary reads of one result: method, metric, value, why unscored, the re-ask counts and judge id."""

    method: str
    metric: str
    value: float | None
    unscored_reason: str | None
    reasked: int | None
    recovered: int | None
    judge: str | None


def result_heads(store: Store, run_id: str) -> Iterator[ResultHead]:
    """Every result of repeat 0 in stored order, its details read only for the re-ask counts and the judge id."""
    cur = store._conn().execute(
        "SELECT method, metric, value, unscored_reason, json_extract(details, '$.reask.asked'),"
        " json_extract(details, '$.reask.recovered'), json_extract(details, '$.judge') FROM results"
        " WHERE run_id = ? AND repeat_index = 0 ORDER BY id",
        (run_id,),
    )
    for r in cur:
        yield ResultHead(*r)


def kept_tasks(store: Store, run_id: str, retryable: Iterable[str]) -> Iterator[tuple[str, str, int, bool]]:
    """Per stored (sample_id, scorer, repeat) task, whether any result is more than a failure with one of the
    ``retryable`` reasons (one grouped query, not the results)."""
    reasons = sorted(retryable)
    marks = ",".join("?" * len(reasons))
    rows = store._conn().execute(
        "SELECT sample_id, scorer, repeat_index,"
        " SUM(CASE WHEN value IS NULL AND unscored_reason IN (" + marks + ") THEN 0 ELSE 1 END) AS kept"
        " FROM results WHERE run_id = ? GROUP BY sample_id, scorer, repeat_index",
        (*reasons, run_id),
    ).fetchall()
    for r in rows:
        yield r[0], r[1], int(r[2]), r[3] > 0
