"""Small rendering helpers shared by pages: score formatting, the validation report, error boxes."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from rageval_core.datasets import Issue
from rageval_core.types import Unscored
from ui import data

METRIC_LABELS = {
    "faithfulness": "Faithfulness",
    "answer_relevancy": "Answer Relevancy",
    "context_precision": "Context Precision",
    "context_recall": "Context Recall",
    "context_relevance": "Context Relevance",
    "answer_correctness": "Answer Correctness",
}


def metric_label(metric_id: str) -> str:
    return METRIC_LABELS.get(metric_id, metric_id.replace("_", " ").title())


UNSCORED = "-"  # what an unscored cell shows, as in the seed-000 tables (st.dataframe(placeholder=UNSCORED))


def fmt_score(value: Any) -> str:
    """Three decimals like the seed-000 tables; "-" for unscored."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNSCORED
    return f"{float(value):.3f}"


def fmt_score_md(value: Any) -> str:
    """``fmt_score`` for st.table, whose cells are Markdown: a bare "-" would render as a list bullet."""
    text = fmt_score(value)
    return "\\-" if text == UNSCORED else text


def fmt_cost(value: float | None) -> str:
    if value is None:
        return "unknown"
    return "$0" if value == 0 else f"${value:.4f}"


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# The call failed (not the row): these unscored reasons say the provider or the judge's output is the problem.
FAILURE_REASONS = (Unscored.PROVIDER_ERROR, Unscored.TIMEOUT, Unscored.PARSE_ERROR, Unscored.REPLAY_MISS)

PAGE_ERROR = "This page hit an unexpected error"
_log = logging.getLogger("rageval.ui")


def run_page(page: Any) -> None:
    """Run the selected page; an unexpected exception becomes a message (the traceback goes to the server log)."""
    try:
        page.run()
    except Exception as exc:  # noqa: BLE001 - Streamlit's rerun/stop signals are BaseException and pass through
        _log.exception("page %s failed", getattr(page, "title", "?"))
        show_error(f"{PAGE_ERROR}; the details are in the server log", exc)


def show_error(message: str, exc: BaseException | None = None) -> None:
    """An error as a message (never a traceback): what failed and the exception's own text."""
    detail = f" — {type(exc).__name__}: {exc}" if exc is not None else ""
    st.error(f"{message}{detail}", icon="⚠️")


def validation_report(issues: Sequence[Issue], n_rows: int) -> None:
    """Errors and warnings with file, row and field; a success line when there are none."""
    errors = [i for i in issues if i.severity == "error"]
    warnings = [i for i in issues if i.severity != "error"]
    if not issues:
        st.success(f"Validation: all {n_rows} rows are valid.", icon="✅")
        return
    summary = f"Validation: {plural(n_rows, 'valid row')}, {plural(len(errors), 'error')}, {plural(len(warnings), 'warning')}."
    (st.error if errors else st.warning)(summary)
    st.dataframe(data.issues_frame(issues), hide_index=True, width="stretch")


def score_table(frame: pd.DataFrame, *, markdown: bool = False) -> Any:
    """A table of [0, 1] scores formatted with three decimals and "-" for unscored cells.

    ``markdown=True`` for st.table (Markdown cells); st.dataframe needs ``placeholder=UNSCORED`` as well,
    since it draws missing cells itself.
    """
    numeric = frame.select_dtypes("number").columns
    fmt = fmt_score_md if markdown else fmt_score
    return frame.style.format({c: fmt for c in numeric})


def results_frame(results: Sequence[Any], *, by: str) -> pd.DataFrame:
    """Results one per line with their score, raw judge score, why unscored and reason.

    ``by="row"`` leads with the row id (results of several rows); ``by="method"`` names the method after the
    criterion (the results of one row).
    """
    def line(r: Any) -> dict[str, Any]:
        lead = {"row": r.sample_id, "criterion": metric_label(r.metric)} if by == "row" else {
            "criterion": metric_label(r.metric), "method": r.method}
        return {
            **lead,
            "score": fmt_score(r.value),
            "raw": "" if r.raw_score is None else f"{r.raw_score:g}",
            "unscored": r.unscored_reason or "",
            "reason": r.reason or "",
        }

    return pd.DataFrame([line(r) for r in results])


def estimate_frame(est: Any) -> pd.DataFrame:
    """``runner.Estimate`` per scorer: calls, embedding calls, tokens and cost."""
    return pd.DataFrame(
        [
            {
                "scorer": r.scorer,
                "method": r.method,
                "LLM calls": r.llm_calls,
                "embedding calls": r.embedding_calls,
                "input tokens": r.input_tokens,
                "output tokens": r.output_tokens,
                "cost": fmt_cost(r.cost_usd),
            }
            for r in est.rows
        ]
    )


