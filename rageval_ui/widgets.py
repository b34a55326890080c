"""Small rendering helpers shared by pages: score formatting, the validation report, error boxes."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import pandas.io.formats.style  # noqa: F401 - the Styler's templates (~0.4 s to compile) load with the app, not on a page
import streamlit as st

from rageval_core.data.datasets import Issue
from rageval_core.core.types import Unscored
from rageval_core.offline.limits import limits_text
from rageval_ui import data
from rageval_ui.i18n import core, header, headers, lang, t, t_opt
from rageval_ui.safe_text import md_code, md_escape  # noqa: F401 - re-exported: pages call widgets.md_escape / md_code

if TYPE_CHECKING:  # the core's own types at the seam (nothing imported at run time)
    from rageval_core.core.types import MetricResult
    from rageval_core.run import Estimate, Progress, Run
    from rageval_core.run.tallies import MethodCost

METRIC_LABELS = {
    "faithfulness": "Faithfulness",
    "answer_relevancy": "Answer Relevancy",
    "context_precision": "Context Precision",
    "context_recall": "Context Recall",
    "context_relevance": "Context Relevance",
    "answer_correctness": "Answer Correctness",
}


def metric_label(metric_id: str) -> str:
    """A criterion's name in the UI language (custom criteria: their id, title-cased)."""
    return t_opt(f"metric.{metric_id}", METRIC_LABELS.get(metric_id, metric_id.replace("_", " ").title()))


def metric_labels(ids: pd.Series) -> pd.Series:
    """``metric_label`` of every cell, looked up once per distinct id: run A vs B lists 8,000 changed results
    of six criteria, and a lookup per cell reads the session's language 8,000 times (0.2 s of Compare's open)."""
    return ids.map({m: metric_label(m) for m in ids.dropna().unique()})


def metric_short(metric_id: str) -> str:
    """A criterion's short name where space is tight (multiselect chips cut long ones): "Correctness"."""
    return t_opt(f"metric.short.{metric_id}", metric_label(metric_id))


UNSCORED = "-"  # what an unscored cell shows, as in the RAGAS-vs-judge article's tables (st.dataframe(placeholder=UNSCORED))


