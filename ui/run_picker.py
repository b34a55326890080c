"""The run picker that Compare, Inspect and History share: stop with a hint when no run is stored, else a
select box that starts on (and remembers) the session's selected run."""

from __future__ import annotations

import streamlit as st

import pandas as pd

from rageval_core.store import RunInfo, Store
from ui import nav, runs, state


def stored_runs_or_stop(store: Store, empty_message: str, *, offer_evaluate: bool = False) -> list[RunInfo]:
    """Every stored run, newest first; with none, show ``empty_message`` (and a way to Evaluate) and stop."""
    infos = store.list_runs()
    if not infos:
        st.info(empty_message)
        if offer_evaluate and st.button("Go to Evaluate"):
            st.switch_page(nav.EVALUATE.path)
        st.stop()
    return infos


def run_labels(infos: list[RunInfo]) -> dict[str, str]:
    return {i.id: runs.run_label(i) for i in infos}


def pick_run(infos: list[RunInfo]) -> str:
    """"Run" select box starting on the selected run; the choice becomes the session's selected run."""
    ids = [i.id for i in infos]
    selected = state.get(state.SELECTED_RUN)
    run_id = st.selectbox("Run", ids, index=ids.index(selected) if selected in ids else 0,
                          format_func=run_labels(infos).get)
    st.session_state[state.SELECTED_RUN] = run_id
    return run_id


def pick_run_in_table(infos: list[RunInfo], table: pd.DataFrame) -> str:
    """The History table (a click picks its run once) above a "Run" select box of its own; starts on the
    session's selected run but does not change it (History opens a run in Compare or Inspect on request)."""
    event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key="history.table")
    rows = list(event.selection.rows) if event is not None else []
    clicked = str(table.iloc[rows[0]]["run"]) if rows and rows[0] < len(table) else None
    if clicked is not None and clicked != st.session_state.get("history.clicked"):  # a new click picks the run once
        st.session_state["history.run"] = clicked
    st.session_state["history.clicked"] = clicked
    ids = [i.id for i in infos]
    selected = state.get(state.SELECTED_RUN)
    if st.session_state.get("history.run") not in ids:
        st.session_state["history.run"] = selected if selected in ids else ids[0]
    return st.selectbox("Run", ids, format_func=run_labels(infos).get, key="history.run")
