"""The row filters of Compare, Inspect and History, drawn the same way on each page under the same keys, so what is
set on one page is set on the others (``state.restore`` / ``state.remember`` keep it across the page change): category,
method, score range, disagreement, unscored, labels; and from the rows themselves the trace's latency, the language
and metadata fields (``row_filter.row_facts``).

The filtering itself is ``rageval_core.analysis.row_filter``; this module only draws the controls and narrows a
``rageval_ui.runs.RunView`` to the rows (and methods) that pass.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

import streamlit as st

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.row_filter import LABEL_MODES, RowFilter, fact_options, filter_rows, labelled_rows, row_facts
from rageval_core.store.runs import Store
from rageval_ui import state
from rageval_ui.i18n import t, t_opt
from rageval_ui.runs import RunView
from rageval_ui.safe_text import md_escape

CATEGORIES = "filter.categories"
METHODS = "filter.methods"
SCORE = "filter.score"
DISAGREE = "filter.disagree"
UNSCORED = "filter.unscored"
LABELS = "filter.labels"
LATENCY = "filter.latency"  # (lo, hi) in ms, or None: any latency
LANGUAGES = "filter.languages"
META_FIELD = "filter.meta_field"
META_VALUES = "filter.meta_values"
KEYS = (CATEGORIES, METHODS, SCORE, DISAGREE, UNSCORED, LABELS, LATENCY, LANGUAGES, META_FIELD, META_VALUES)
DEFAULTS = {CATEGORIES: [], METHODS: [], SCORE: (0.0, 1.0), DISAGREE: 0.0, UNSCORED: False, LABELS: "all", LATENCY: None,
            LANGUAGES: [], META_FIELD: None, META_VALUES: []}


@dataclass
class Options:
    """What the filters offer on a page: its categories and methods, and from its rows' facts the latency range
    (None: no row came from a trace with a latency), the languages and the metadata fields with their values."""

    categories: list[str]
    methods: list[str]
    latency: tuple[float, float] | None = None
    languages: list[str] = field(default_factory=list)
    metadata: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, categories: list[str], methods: list[str], facts: Mapping[str, Mapping[str, Any]]) -> "Options":
        latency, languages, metadata = fact_options(facts)
        return cls(categories, methods, latency, languages, metadata)


def facts_of(view: RunView) -> dict[str, dict[str, Any]]:
    """The run's rows' facts (latency, language, metadata), kept with the run."""
    return view.cached("row_facts", lambda: row_facts({sid: s for sid, s in view.samples.items()}))


def _reset() -> None:
    for key in KEYS:
        st.session_state[key] = DEFAULTS[key]
        st.session_state[f"{key}.kept"] = DEFAULTS[key]


def render(view: RunView, judge: str | None) -> RowFilter:
    """The filter controls (in an expander, open while a filter is set); returns what they say."""
    return render_options(Options.of(view.category_order(), view.methods(), facts_of(view)), judge)


def render_options(options: Options, judge: str | None) -> RowFilter:
    """``render`` for what ``options`` offers (History: the union over its runs)."""
    state.restore(CATEGORIES, [], options.categories, shared=True)
    state.restore(METHODS, [], options.methods, shared=True)
    for key in (SCORE, DISAGREE, UNSCORED, LATENCY):
        state.restore(key, DEFAULTS[key], shared=True)
    state.restore(LABELS, "all", LABEL_MODES, shared=True)
    state.restore(LANGUAGES, [], options.languages, shared=True)
    state.restore(META_FIELD, None, [None, *options.metadata], shared=True)
    state.restore(META_VALUES, [], options.metadata.get(st.session_state.get(META_FIELD) or "", []), shared=True)
    current = _from_state(options)
    with st.expander(t("filter.heading") + (" " + t("filter.on") if current.active() else ""), expanded=current.active()):
        _controls(options, judge)
    return _from_state(options)


def _controls(options: Options, judge: str | None) -> None:
    c1, c2, c3 = st.columns(3)
    c1.multiselect(t("filter.category"), options.categories, key=CATEGORIES, on_change=state.remember, args=(CATEGORIES,),
                   placeholder=t("filter.any"))
    c2.multiselect(t("filter.method"), options.methods, key=METHODS, on_change=state.remember, args=(METHODS,), placeholder=t("filter.any"))
    c3.slider(t("filter.score"), 0.0, 1.0, step=0.05, key=SCORE, on_change=state.remember, args=(SCORE,), help=t("filter.score_help"))
    d1, d2, d3 = st.columns(3)
    d1.slider(t("filter.disagree"), 0.0, 1.0, step=0.05, key=DISAGREE, on_change=state.remember, args=(DISAGREE,), disabled=judge is None,
              help=t("filter.disagree_help", judge=md_escape(judge or "-")))
    d2.checkbox(t("filter.unscored"), key=UNSCORED, on_change=state.remember, args=(UNSCORED,))
    label_names = {"all": t("filter.labels_all"), "labelled": t("filter.labels_labelled"),
                   "unlabelled": t("filter.labels_unlabelled")}
    d3.radio(t("filter.labels"), LABEL_MODES, format_func=label_names.get, key=LABELS, on_change=state.remember, args=(LABELS,), horizontal=True)
    _fact_controls(options)
    st.button(t("filter.reset"), key="filter.reset", on_click=_reset, disabled=not _from_state(options).active())


def _latency_bounds(span: tuple[float, float]) -> tuple[float, float]:
    return float(math.floor(span[0])), float(math.ceil(span[1]))


def _fact_controls(options: Options) -> None:
    """Latency (rows from traces), language and one metadata field's values: shown when the rows offer a choice."""
    e1, e2, e3, e4 = st.columns([3, 2, 2, 3])
    if options.latency is not None and _latency_bounds(options.latency)[0] < _latency_bounds(options.latency)[1]:
        lo, hi = _latency_bounds(options.latency)
        kept = st.session_state.get(LATENCY) or (lo, hi)
        st.session_state[LATENCY] = (max(lo, min(hi, float(kept[0]))), max(lo, min(hi, float(kept[1]))))
        e1.slider(t("filter.latency"), lo, hi, key=LATENCY, on_change=state.remember, args=(LATENCY,),
                  help=t("filter.latency_help"), format="%.0f ms")
    if len(options.languages) > 1:
        e2.multiselect(t("filter.language"), options.languages, key=LANGUAGES, on_change=state.remember, args=(LANGUAGES,),
                       format_func=lambda code: t_opt(f"language.{code}", code), placeholder=t("filter.any"))
    if options.metadata:
        e3.selectbox(t("filter.meta_field"), [None, *options.metadata], key=META_FIELD, on_change=_field_changed,
                     format_func=lambda f: t("filter.meta_none") if f is None else f, help=t("filter.meta_help"),
                     placeholder=t("filter.meta_none"))  # a None value is no selection to the browser: it shows this
        chosen = st.session_state.get(META_FIELD)
        if chosen in options.metadata:
            e4.multiselect(t("filter.meta_values", field=md_escape(chosen)), options.metadata[chosen], key=META_VALUES,
                           on_change=state.remember, args=(META_VALUES,), placeholder=t("filter.any"))


