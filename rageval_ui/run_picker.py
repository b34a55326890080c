"""The run picker that Compare, Inspect and History share: stop with a hint when no run is stored, else a
select box that starts on (and remembers) the session's selected run."""

from __future__ import annotations

import streamlit as st


from rageval_core.store.runs import RunInfo, Store
from rageval_ui import nav, runs, state
from rageval_ui.i18n import t


def stored_runs_or_stop(store: Store, empty_message: str, *, offer_evaluate: bool = False) -> list[RunInfo]:
    """Every stored run, newest first; with none, show ``empty_message`` (and a way to Evaluate) and stop."""
    infos = store.list_runs()
    if not infos:
        st.info(empty_message)
        if offer_evaluate and st.button(t("common.go_evaluate")):
            st.switch_page(nav.EVALUATE.path)
        st.stop()
    return infos


def run_labels(infos: list[RunInfo]) -> dict[str, str]:
    return {i.id: runs.run_label(i) for i in infos}


def pick_run(infos: list[RunInfo]) -> str:
    """"Run" select box starting on the selected run; the choice becomes the session's selected run."""
    ids = [i.id for i in infos]
    selected = state.get(state.SELECTED_RUN)
    run_id = st.selectbox(t("common.run"), ids, index=ids.index(selected) if selected in ids else 0,
                          format_func=run_labels(infos).get)
    st.session_state[state.SELECTED_RUN] = run_id
    return run_id
