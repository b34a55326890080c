"""Compare's judges view: several judges (and juries) on the same rows, criterion by criterion.

Thin: the numbers come from ``rageval_core.analysis.judge_agreement`` and ``jury_run``; this module only lays them out.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rageval_core.views import run_summary
from rageval_core.analysis import judge_agreement as agreement
from rageval_core.scoring.judges.jury import RULES
from rageval_core.scoring.judges.jury_run import add_jury, default_members
from rageval_core.core.method_labels import is_jury
from rageval_core.store.runs import Store
from rageval_ui import charts, widgets
from rageval_ui.i18n import t
from rageval_ui.runs import RunView
from rageval_ui.safe_text import md_escape


def judge_methods(view: RunView) -> list[str]:
    """Every method of the run that a judge view compares: decomposed and judges by name, juries last (a fixed
    order, not the order tasks finished in)."""
    return sorted(view.methods(), key=lambda m: (is_jury(m), m != "decomposed", m))


def show(view: RunView, store: Store) -> None:
    """The judges view of one run with two or more methods."""
    methods = judge_methods(view)
    st.subheader(t("judges.heading"))
    st.caption(t("judges.help"))
    threshold = st.slider(t("judges.threshold"), 0.05, 0.95, 0.5, 0.05, key="compare.judges.threshold")
    criteria = list(dict.fromkeys(view.frame["metric"]))
    criterion = st.selectbox(t("filter.criterion"), criteria, format_func={c: widgets.metric_label(c) for c in criteria}.get,
                             key="compare.judges.criterion")
    scores = agreement.judge_scores(view.frame, criterion, methods).dropna(how="all", axis=1)
    order = [s for s in view.sample_ids() if s in scores.index]
    scores = scores.reindex(order)
    widgets.table(widgets.score_table(scores.reset_index()), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
    points = scores.reset_index().melt(id_vars="sample_id", var_name="judge", value_name="value").dropna(subset=["value"])
    if not points.empty:
        charts.draw(charts.judge_rows(points, order))

    st.markdown(t("judges.pairwise"))
    pairs = agreement.pairwise(view.frame, list(scores.columns), threshold=threshold)
    pairs = pairs[pairs["criterion"] == criterion]
    widgets.table(_fmt(pairs.drop(columns=["criterion"])), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

    split = agreement.splits(view.frame, list(scores.columns), threshold=threshold)
    split = split[split["criterion"] == criterion]
    st.markdown(t("judges.splits", threshold=f"{threshold:g}", n=len(split)))
    if split.empty:
        st.caption(t("judges.no_splits"))
    else:
        widgets.table(_fmt(split.drop(columns=["criterion"])), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

    st.markdown(t("judges.cost"))
    cost = view.cached("judges.cost", lambda: agreement.cost_per_judge(run_summary.light_calls(store, view.run_id),
                                                                     len(view.sample_ids())))
    widgets.table(cost.style.format({"cost_usd": "{:.4f}", "seconds": "{:.2f}", "calls_per_row": "{:.2f}",
                                    "tokens_per_row": "{:.1f}", "cost_per_row": "{:.5f}", "seconds_per_row": "{:.3f}"}),
                 hide_index=True, width="stretch")
    _jury_form(view, store, methods)


def _fmt(frame: pd.DataFrame) -> object:
    numeric = [c for c in frame.columns if frame[c].dtype.kind == "f"]
    return frame.style.format({c: widgets.fmt_score for c in numeric})


def _jury_form(view: RunView, store: Store, methods: list[str]) -> None:
    members_all = [m for m in methods if not is_jury(m)]
    with st.form("compare.jury", border=True):
        st.markdown(t("judges.jury"))
        rule = st.selectbox(t("judges.rule"), list(RULES), key="compare.jury.rule")
        members = st.multiselect(t("judges.members"), members_all, default=default_members(members_all), key="compare.jury.members",
                                 placeholder=t("common.choose"))
        if st.form_submit_button(t("judges.add_jury")):
            try:
                add_jury(store, view.run_id, rule, members)
            except ValueError as exc:
                st.error(md_escape(str(exc)))
            else:
                st.toast(t("judges.added", rule=md_escape(rule), n=len(members)))
                st.rerun()
