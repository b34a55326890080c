"""Dataset: pick a sample or upload a file, edit rows in place, read the validation report, pin rows."""

from __future__ import annotations

import streamlit as st

from ui import data, nav, sidebar, state, widgets

UPLOAD_KEY = "dataset.upload"
UPLOAD_SEEN = "dataset.upload_seen"


st.title(nav.DATASET.heading)
ws: data.Workset = st.session_state[state.DATASET]
pinned: set[str] = st.session_state[state.PINNED]

pick, upload = st.columns(2)
with pick:
    files = data.sample_files()
    current = ws.source.removeprefix("sample_data/")
    choice = st.selectbox(
        "Sample dataset",
        files,
        index=files.index(current) if current in files else None,
        placeholder="Choose a shipped sample",
        help="The datasets in sample_data/ (sample_data/README.md describes each).",
    )
    if st.button("Load sample", disabled=choice is None):
        state.use_dataset(data.load_sample_file(choice))
        st.rerun()
with upload:
    uploaded = st.file_uploader("Or upload JSON, JSONL or CSV", type=["json", "jsonl", "ndjson", "csv"], key=UPLOAD_KEY)
    if uploaded is not None and state.is_new_upload(uploaded, UPLOAD_SEEN):
        try:
            state.use_dataset(data.load_upload(uploaded.name, uploaded.getvalue()))
        except Exception as exc:  # noqa: BLE001 - the loader reports problems as issues; anything else is still a message
            widgets.show_error(f"Could not read {uploaded.name}", exc)
        else:
            st.rerun()

ws = st.session_state[state.DATASET]
pinned = st.session_state[state.PINNED]
cols = st.columns([3, 1.4, 2.2, 1.6])
cols[0].metric(
    "Dataset",
    ws.name,
    delta="edited in the table" if ws.edited else None,
    delta_color="off",
    delta_arrow="off",
    help=f"Source: {ws.source}",
)
cols[1].metric("Valid rows", len(ws.samples))
cols[2].metric("Detected language", data.language_label(ws.language))
cols[3].metric("Pinned for quick runs", len(pinned & set(ws.by_id())))
st.caption(
    f"Source: {ws.source} · content hash `{ws.content_hash[:12]}` (human labels and runs are keyed by it) · "
    f"judging with {sidebar.provider_label()}"
)

widgets.validation_report(ws.issues, len(ws.samples))

st.subheader("Rows")
st.caption(
    "Edit cells directly; add or delete rows at the bottom. Contexts: one cell, passages separated by ` ||| ` "
    "(or a JSON list). Tick 📌 to pin a row for quick runs on Prompts & rubric and Evaluate."
)
key = f"dataset.editor.{state.get(state.EDITOR_VERSION)}"
frame = data.editor_frame(ws, pinned)
st.data_editor(
    frame,
    key=key,
    num_rows="dynamic",
    hide_index=True,
    width="stretch",
    column_config={
        data.PIN_COLUMN: st.column_config.CheckboxColumn(data.PIN_COLUMN, help="Pinned for quick runs", width="small"),
        "id": st.column_config.TextColumn("id", width="small"),
        "question": st.column_config.TextColumn("question", width="medium"),
        "contexts": st.column_config.TextColumn("contexts", width="large", help="Passages separated by ' ||| '"),
        "answer": st.column_config.TextColumn("answer", width="large"),
        "ground_truth": st.column_config.TextColumn("ground_truth", width="medium"),
    },
)
edits = st.session_state.get(key)
if data.has_edits(edits):
    state.use_dataset(*data.apply_table_edits(ws, frame, edits))
    st.rerun()

n_labels = data.labels_count(ws)
with st.container(horizontal=True):
    if st.button(f"Pin {data.QUICK_ROWS} rows", help="One row per category first, then in dataset order."):
        state.use_dataset(ws)
        st.rerun()
    if st.button("Clear pins"):
        state.use_dataset(ws, set())
        st.rerun()
    st.download_button("Download JSON", data.download_bytes(ws, "json"), file_name=f"{ws.name}.json", mime="application/json")
    st.download_button("Download CSV", data.download_bytes(ws, "csv"), file_name=f"{ws.name}.csv", mime="text/csv")
    st.download_button(
        f"Download JSON with {widgets.plural(n_labels, 'human label')}",
        data.download_with_labels(ws),
        file_name=f"{ws.name}-labelled.json",
        mime="application/json",
        disabled=n_labels == 0,
        help="Rows with the 👍/👎 labels given on Inspect, under human_labels (1 = good, 0 = bad).",
    )
