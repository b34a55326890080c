"""History: every stored run — open it in Compare or Inspect, export it, or delete it."""

from __future__ import annotations

import streamlit as st

from ui import nav, run_picker, runs, state, widgets

st.title(nav.HISTORY.heading)
store = runs.store()
infos = run_picker.stored_runs_or_stop(store, "No runs yet. Start one on the Evaluate page.")

st.caption("Click a row to pick that run, or choose it below.")
run_id = run_picker.pick_run_in_table(infos, runs.runs_frame(infos, store))
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
