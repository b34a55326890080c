"""History: every stored run as a leaderboard — ranked on every row or on the rows the filters leave (score, category,
latency, language, metadata) — name and note it, compare two, open, export or delete one."""

from __future__ import annotations

import streamlit as st

from rageval_core.analysis import run_groups
from rageval_core.core.errors import RagevalError
from rageval_ui import history_filters, leaderboard, nav, run_picker, runs, state, widgets
from rageval_ui.i18n import t

st.title(nav.HISTORY.heading)
store = runs.store()
infos = run_picker.stored_runs_or_stop(store, t("compare.no_runs"))

st.caption(t("history.caption"))
with_side = run_picker.side_toggle(infos)
views = history_filters.run_views(store, run_groups.picker_runs(infos, with_side=with_side))
row_filter, sliced = history_filters.render(views, store)
if sliced is not None:  # every run ranked on the rows the filters leave
    st.info(t("history.filtered", n=sum(not f.empty for f in sliced.values()), total=len(sliced)), icon="🔎")
table = leaderboard.filtered_table(store, infos, with_side=with_side, sliced=sliced)
picked = leaderboard.selected_runs(table)
if len(picked) == 2:
    if st.button(t("history.compare_two", a=widgets.md_escape(picked[0]), b=widgets.md_escape(picked[1])), type="primary"):
        st.session_state[state.SELECTED_RUN] = picked[0]
        st.session_state[leaderboard.RUN_B] = picked[1]
        st.session_state[leaderboard.RUN_B_FOR] = picked[0]
        st.session_state[state.COMPARE_TAB] = t("compare.tab.runs")
        st.switch_page(nav.COMPARE.path)
elif len(picked) > 2:
    st.caption(t("history.pick_two"))

listed = run_groups.picker_runs(infos, with_side=with_side, keep=picked[-1] if picked else None) or infos
ids = [i.id for i in listed]
if picked and picked[-1] != st.session_state.get("history.clicked"):  # a new pick chooses the run below once
    st.session_state["history.run"] = picked[-1]
st.session_state["history.clicked"] = picked[-1] if picked else None
if st.session_state.get("history.run") not in ids:
    selected = state.get(state.SELECTED_RUN)
    st.session_state["history.run"] = selected if selected in ids else ids[0]
run_id = st.selectbox(t("common.run"), ids, format_func=run_picker.run_labels(listed).get, key="history.run")
info = next(i for i in infos if i.id == run_id)
st.caption(t("history.run_caption", dataset=widgets.md_escape(info.dataset_name), hash=widgets.md_code(str(info.dataset_hash)[:12]),
             scorers=widgets.md_escape(", ".join(info.scorers))))
if not store.keeps_samples(run_id):  # a run stored before runs kept their rows: its CSV's texts are found by hash
    st.caption(t("runs.rows_by_hash.history"))
history_filters.rows_panel(views.get(run_id), row_filter, store)  # its rows, linked to their traces
leaderboard.edit_name_and_note(store, info)
with st.expander(t("history.settings")):
    st.json({"settings": info.settings, "versions": info.versions}, expanded=False)

open_compare, open_inspect, spacer = st.columns([1, 1, 3])
if open_compare.button(t("common.open_compare")):
    st.session_state[state.SELECTED_RUN] = run_id
    st.switch_page(nav.COMPARE.path)
if open_inspect.button(t("history.open_inspect")):
    st.session_state[state.SELECTED_RUN] = run_id
    st.session_state[state.INSPECT_SAMPLE] = None
    st.switch_page(nav.INSPECT.path)

st.subheader(t("history.export"))
try:
    files = runs.export_files(run_id, store, st.session_state.get(state.DATASET))
except RagevalError as exc:
    widgets.show_error(t("history.export_failed", run=run_id), exc)
else:
    for column, item in zip(st.columns(len(files)), files):
        column.download_button(widgets.md_escape(item.label), item.make, file_name=item.file_name, mime=item.mime)

st.subheader(t("history.delete"))
confirm = st.checkbox(t("history.confirm", run=widgets.md_escape(run_id)), key="history.confirm")
if st.button(t("history.delete_run"), disabled=not confirm):
    store.delete_run(run_id)
    if state.get(state.SELECTED_RUN) == run_id:
        st.session_state[state.SELECTED_RUN] = None
    st.toast(t("history.deleted", run=widgets.md_escape(run_id)))
    st.rerun()
