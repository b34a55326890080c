"""History: every stored run — open it in Compare or Inspect, export it, or delete it."""

from __future__ import annotations

import streamlit as st

from ui import nav, runs, state, widgets

st.title("🗂️ History")
store = runs.store()
infos = store.list_runs()
if not infos:
    st.info("No runs yet. Start one on the Evaluate page.")
    st.stop()

table = runs.runs_frame(infos, store)
st.caption("Click a row to pick that run, or choose it below.")
event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="history.table")
rows = list(event.selection.rows) if event is not None else []
clicked = str(table.iloc[rows[0]]["run"]) if rows and rows[0] < len(table) else None
if clicked is not None and clicked != st.session_state.get("history.clicked"):  # a new click picks the run once
    st.session_state["history.run"] = clicked
st.session_state["history.clicked"] = clicked

ids = [i.id for i in infos]
labels = {i.id: runs.run_label(i) for i in infos}
selected = state.get(state.SELECTED_RUN)
if st.session_state.get("history.run") not in ids:
    st.session_state["history.run"] = selected if selected in ids else ids[0]
run_id = st.selectbox("Run", ids, format_func=labels.get, key="history.run")
info = next(i for i in infos if i.id == run_id)
st.caption(f"Dataset {info.dataset_name} (hash `{str(info.dataset_hash)[:12]}`) · scorers: {', '.join(info.scorers)}")
with st.expander("Settings and versions recorded with the run"):
    st.json({"settings": info.settings, "versions": info.versions}, expanded=False)

open_compare, open_inspect, spacer = st.columns([1, 1, 3])
if open_compare.button("Open in Compare", type="primary"):
    st.session_state[state.SELECTED_RUN] = run_id
    st.switch_page(nav.COMPARE.path)
if open_inspect.button("Open in Inspect"):
    st.session_state[state.SELECTED_RUN] = run_id
    st.session_state[state.INSPECT_SAMPLE] = None
    st.switch_page(nav.INSPECT.path)

st.subheader("Export")
try:
    files = runs.export_files(run_id, store)
except Exception as exc:  # noqa: BLE001 - UI boundary: shown as a message
    widgets.show_error(f"Could not export run {run_id}", exc)
else:
    for column, item in zip(st.columns(len(files)), files):
        column.download_button(item.label, item.data, file_name=item.file_name, mime=item.mime)

st.subheader("Delete")
confirm = st.checkbox(f"Yes, delete run {run_id} with its results and call log", key="history.confirm")
if st.button("Delete run", disabled=not confirm):
    store.delete_run(run_id)
    if state.get(state.SELECTED_RUN) == run_id:
        st.session_state[state.SELECTED_RUN] = None
    st.toast(f"Deleted run {run_id}.")
    st.rerun()