def fmt_score(value: Any) -> str:
    """Three decimals like the RAGAS-vs-judge article's tables; "-" for unscored."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNSCORED
    return f"{float(value):.3f}"


def shorten(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: whole when it fits, else cut at a word or the limit, with "…"."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + "…"


def fmt_score_md(value: Any) -> str:
    """``fmt_score`` for st.table, whose cells are Markdown: a bare "-" would render as a list bullet."""
    text = fmt_score(value)
    return "\\-" if text == UNSCORED else text


def fmt_share(value: float | None) -> str:
    """A share as a whole percentage (``62%``), or a dash when undefined."""
    return "–" if value is None else f"{value:.0%}"


def fmt_cost(value: float | None) -> str:
    if value is None:
        return t("common.unknown")
    return "$0" if value == 0 else f"${value:.4f}"


def fmt_count(n: int) -> str:
    """A count short enough for a metric tile: 980, 52.8k, 1.2M (a tile cuts what does not fit)."""
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def fmt_tokens(tokens_in: int, tokens_out: int) -> str:
    """Tokens in / out for a metric tile: say less rather than have the tile cut the number."""
    return f"{fmt_count(tokens_in)} / {fmt_count(tokens_out)}"


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def counted(n: int, one: str, many: str) -> str:
    """"1 error" / "2 errors" with the nouns from the catalogue (Japanese has one form: pass it twice)."""
    return f"{n} {one if n == 1 else many}"


# The call failed (not the row): these unscored reasons say the provider or the judge's output is the problem.
FAILURE_REASONS = (
    Unscored.PROVIDER_ERROR, Unscored.PROVIDER_UNREACHABLE, Unscored.TIMEOUT, Unscored.PARSE_ERROR, Unscored.REPLAY_MISS,
)

PAGE_ERROR = "This page hit an unexpected error"  # kept in every language (in brackets): tests and logs look for it
_log = logging.getLogger("rageval.ui")


def run_page(page: Any) -> None:
    """Run the selected page; an unexpected exception becomes a message (the traceback goes to the server log).

    The last resort of every page: a page catches ``RagevalError`` (a user's error, shown where it happened) and
    anything else, a bug, ends here, so the router and the sidebar still render."""
    from rageval_ui import store_check

    try:
        page.run()
    except Exception as exc:  # noqa: BLE001 - last resort; Streamlit's rerun/stop signals are BaseException and pass through
        if store_check.page_fault(exc):  # the store's own fault (damaged, read-only), said with the file and what to do
            return
        _log.exception("page %s failed", getattr(page, "title", "?"))
        show_error(t("common.page_error", english=PAGE_ERROR, log=t("common.see_log")), exc)


def next_step(current: Any) -> None:
    """The page's primary button: the next step of the tour (``nav.TOUR``), which opens that page."""
    from rageval_ui import nav

    following = nav.next_in_tour(current)
    if following is None:
        return
    if st.button(t("tour.next", page=t(following.title_key)), type="primary", icon=following.icon, key=f"tour.next.{current.url_path}",
                 help=t("tour.next_help", tour=nav.tour_text())):
        st.switch_page(following.path)


def show_error(message: str, exc: BaseException | None = None) -> None:
    """An error as a message (never a traceback, never a Python class name): what failed and the error's own text
    (a ``RagevalError`` names the file, row or setting), through the redaction step (an exception may quote a key,
    a header token or a credentialed URL)."""
    from rageval_core.core.redact import redact

    detail = f" — {core(str(exc))}" if exc is not None and str(exc) else ""  # a coded core message, translated
    st.error(md_escape(redact(f"{message}{detail}")), icon="⚠️")


def show_problem(message: str, detail: str) -> None:
    """An error as a message with its detail (a core message, translated when it has a code), never an exception's
    Python name: for problems in a user's file, which the detail names."""
    from rageval_core.core.redact import redact

    st.error(md_escape(redact(f"{message} — {core(detail)}")), icon="⚠️")


def log_unexpected(what: str) -> None:
    """The current exception's traceback to the server log (the page shows a message, never the traceback)."""
    _log.exception("%s failed", what)


LAZY_ROWS = 1000  # a longer plain frame goes to the browser a screenful at a time (``st.dataframe(lazy=True)``)


def table(data: Any, **kwargs: Any) -> Any:
    """``st.dataframe`` with every column heading in the UI language (``i18n.headers``); the frame keeps its column
    names, so selections and tests still key on them. A ``column_config`` given here wins over the headings.

    A plain frame of more than ``LAZY_ROWS`` rows is sent lazily: the browser gets the rows in view and asks
    for more as the reader scrolls or sorts (every row stays there). Sent whole, a 10,000-line table of run A
    vs run B was a megabyte the browser parsed before the page settled. (Streamlit keeps AppTest eager.)"""
    config = {**headers(data), **(kwargs.pop("column_config", None) or {})}
    if isinstance(data, pd.DataFrame) and len(data) > LAZY_ROWS and "on_select" not in kwargs:
        kwargs.setdefault("lazy", True)
    return st.dataframe(data, column_config=config, **kwargs)


def validation_report(issues: Sequence[Issue], n_rows: int) -> None:
    """Errors and warnings with file, row and field; a success line when there are none."""
    errors = [i for i in issues if i.severity == "error"]
    warnings = [i for i in issues if i.severity != "error"]
    if not issues:
        st.success(t("validation.ok", n=n_rows), icon="✅")
        return
    summary = t("validation.summary", rows=counted(n_rows, t("unit.valid_row"), t("unit.valid_rows")),
                errors=counted(len(errors), t("unit.error"), t("unit.errors")),
                warnings=counted(len(warnings), t("unit.warning"), t("unit.warnings")))
    (st.error if errors else st.warning)(summary)
    table(data.issues_frame(issues), hide_index=True, width="stretch")


def score_table(frame: pd.DataFrame, *, markdown: bool = False) -> Any:
    """A table of [0, 1] scores formatted with three decimals and "-" for unscored cells.

    ``markdown=True`` for st.table (Markdown cells: the index and text cells are escaped so section names
    such as "1. 適用範囲" stay text); st.dataframe needs ``placeholder=UNSCORED`` as well, since it draws
    missing cells itself.
    """
    numeric = frame.select_dtypes("number").columns
    if not markdown:
        return frame.style.format({c: fmt_score for c in numeric})
    shown = frame.rename(index=lambda i: md_escape(i) if isinstance(i, str) else i)
    if shown.index.name == "category":
        shown.index.name = t("chart.category")
    text = [c for c in shown.columns if c not in numeric]
    return shown.style.format({**{c: fmt_score_md for c in numeric}, **{c: md_escape for c in text}})


def score_columns(frame: pd.DataFrame) -> dict[str, Any]:
    """``score_table``'s formatting for ``table`` as column settings: every numeric column with three decimals
    under its UI-language heading (with ``placeholder=UNSCORED`` for unscored cells). The browser formats the cells, so a
    10,000-row table is not rendered cell by cell on the server as a Styler is (seconds at that size)."""
    return {str(c): st.column_config.NumberColumn(header(str(c)), format="%.3f") for c in frame.select_dtypes("number").columns}


def offline_banner(results: Sequence[MetricResult]) -> None:
    """Say once, above results, that some come from the offline heuristic (each result is tagged as well)."""
    _offline_banner(sum(getattr(r, "provider", None) == "offline" for r in results), len(results))


def offline_banner_of(frame: pd.DataFrame) -> None:
    """``offline_banner`` of a results frame (``compare.results_frame``: one line per result)."""
    _offline_banner(int((frame["provider"] == "offline").sum()) if not frame.empty else 0, len(frame))


def _offline_banner(offline: int, total: int) -> None:
    if offline:
        head = t("offline.banner") if offline == total else t("offline.banner_some", n=offline, total=total)
        st.info(f"{head}\n\n{md_escape(limits_text(lang()))}", icon="🧮")


def source_tag(result: MetricResult) -> str:
    """The short tag of who scored a result: "🧮 offline" for the heuristic, else the model."""
    if getattr(result, "provider", None) == "offline":
        return "🧮 " + t("offline.tag")
    return str(getattr(result, "model", None) or getattr(result, "provider", None) or "")


def unscored_label(code: str | None) -> str:
    """Why a result is unscored, in the UI language: the reason code itself in English ("parse_error"), a short
    translation with the code in Japanese."""
    return t_opt(f"unscored.{code}", code) if code else ""


def results_frame(results: Sequence[MetricResult], *, by: str) -> pd.DataFrame:
    """Results one per line with their score, raw judge score, why unscored and reason.

    ``by="row"`` leads with the row id (results of several rows); ``by="method"`` names the method after the
    criterion (the results of one row).
    """
    def line(r: MetricResult) -> dict[str, Any]:
        lead = {t("col.row"): r.sample_id, t("col.criterion"): metric_label(r.metric)} if by == "row" else {
            t("col.criterion"): metric_label(r.metric), t("col.method"): r.method}
        return {
            **lead,
            t("col.score"): fmt_score(r.value),
            t("col.raw"): "" if r.raw_score is None else f"{r.raw_score:g}",
            t("col.by"): source_tag(r),
            t("col.unscored"): unscored_label(r.unscored_reason),
            t("col.reason"): core(r.reason) if r.unscored_reason else r.reason or "",
        }

    return pd.DataFrame([line(r) for r in results])


def estimate_frame(est: Estimate) -> pd.DataFrame:
    """``run.Estimate`` per scorer: calls, embedding calls, tokens and cost."""
    return pd.DataFrame(
        [
            {
                t("col.scorer"): r.scorer,
                t("col.method"): r.method,
                t("col.llm_calls"): r.llm_calls,
                t("col.embedding_calls"): r.embedding_calls,
                t("col.input_tokens"): r.input_tokens,
                t("col.output_tokens"): r.output_tokens,
                t("col.cost"): fmt_cost(r.cost_usd),
            }
            for r in est.rows
        ]
    )


def prompt_cache_note(est: Estimate) -> str | None:
    """Beside the estimate: what the provider's prompt cache could take off it (``run.Estimate``'s upper
    bound, ``llm.prompt_cache``), or None when the provider has no implicit cache."""
    rule = est.cache_rule
    if rule is None:
        return None
    if est.cached_input_tokens == 0:
        return t("evaluate.prompt_cache_none", rule=md_escape(rule.label), min=f"{rule.min_tokens:,}")
    saving, cost = est.cache_saving_usd, est.cost_usd
    after = None if saving is None or cost is None else cost - saving
    return t("evaluate.prompt_cache", rule=md_escape(rule.label), min=f"{rule.min_tokens:,}", cached=f"{est.cached_input_tokens:,}",
             total=f"{est.input_tokens:,}", share=f"{est.cached_input_tokens / max(1, est.input_tokens):.0%}",
             saving=fmt_cost(saving), after=fmt_cost(after), cost=fmt_cost(cost))


def progress_metrics(snap: Progress | None) -> None:
    """Calls, cache hits, errors, tokens and cost so far of a running evaluation."""
    cols = st.columns(5)
    if snap is None:
        cols[0].metric(t("progress.calls"), 0)
        return
    cols[0].metric(t("progress.calls"), snap.calls)
    cols[1].metric(t("progress.cache_hits"), snap.cached_calls)
    cols[2].metric(t("progress.errors"), snap.errors)
    cols[3].metric(t("evaluate.tokens"), fmt_tokens(snap.input_tokens, snap.output_tokens))
    cols[4].metric(t("progress.cost"), fmt_cost(snap.cost_usd))
    if snap.eta_s is not None:
        st.caption(t("progress.elapsed_eta", elapsed=f"{snap.elapsed_s:.1f}", eta=f"{snap.eta_s:.0f}"))
    else:
        st.caption(t("progress.elapsed", elapsed=f"{snap.elapsed_s:.1f}"))
    if snap.unsaved:  # the store refuses writes (locked, or its disk is full): said while the run goes
        st.warning(t("progress.unsaved", n=int(snap.unsaved)), icon="💾")


def readable_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``compare.side_by_side`` columns ("faithfulness|judge:rubric5", "faithfulness|diff") as labels a reader
    scans: "Faithfulness · judge:rubric5", "Faithfulness · judge − decomposed"."""
    def label(column: str) -> str:
        if "|" not in column:
            return column
        metric, method = column.split("|", 1)
        return f"{metric_label(metric)} · {t('compare.diff_column') if method == 'diff' else method}"

    return frame.rename(columns={c: label(str(c)) for c in frame.columns})


def unscored_note(results: Sequence[MetricResult]) -> tuple[str, str] | None:
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
        reason = r.unscored_reason or ""  # every failed result has one (FAILURE_REASONS)
        counts[reason] = counts.get(reason, 0) + 1
    reasons = ", ".join(f"{unscored_label(k)} × {v}" for k, v in counts.items())
    first = core(next((r.reason for r in failed if r.reason), ""))
    scored = sum(r.value is not None for r in results)
    kind = "error" if scored == 0 else "warning"
    head = t("outcome.none_scored") if scored == 0 else t("outcome.some_failed", failed=len(failed), total=len(results))
    return kind, t("outcome.first_failure", head=head, reasons=reasons, first=first)


def run_outcome(result: Run) -> str:
    """One line on a finished ``run.Run``: how it ended, tasks done, calls (cached), cost and wall time."""
    verdicts = {"done": t("outcome.finished"), "cancelled": t("outcome.cancelled")}
    verdict = verdicts[result.status] if result.status in verdicts else md_escape(result.status)
    if not getattr(result, "kept_whole", True):  # a full store: never "finished" as if complete
        verdict = t("outcome.not_kept")
    return t("outcome.line", run=md_escape(result.run_id), verdict=verdict, done=int(result.done_tasks),
             total=int(result.total_tasks), calls=int(result.provider_calls), cached=int(result.cache_hits), cost=fmt_cost(result.cost_usd), wall=f"{result.wall_s:.1f}")


def summary_frame(summary: dict[str, dict[str, dict[str, Any]]]) -> pd.DataFrame:
    """``compare.summarize`` output as rows: method, criterion, mean over scored rows, scored, unscored (why)."""
    columns = [t("col.method"), t("col.criterion"), t("col.mean"), t("col.scored"), t("col.unscored"), t("col.why_unscored")]
    rows = []
    for method, metrics in summary.items():
        for metric_id, s in metrics.items():
            reasons = ", ".join(f"{unscored_label(k)} × {v}" for k, v in (s.get("unscored_reasons") or {}).items())
            values = [method, metric_label(metric_id), fmt_score(s.get("mean")), s.get("scored", 0), s.get("unscored", 0), reasons]
            rows.append(dict(zip(columns, values)))
    return pd.DataFrame(rows, columns=columns)


def cost_frame(costs: Mapping[str, MethodCost]) -> pd.DataFrame:
    """Actual work per method after a run (``Run.cost``): calls, cache hits, errors, tokens, cost, call time."""
    columns = [t("col.method"), t("col.calls"), t("col.cache_hits"), t("col.errors"), t("col.input_tokens"),
               t("col.output_tokens"), t("col.cost"), t("col.call_time")]
    rows = [
        dict(zip(columns, [method, c.calls, c.cached_calls, c.errors, c.input_tokens, c.output_tokens,
                           fmt_cost(c.cost_usd), round(c.latency_s, 2)]))
        for method, c in costs.items()
    ]
    return pd.DataFrame(rows, columns=columns)
