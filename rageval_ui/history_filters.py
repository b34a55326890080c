"""History's row filters: the filters of Compare and Inspect (``rageval_ui.filters``: score range, category, method,
labels, and from the rows the trace's latency, the language and metadata fields) applied to every run the leaderboard
lists, so runs are ranked on the same slice of rows; and the picked run's rows that pass, each linked to its trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from rageval_core.analysis.row_filter import LANGUAGE, LATENCY, RowFilter
from rageval_core.store.runs import RunInfo, Store
from rageval_ui import filters, phoenix, runs, state, widgets
from rageval_ui.i18n import t
from rageval_ui.runs import RunView


def run_views(store: Store, infos: Sequence[RunInfo]) -> dict[str, RunView]:
    """The listed runs as the pages read them (each kept with its run: reading them again costs a lookup)."""
    current = st.session_state.get(state.DATASET)
    out = {}
    for info in infos:
        view = runs.load(info.id, current, store)
        if view is not None and not view.frame.empty:
            out[info.id] = view
    return out


def options(views: dict[str, RunView]) -> filters.Options:
    """What the filters offer over every listed run: categories and methods in first-seen order, and the union of
    the runs' rows' facts."""
    categories = list(dict.fromkeys(c for v in views.values() for c in v.category_order()))
    methods = list(dict.fromkeys(m for v in views.values() for m in v.methods()))
    facts = {f"{run_id}\0{sid}": fact for run_id, v in views.items() for sid, fact in filters.facts_of(v).items()}
    return filters.Options.of(categories, methods, facts)


def render(views: dict[str, RunView], store: Store) -> tuple[RowFilter, dict[str, pd.DataFrame] | None]:
    """The filter controls (no judge here: the disagreement filter is Compare's) and, when a filter is set, each
    run's results on the rows it leaves."""
    flt = filters.render_options(options(views), None)
    if not flt.active():
        return flt, None
    return flt, {run_id: filters.apply(view, flt, None, store)[0].frame for run_id, view in views.items()}


def rows_panel(view: RunView | None, flt: RowFilter, store: Store) -> None:
    """The picked run's rows (those the filters leave), with their trace link, language, latency and scores."""
    if view is None:
        return
    shown, total = filters.apply(view, flt, None, store)
    has_traces = any(s.metadata.get("trace_id") for s in view.samples.values())
    if not flt.active() and not has_traces:
        return
    with st.expander(t("history.rows", n=len(shown.sample_ids()), total=int(total)), expanded=flt.active()):
        frame = _rows_frame(shown)
        frame, links = phoenix.with_trace_links(frame, view.samples)
        widgets.table(frame, hide_index=True, width="stretch", placeholder=widgets.UNSCORED,
                      column_config={**widgets.score_columns(frame.drop(columns=[LATENCY], errors="ignore")), **links})


def _rows_frame(view: RunView) -> pd.DataFrame:
    """One line per row: id, category, language, trace latency, then the mean of each criterion over its methods."""
    facts = filters.facts_of(view)
    ids = view.sample_ids()
    base: dict[str, Any] = {
        "sample_id": ids,
        "category": [view.categories.get(s) for s in ids],
        LANGUAGE: [(facts.get(s) or {}).get(LANGUAGE) for s in ids],
        LATENCY: [(facts.get(s) or {}).get(LATENCY) for s in ids],
    }
    frame = pd.DataFrame(base)
    if not view.frame.empty:
        means = view.frame.pivot_table(index="sample_id", columns="metric", values="value", aggfunc="mean")
        for metric in means.columns:
            frame[widgets.metric_label(str(metric))] = means[metric].reindex(ids).to_numpy()
    if frame[LATENCY].isna().all():
        frame = frame.drop(columns=[LATENCY])
    return frame
