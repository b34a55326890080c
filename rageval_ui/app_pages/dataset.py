"""Dataset: pick a sample or upload a file, edit rows in place, read the validation report, pin rows."""

from __future__ import annotations

import streamlit as st

from rageval_core.core.errors import RagevalError
from rageval_core.data.datasets import DatasetError
from rageval_ui import column_map, data, demo, nav, phoenix, sidebar, state, widgets
from rageval_ui.i18n import core, t

UPLOAD_KEY = "dataset.upload"
UPLOAD_SEEN = "dataset.upload_seen"
TRACES_KEY = "dataset.traces"
TRACES_SEEN = "dataset.traces_seen"


st.title(nav.DATASET.heading)
ws: data.Workset = st.session_state[state.DATASET]
pinned: set[str] = st.session_state[state.PINNED]

pick, upload = st.columns(2)
with pick:
    files = data.sample_files()
    current = ws.source.removeprefix("sample_data/")
    choice = st.selectbox(
        t("dataset.sample"),
        files,
        index=files.index(current) if current in files else None,
        placeholder=t("dataset.sample_placeholder"),
        help=t("dataset.sample_help"),
    )
    if st.button(t("dataset.load_sample"), disabled=choice is None):
        state.use_dataset(data.load_sample_file(choice))
        st.rerun()
    phoenix.pull_panel()
with upload:
    uploaded = st.file_uploader(t("dataset.upload"), type=["json", "jsonl", "ndjson", "csv"], key=UPLOAD_KEY)
    if uploaded is not None and state.is_new_upload(uploaded, UPLOAD_SEEN):
        try:
            column_map.remember(uploaded.name, uploaded.getvalue())
            state.use_dataset(data.load_upload(uploaded.name, uploaded.getvalue()))
        except RagevalError as exc:  # the loader reports a file's problems as issues; what stops it is a DataError
            widgets.show_error(t("dataset.unreadable", name=uploaded.name), exc)
        else:
            st.rerun()
    with st.expander(t("dataset.traces")):
        st.caption(t("dataset.traces_help"))
        trace_format = st.selectbox(t("dataset.traces_format"), data.TRACE_FORMATS, key="dataset.traces_format")
        traces = st.file_uploader(t("dataset.traces_upload"), type=["json", "jsonl", "ndjson"], key=TRACES_KEY)
        if traces is not None and state.is_new_upload(traces, TRACES_SEEN):
            try:
                state.use_dataset(data.load_trace_upload(traces.name, traces, trace_format))
            except RagevalError as exc:  # TraceUploadRefused names the file and the span or line, as the CLI does
                widgets.show_problem(t("dataset.unreadable", name=traces.name), str(exc))
            except Exception:  # noqa: BLE001 - last resort: a bug, not the file: logged, the rest of the page still shown
                widgets.log_unexpected("trace upload")
                widgets.show_problem(t("dataset.unreadable", name=traces.name), t("common.see_log"))
            else:
                st.rerun()

ws = st.session_state[state.DATASET]
pinned = st.session_state[state.PINNED]
cols = st.columns([3, 1.4, 2.2, 1.6])
cols[0].metric(
    t("nav.dataset"),
    ws.name,
    delta=t("dataset.edited") if ws.edited else None,
    delta_color="off",
    delta_arrow="off",
    help=t("dataset.source", source=widgets.md_escape(ws.source)),
)
cols[1].metric(t("dataset.valid_rows"), len(ws.samples))
cols[2].metric(t("dataset.language"), data.language_label(ws.language))
cols[3].metric(t("dataset.pinned"), len(pinned & set(ws.by_id())))
st.caption(t("dataset.caption", source=widgets.md_escape(ws.source), hash=widgets.md_code(ws.content_hash[:12]),
             judge=sidebar.provider_label()))
widgets.next_step(nav.DATASET)  # the page's one primary button: the tour's next step
if sidebar.is_offline() and demo.fits(ws):
    st.info(t("demo.offer"), icon="📼")
    demo.offer("dataset", primary=False)

widgets.validation_report(ws.issues, len(ws.samples))
column_map.step(ws)  # after the report that says why a file's rows did not load

st.subheader(t("dataset.rows"))
st.caption(t("dataset.rows_help"))
key = f"dataset.editor.{state.get(state.EDITOR_VERSION)}"
frame = data.editor_frame(ws, pinned)
st.data_editor(
    frame,
    key=key,
    num_rows="dynamic",
    hide_index=True,
    width="stretch",
    column_config={
        data.PIN_COLUMN: st.column_config.CheckboxColumn(data.PIN_COLUMN, help=t("dataset.pinned"), width="small"),
        "id": st.column_config.TextColumn("id", width="small"),
        "question": st.column_config.TextColumn("question", width="medium"),
        "contexts": st.column_config.TextColumn("contexts", width="large", help=t("dataset.contexts_help")),
        "answer": st.column_config.TextColumn("answer", width="large"),
        "ground_truth": st.column_config.TextColumn("ground_truth", width="medium"),
        **phoenix.link_column(frame),
    },
)
edits = st.session_state.get(key)
if data.has_edits(edits):
    state.use_dataset(*data.apply_table_edits(ws, frame, edits))
    st.rerun()

n_labels = data.labels_count(ws)
naming = st.selectbox(t("dataset.naming"), ["seed", "ragas", "deepeval"], key="dataset.naming", help=t("dataset.naming_help"))
downloads: dict[str, bytes | None] = {}
for fmt in ("json", "jsonl", "csv"):
    try:
        downloads[fmt] = data.download_bytes(ws, fmt, naming)
    except DatasetError as exc:  # a "|" inside a context cannot go into a DeepEval CSV
        downloads[fmt] = None
        st.warning(t("dataset.naming_refused", naming=widgets.md_escape(naming), problem=widgets.md_escape(core(str(exc)))))
suffix = "" if naming == "seed" else f"-{naming}"
with st.container(horizontal=True):
    if st.button(t("dataset.pin", n=data.QUICK_ROWS), help=t("dataset.pin_help")):
        state.use_dataset(ws)
        st.rerun()
    if st.button(t("dataset.clear_pins")):
        state.use_dataset(ws, set())
        st.rerun()
    for fmt, label, mime in (("json", t("dataset.download_json"), "application/json"),
                             ("jsonl", t("dataset.download_jsonl"), "application/jsonl"),
                             ("csv", t("dataset.download_csv"), "text/csv")):
        st.download_button(label, downloads[fmt] or b"", file_name=f"{ws.name}{suffix}.{fmt}", mime=mime,
                           disabled=downloads[fmt] is None)
    st.download_button(
        t("dataset.download_labels", labels=widgets.counted(n_labels, t("unit.label"), t("unit.labels"))),
        data.download_with_labels(ws),
        file_name=f"{ws.name}-labelled.json",
        mime="application/json",
        disabled=n_labels == 0,
        help=t("dataset.download_labels_help"),
    )
