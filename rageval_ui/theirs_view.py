"""Compare's "their scores vs ours" tab: another tool's scores the rows came with (a ragas results CSV's metric
columns) beside the scores the run computed, with their agreement. The read model is
``rageval_core.analysis.external_scores``; this only draws it. Their score is always labelled with the tool and
column it was read from, never shown as one of our methods."""

from __future__ import annotations

import streamlit as st

from rageval_core.analysis import external_scores as ext
from rageval_ui import runs, widgets
from rageval_ui.i18n import t

COLUMN, METHOD = "compare.theirs.column", "compare.theirs.method"


def offered(view: runs.RunView) -> bool:
    """Whether the run's rows carry any other tool's scores (the tab is there only then)."""
    return bool(view.cached("theirs:any", lambda: ext.has_external_scores(view.samples)))


def read(view: runs.RunView) -> ext.TheirsVsOurs:
    return view.cached("theirs", lambda: ext.theirs_vs_ours(view.frame, view.samples))


def _column_line(column: ext.Column) -> str:
    if column.metric is not None:
        return t("theirs.matched_line", source=widgets.md_escape(column.source), column=widgets.md_code(column.column),
                 metric=widgets.md_escape(widgets.metric_label(column.metric)), scored=int(column.scored),
                 rows=int(column.rows))
    kind, metric = ext.unmatched_reason(column)
    if kind == ext.NOT_IN_RUN and metric:
        return t("theirs.not_in_run_line", source=widgets.md_escape(column.source),
                 column=widgets.md_code(column.column), metric=widgets.md_escape(widgets.metric_label(metric)))
    return t("theirs.no_metric_line", source=widgets.md_escape(column.source), column=widgets.md_code(column.column))


def show(view: runs.RunView) -> None:
    """Which columns were matched and which not, the agreement table, then one column's rows beside ours."""
    st.subheader(t("theirs.heading"))
    st.caption(t("theirs.from_file"))
    found = read(view)
    if found.matched:
        st.markdown(t("theirs.matched") + "\n" + "\n".join("- " + _column_line(c) for c in found.matched))
    if found.unmatched:
        st.markdown(t("theirs.unmatched") + "\n" + "\n".join("- " + _column_line(c) for c in found.unmatched))
    if not found.matched or found.agreement.empty:
        st.info(t("theirs.none_matched"))
        return
    st.markdown(t("theirs.agreement", threshold=f"{found.threshold:g}"))
    stats = found.agreement.assign(metric=widgets.metric_labels(found.agreement["metric"]))
    numbers = ["pearson", "spearman", "mad", "mean_diff", "agree", "kappa", "threshold"]
    widgets.table(stats, column_config=widgets.score_columns(stats[numbers]), hide_index=True, width="stretch",
                  placeholder=widgets.UNSCORED)
    _rows(view, found)


def _rows(view: runs.RunView, found: ext.TheirsVsOurs) -> None:
    st.subheader(t("theirs.rows"))
    by_key = {c.key: c for c in found.matched}
    if st.session_state.get(COLUMN) not in by_key:
        st.session_state.pop(COLUMN, None)
    key = st.selectbox(t("theirs.pick_column"), list(by_key), key=COLUMN, format_func=lambda k: t(
        "theirs.column_option", source=by_key[k].source, column=by_key[k].column,
        metric=widgets.metric_label(str(by_key[k].metric))))
    column = by_key[str(key)]
    methods = found.methods_for(column)
    if st.session_state.get(METHOD) not in methods:
        st.session_state[METHOD] = ext.default_method(methods)
    method = str(st.selectbox(t("theirs.pick_method"), methods, key=METHOD))
    rows = found.rows(column, method)
    rows.insert(1, "question", [view.question_snippet(str(sid), 60) for sid in rows["sample_id"]])
    scores = {
        "theirs": st.column_config.NumberColumn(t("theirs.col_theirs", source=column.source, column=column.column),
                                                format="%.3f"),
        "ours": st.column_config.NumberColumn(t("theirs.col_ours", method=method), format="%.3f"),
        "diff": st.column_config.NumberColumn(t("theirs.col_diff"), format="%+.3f"),
        "abs_diff": st.column_config.NumberColumn(t("th.abs_diff"), format="%.3f"),
    }
    widgets.table(rows, column_config=scores, hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