def progress_metrics(snap: Any) -> None:
    """Calls, cache hits, errors, tokens and cost so far of a running evaluation."""
    cols = st.columns(5)
    if snap is None:
        cols[0].metric("Calls so far", 0)
        return
    cols[0].metric("Calls so far", snap.calls)
    cols[1].metric("Cache hits", snap.cached_calls)
    cols[2].metric("Errors", snap.errors)
    cols[3].metric("Tokens in / out", f"{snap.input_tokens:,} / {snap.output_tokens:,}")
    cols[4].metric("Cost so far", fmt_cost(snap.cost_usd))
    eta = f", about {snap.eta_s:.0f} s left" if snap.eta_s is not None else ""
    st.caption(f"Elapsed {snap.elapsed_s:.1f} s{eta}.")


def readable_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``compare.side_by_side`` columns ("faithfulness|judge:rubric5", "faithfulness|diff") as labels a reader
    scans: "Faithfulness · judge:rubric5", "Faithfulness · judge − decomposed"."""
    def label(column: str) -> str:
        if "|" not in column:
            return column
        metric, method = column.split("|", 1)
        return f"{metric_label(metric)} · {'judge − decomposed' if method == 'diff' else method}"

    return frame.rename(columns={c: label(str(c)) for c in frame.columns})


def unscored_note(results: Sequence[Any]) -> tuple[str, str] | None:
    """("error" | "warning", message) when results came back unscored because calls failed, else None.

    A run can finish with every call refused (wrong base URL, server down); the page must say so instead of
    a green "finished". The message counts the reasons and quotes the first failure's reason.
    """
    if not results:
        return None
    failed = [r for r in results if r.unscored_reason in FAILURE_REASONS]
    if not failed:
        return None
    counts: dict[str, int] = {}
    for r in failed:
        counts[r.unscored_reason] = counts.get(r.unscored_reason, 0) + 1
    reasons = ", ".join(f"{k} × {v}" for k, v in counts.items())
    first = next((r.reason for r in failed if r.reason), "")
    scored = sum(r.value is not None for r in results)
    kind = "error" if scored == 0 else "warning"
    head = "No result was scored" if scored == 0 else f"{len(failed)} of {len(results)} results are unscored because calls failed"
    return kind, f"{head} ({reasons}). First failure: {first}"


def run_outcome(result: Any) -> str:
    """One line on a finished ``runner.Run``: how it ended, tasks done, calls (cached), cost and wall time."""
    verdict = {"done": "finished", "cancelled": "was cancelled"}.get(result.status, result.status)
    return (
        f"Run {result.run_id} {verdict}: {result.done_tasks} of {result.total_tasks} tasks, "
        f"{result.provider_calls} calls ({result.cache_hits} cached), {fmt_cost(result.cost_usd)}, {result.wall_s:.1f} s."
    )


def summary_frame(summary: dict[str, dict[str, dict[str, Any]]]) -> pd.DataFrame:
    """``compare.summarize`` output as rows: method, criterion, mean over scored rows, scored, unscored (why)."""
    rows = []
    for method, metrics in summary.items():
        for metric_id, s in metrics.items():
            reasons = ", ".join(f"{k} × {v}" for k, v in (s.get("unscored_reasons") or {}).items())
            rows.append(
                {
                    "method": method,
                    "criterion": metric_label(metric_id),
                    "mean": fmt_score(s.get("mean")),
                    "scored": s.get("scored", 0),
                    "unscored": s.get("unscored", 0),
                    "why unscored": reasons,
                }
            )
    return pd.DataFrame(rows, columns=["method", "criterion", "mean", "scored", "unscored", "why unscored"])


def cost_frame(costs: dict[str, Any]) -> pd.DataFrame:
    """Actual work per method after a run (``Run.cost``): calls, cache hits, errors, tokens, cost, call time."""
    return pd.DataFrame(
        [
            {
                "method": c.method,
                "calls": c.calls,
                "cache hits": c.cached_calls,
                "errors": c.errors,
                "input tokens": c.input_tokens,
                "output tokens": c.output_tokens,
                "cost": fmt_cost(c.cost_usd),
                "summed call time (s)": round(c.latency_s, 2),
            }
            for c in costs.values()
        ],
        columns=["method", "calls", "cache hits", "errors", "input tokens", "output tokens", "cost", "summed call time (s)"],
    )
