"""The row filters of Compare and Inspect, drawn the same way on both pages under the same keys, so what is
set on one page is set on the other (``state.restore`` / ``state.remember`` keep it across the page change).

The filtering itself is ``rageval_core.analysis.row_filter``; this module only draws the controls and narrows a
``rageval_ui.runs.RunView`` to the rows (and methods) that pass.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

import streamlit as st

from rageval_core.analysis.row_filter import LABEL_MODES, RowFilter, filter_rows, labelled_rows
from rageval_core.store.runs import Store
from rageval_ui import state
from rageval_ui.i18n import t
from rageval_ui.runs import RunView
from rageval_ui.safe_text import md_escape

CATEGORIES = "filter.categories"
METHODS = "filter.methods"
SCORE = "filter.score"
DISAGREE = "filter.disagree"
UNSCORED = "filter.unscored"
LABELS = "filter.labels"
KEYS = (CATEGORIES, METHODS, SCORE, DISAGREE, UNSCORED, LABELS)
DEFAULTS = {CATEGORIES: [], METHODS: [], SCORE: (0.0, 1.0), DISAGREE: 0.0, UNSCORED: False, LABELS: "all"}


def _reset() -> None:
    for key in KEYS:
        st.session_state[key] = DEFAULTS[key]
        st.session_state[f"{key}.kept"] = DEFAULTS[key]


def render(view: RunView, judge: str | None) -> RowFilter:
    """The filter controls (in an expander, open while a filter is set); returns what they say."""
    categories, methods = view.category_order(), view.methods()
    state.restore(CATEGORIES, [], categories, shared=True)
    state.restore(METHODS, [], methods, shared=True)
    for key in (SCORE, DISAGREE, UNSCORED):
        state.restore(key, DEFAULTS[key], shared=True)
    state.restore(LABELS, "all", LABEL_MODES, shared=True)
    current = _from_state()
    with st.expander(t("filter.heading") + (" " + t("filter.on") if current.active() else ""), expanded=current.active()):
        _controls(categories, methods, judge)
    return _from_state()


def _controls(categories: list[str], methods: list[str], judge: str | None) -> None:
    c1, c2, c3 = st.columns(3)
    c1.multiselect(t("filter.category"), categories, key=CATEGORIES, on_change=state.remember, args=(CATEGORIES,), placeholder=t("filter.any"))
    c2.multiselect(t("filter.method"), methods, key=METHODS, on_change=state.remember, args=(METHODS,), placeholder=t("filter.any"))
    c3.slider(t("filter.score"), 0.0, 1.0, step=0.05, key=SCORE, on_change=state.remember, args=(SCORE,), help=t("filter.score_help"))
    d1, d2, d3 = st.columns(3)
    d1.slider(t("filter.disagree"), 0.0, 1.0, step=0.05, key=DISAGREE, on_change=state.remember, args=(DISAGREE,), disabled=judge is None,
              help=t("filter.disagree_help", judge=md_escape(judge or "-")))
    d2.checkbox(t("filter.unscored"), key=UNSCORED, on_change=state.remember, args=(UNSCORED,))
    label_names = {"all": t("filter.labels_all"), "labelled": t("filter.labels_labelled"),
                   "unlabelled": t("filter.labels_unlabelled")}
    d3.radio(t("filter.labels"), LABEL_MODES, format_func=label_names.get, key=LABELS, on_change=state.remember, args=(LABELS,), horizontal=True)
    st.button(t("filter.reset"), key="filter.reset", on_click=_reset, disabled=not _from_state().active())


def _from_state() -> RowFilter:
    get = st.session_state.get
    lo, hi = get(SCORE) or (0.0, 1.0)
    return RowFilter(
        categories=tuple(get(CATEGORIES) or ()),
        methods=tuple(get(METHODS) or ()),
        score_range=(float(lo), float(hi)),
        min_disagreement=float(get(DISAGREE) or 0.0),
        unscored_only=bool(get(UNSCORED)),
        labels=get(LABELS) or "all",
    )


def apply(view: RunView, flt: RowFilter, judge: str | None, store: Store) -> tuple[RunView, int]:
    """The view narrowed to the rows that pass (and to the chosen methods); also how many rows it had."""
    total = len(view.sample_ids())
    if not flt.active():
        return view, total
    def narrow() -> tuple[set[str], pd.DataFrame]:
        labelled = labelled_rows(store.labels(view.info.dataset_hash or "")) if flt.labels != "all" else set()
        keep = set(filter_rows(view.frame, flt, judge=judge, labelled=labelled, order=view.sample_ids()))
        frame = view.frame[view.frame["sample_id"].isin(keep)]
        return keep, frame[frame["method"].isin(flt.methods)] if flt.methods else frame

    # Kept with the run while the filter stays (every click reruns the page; 0.3-0.7 s on a 10,000-row run),
    # except a label filter: labels change without the run changing.
    keep, frame = view.cached(f"filter:{flt!r}:{judge}", narrow) if flt.labels == "all" else narrow()
    frame = frame.copy()  # the view's own, as ``runs.load`` gives the page a copy
    # ``results`` narrows the same way when asked for (to these rows, and to the methods by their base name)
    return replace(view, frame=frame, keep_rows=frozenset(keep), scope=repr(flt), only_methods=tuple(flt.methods)), total