def _field_changed() -> None:
    """Another metadata field: its values start empty (the last field's values mean nothing here)."""
    state.remember(META_FIELD)
    st.session_state[META_VALUES] = []
    state.remember(META_VALUES)


def _from_state(options: Options | None = None) -> RowFilter:
    get = st.session_state.get
    lo, hi = get(SCORE) or (0.0, 1.0)
    latency = None
    if options is not None and options.latency is not None and get(LATENCY):
        chosen = (float(get(LATENCY)[0]), float(get(LATENCY)[1]))
        latency = None if chosen == _latency_bounds(options.latency) else chosen
    field_name, values = get(META_FIELD), tuple(get(META_VALUES) or ())
    return RowFilter(
        categories=tuple(get(CATEGORIES) or ()),
        methods=tuple(get(METHODS) or ()),
        score_range=(float(lo), float(hi)),
        min_disagreement=float(get(DISAGREE) or 0.0),
        unscored_only=bool(get(UNSCORED)),
        labels=get(LABELS) or "all",
        latency_ms=latency,
        languages=tuple(get(LANGUAGES) or ()),
        metadata=((str(field_name), values),) if field_name and values else (),
    )


def apply(view: RunView, flt: RowFilter, judge: str | None, store: Store) -> tuple[RunView, int]:
    """The view narrowed to the rows that pass (and to the chosen methods); also how many rows it had."""
    total = len(view.sample_ids())
    if not flt.active():
        return view, total
    def narrow() -> tuple[set[str], pd.DataFrame]:
        labelled = labelled_rows(store.labels(view.info.dataset_hash or "")) if flt.labels != "all" else set()
        facts = facts_of(view) if flt.latency_ms is not None or flt.languages or flt.metadata else None
        keep = set(filter_rows(view.frame, flt, judge=judge, labelled=labelled, order=view.sample_ids(), facts=facts))
        frame = view.frame[view.frame["sample_id"].isin(keep)]
        return keep, frame[frame["method"].isin(flt.methods)] if flt.methods else frame

    # Kept with the run while the filter stays (every click reruns the page; 0.3-0.7 s on a 10,000-row run),
    # except a label filter: labels change without the run changing.
    keep, frame = view.cached(f"filter:{flt!r}:{judge}", narrow) if flt.labels == "all" else narrow()
    frame = frame.copy()  # the view's own, as ``runs.load`` gives the page a copy
    # ``results`` narrows the same way when asked for (to these rows, and to the methods by their base name)
    return replace(view, frame=frame, keep_rows=frozenset(keep), scope=repr(flt), only_methods=tuple(flt.methods)), total
