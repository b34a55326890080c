"""History's leaderboard widgets: filters, the table (pick one run or two to compare), name and note editing."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from rageval_core.analysis import leaderboard, run_groups
from rageval_core.store.runs import RunInfo, Store
from rageval_ui import run_picker, widgets
from rageval_ui.runs import run_status
from rageval_ui.i18n import header, t
from rageval_ui.safe_text import md_escape

RUN_B = "compare.run_b"  # Compare's "run B" select box
RUN_B_FOR = "compare.run_b_for"  # the run A that run B was chosen for (Compare resets B when A changes)
RUN_B_PICK = "compare.run_b_pick"  # run B as last shown: kept while Compare's tab of it is closed (a widget's is not)
ALL = "(all)"  # the dataset filter's "every dataset" choice (shown in the UI language)


def filtered_table(store: Store, infos: list[RunInfo], *, with_side: bool = False,
                   sliced: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """The leaderboard of ``infos`` under the page's filter, dataset and sort controls: the user's runs, each followed
    by its side runs (probes, vs people runs, prompt tests) when ``with_side``, else with how many it has.
    ``sliced``: each run's results on the rows the row filters left; runs are then ranked on those rows only (a run
    with none is left out)."""
    rows = leaderboard.leader_rows(store, infos)
    if sliced is not None:
        rows = [leaderboard.on_rows(r, sliced[r.info.id]) for r in rows
                if r.info.id in sliced and not sliced[r.info.id].empty]
    frame = leaderboard.leaderboard_frame(rows)
    left, middle, right, order = st.columns([2, 2, 2, 1])
    text = left.text_input(t("leader.filter"), key="history.filter")
    sets = leaderboard.datasets_of(frame)
    dataset = middle.selectbox(t("leader.dataset"), [ALL, *sets], format_func={ALL: t("leader.all"), **{d: d for d in sets}}.get,
                               key="history.dataset")
    sortable = ["created (UTC)", "name", "unscored share", "calls", "cost ($)", "wall (s)", *leaderboard.metric_columns(frame)]
    sort_by = right.selectbox(t("leader.sort"), sortable, format_func={c: column_label(c) for c in sortable}.get, key="history.sort")
    descending = order.toggle(t("leader.descending"), value=True, key="history.desc")
    table = leaderboard.filter_sort(frame, text=text, dataset=None if dataset == ALL else dataset,
                                    sort_by=sort_by, descending=descending)
    table = grouped(table, infos, with_side=with_side)
    return table.assign(status=table["status"].map(run_status)) if "status" in table else table


def grouped(table: pd.DataFrame, infos: list[RunInfo], *, with_side: bool) -> pd.DataFrame:
    """``table`` (filtered and sorted) with each side run right under its parent run, or without side runs; the
    ``side`` column says what a side run is ("↳ probe: negation") or how many side runs a run has."""
    order = run_groups.grouped_ids(infos, table["run"].tolist(), with_side=with_side)
    out = table.set_index("run", drop=False).loc[order].reset_index(drop=True)
    by_id = {i.id: i for i in infos}
    counts = run_groups.side_counts(infos)

    def side(run_id: str) -> str:
        info = by_id.get(run_id)
        if info is not None and run_groups.is_side(info):
            return f"↳ {run_picker.side_label(info)}"
        n = counts.get(run_id, 0)
        return t("runs.side_count", n=n) if n else ""

    return out.assign(side=out["run"].map(side))


def column_label(column: str) -> str:
    """A leaderboard column's heading: the fixed ones from the catalogue, a score column as "<method> · <criterion>"."""
    if column in leaderboard.FIXED_COLUMNS or "/" not in column:
        return header(column)
    method, _, metric = column.rpartition("/")
    return f"{method} · {widgets.metric_label(metric)}"


def selected_runs(table: pd.DataFrame) -> list[str]:
    """The table with multi-row selection; the run ids of the rows picked (in table order)."""
    score_cols = leaderboard.metric_columns(table) + ["unscored share"]
    event = widgets.table(
        table.style.format({c: "{:.3f}" for c in score_cols}, na_rep="-"), hide_index=True, width="stretch",
        column_config={c: column_label(c) for c in leaderboard.metric_columns(table)},
        on_select="rerun", selection_mode="multi-row", key="history.table",
    )
    rows = list(event.selection.rows) if event is not None else []
    return [str(table.iloc[i]["run"]) for i in rows if i < len(table)]


def edit_name_and_note(store: Store, info: RunInfo) -> None:
    """Name and note of the picked run; saved on the button, shown in the leaderboard."""
    saved_key = f"history.saved.{info.id}"
    if st.session_state.pop(saved_key, False):
        # shown after the rerun: a toast right before st.rerun() can be lost (streamlit#7740)
        st.success(t("leader.saved", run=md_escape(info.id)))
    with st.form(f"history.label.{info.id}", border=False):
        name = st.text_input(t("leader.name"), value=info.name or "", key=f"history.name.{info.id}")
        note = st.text_area(t("leader.note"), value=info.note or "", key=f"history.note.{info.id}", height=70)
        if st.form_submit_button(t("leader.save")):
            store.label_run(info.id, name=name, note=note)
            st.session_state[saved_key] = True
            st.rerun()
