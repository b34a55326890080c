"""Test set: a document → synthetic QA pairs per section → review and edit → a simple RAG (top-k) → dataset."""

from __future__ import annotations

import streamlit as st

from rageval_core.data.documents import DocumentError, chunk_document
from rageval_core.llm.base import ProviderError
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.rag.simple import RagError, run_rag
from rageval_core.rag.synth import MAX_PER_SECTION, QUESTION_TYPES, TASK_OF, SynthError, generate_testset
from rageval_ui import data, nav, sidebar, state, widgets
from rageval_ui import testset as ts_ui
from rageval_ui import your_rag as yr_ui
from rageval_ui.i18n import core, header, t


def _set_document(doc) -> None:
    """A new document starts a new test set."""
    st.session_state[ts_ui.DOCUMENT] = doc
    st.session_state.pop(ts_ui.TESTSET, None)
    st.session_state.pop(ts_ui.RAG_RUN, None)
    st.session_state.pop(yr_ui.RUN, None)


def _set_testset(testset) -> None:
    """New or edited pairs: the RAG answers belong to the old ones, and the editor starts afresh."""
    st.session_state[ts_ui.TESTSET] = testset
    st.session_state.pop(ts_ui.RAG_RUN, None)
    st.session_state.pop(yr_ui.RUN, None)
    st.session_state[ts_ui.EDITOR_VERSION] = st.session_state.get(ts_ui.EDITOR_VERSION, 0) + 1


def _prompt_editor(name: str, task: str, language: str, placeholders: str, height: int) -> str:
    """The shipped ``task`` template in an editable text area (one per language, so a switch shows its own)."""
    return st.text_area(
        t("testset.template", placeholders=placeholders),
        ts_ui.shipped_prompt(task, language),
        height=height,
        key=f"testset.{name}_prompt.{language}",
    )


st.title(nav.TESTSET.heading)
st.caption(t("testset.caption"))
if sidebar.is_offline():
    st.info(t("testset.offline"), icon="🧮")

# ---- 1. document ------------------------------------------------------------------------------------
if ts_ui.DOCUMENT not in st.session_state:
    try:
        _set_document(ts_ui.load_sample_document(ts_ui.DEFAULT_DOCUMENT))
    except (OSError, DocumentError) as exc:
        widgets.show_error(t("testset.sample_unreadable"), exc)
        st.stop()

st.subheader(t("testset.document_heading"))
pick, upload = st.columns(2)
with pick:
    docs = ts_ui.sample_documents()
    current = f"{st.session_state[ts_ui.DOCUMENT].name}.md"
    choice = st.selectbox(t("testset.sample_document"), docs, index=docs.index(current) if current in docs else 0, key="testset.sample_choice")
    if st.button(t("testset.load_sample"), disabled=not docs):
        _set_document(ts_ui.load_sample_document(choice))
        st.rerun()
with upload:
    uploaded = st.file_uploader(t("testset.upload"), type=["md", "markdown", "txt"], key="testset.upload")
    if uploaded is not None and state.is_new_upload(uploaded, ts_ui.UPLOAD_SEEN):
        try:
            _set_document(ts_ui.load_uploaded_document(uploaded.name, uploaded.getvalue()))
        except DocumentError as exc:
            widgets.show_error(t("testset.unusable", name=uploaded.name), exc)
        else:
            st.rerun()

doc = st.session_state[ts_ui.DOCUMENT]
with st.expander(t("testset.chunking")):
    size_col, overlap_col = st.columns(2)
    chunk_size = size_col.number_input(
        t("testset.chunk_size"), min_value=0, max_value=5000, value=0, step=50, key="testset.chunk_size"
    )
    chunk_overlap = overlap_col.number_input(
        t("testset.chunk_overlap"), min_value=-1, max_value=1000, value=-1, step=10, key="testset.chunk_overlap"
    )
size = int(chunk_size) or None
overlap = None if int(chunk_overlap) < 0 else int(chunk_overlap)
if size is not None and overlap is not None and overlap >= size:
    st.warning(t("testset.overlap_too_big"))
    overlap = None

cols = st.columns([3, 1, 1, 1])
cols[0].metric(t("testset.document"), doc.name)
cols[1].metric(t("testset.language"), doc.language)
cols[2].metric(t("testset.sections"), len(doc.sections))
cols[3].metric(t("testset.chunks"), len(chunk_document(doc, size=size, overlap=overlap)))
st.caption(t("testset.doc_caption", title=widgets.md_escape(doc.title), chars=len(doc.text), hash=widgets.md_code(doc.sha256[:12])))
with st.expander(t("testset.sections")):
    sections = ts_ui.sections_frame(doc, size, overlap)
    widgets.table(sections, hide_index=True, width="stretch")

problems = sidebar.config_problems()
sidebar.show_problems(problems)

# ---- 2. generate ------------------------------------------------------------------------------------
st.subheader(t("testset.generate_heading"))
per_section = st.number_input(t("testset.per_section"), min_value=1, max_value=MAX_PER_SECTION, value=3, key="testset.per_section")
st.markdown(t("testset.types"))
TYPE_LABELS = ts_ui.type_labels()
share_cols = st.columns(len(QUESTION_TYPES))
percents = {
    qt: share_cols[n].number_input(TYPE_LABELS[qt], min_value=0, max_value=100, value=100 if qt == "fact" else 0, step=5,
                                   key=f"testset.share.{qt}")
    for n, qt in enumerate(QUESTION_TYPES)
}
shares = ts_ui.shares_from_percent(percents)
st.caption(t("testset.types_help"))
if shares is None:
    st.warning(t("testset.no_share"))
prompts: dict[str, str | None] = {}
with st.expander(t("testset.gen_prompts", language=widgets.md_escape(doc.language))):
    prompt_tabs = st.tabs([TYPE_LABELS[qt] for qt in QUESTION_TYPES])
    for tab, qtype in zip(prompt_tabs, QUESTION_TYPES):
        with tab:
            name = "synth" if qtype == "fact" else f"synth_{qtype}"
            variables = "`{title}`, `{heading_a}`, `{text_a}`, `{heading_b}`, `{text_b}`, `{n}`" if qtype == "multi_chunk" \
                else "`{title}`, `{heading}`, `{text}`, `{n}`" + (", `{not_found}`" if qtype == "out_of_scope" else "")
            edited = _prompt_editor(name, TASK_OF[qtype], doc.language, variables, 300)
            prompts[qtype] = ts_ui.prompt_override(edited, TASK_OF[qtype], doc.language)
    if sidebar.is_offline():
        st.caption(t("testset.offline_prompt"))
if st.button(t("testset.generate"), type="primary", disabled=bool(problems) or shares is None):
    bar = st.progress(0.0, text=t("testset.generating"))
    try:
        llm = build_llm(sidebar.current_config())
        generated = generate_testset(
            doc,
            llm,
            per_section=int(per_section),
            shares=shares,
            chunks=chunk_document(doc, size=size, overlap=overlap),
            templates=prompts,
            progress=lambda done, total, heading: bar.progress(done / total, text=t(
                "testset.call_progress", done=int(done), total=int(total), heading=widgets.md_escape(heading))),
        )
    except (ProviderError, SynthError) as exc:
        widgets.show_error(t("testset.generate_failed"), exc)
    else:
        _set_testset(generated)
    bar.empty()

testset = st.session_state.get(ts_ui.TESTSET)
if testset is None:
    st.stop()

gen = testset.generator
st.caption(t("testset.generated_by", generator=widgets.md_escape(f"{gen.get('provider')}/{gen.get('model')}"),
              label=t("testset.offline_label") if testset.offline else "", template=widgets.md_code(gen.get("template", "-"))))
failed = [s for s in testset.sections if s.status != "ok"]
if failed:
    st.warning(t("testset.failed_sections", n=len(failed),
                 detail=widgets.md_escape("; ".join(f"{s.heading or s.index}: {s.status} — {core(s.reason)}" for s in failed))), icon="⚠️")
with st.expander(t("testset.report", ok=len(testset.sections) - len(failed), total=len(testset.sections))):
    report = ts_ui.report_frame(testset)
    widgets.table(report, hide_index=True, width="stretch")

BULK_NOTE = "testset.bulk_note"
st.subheader(t("testset.review", n=len(testset.items)))
st.caption(widgets.md_escape(ts_ui.review_summary(testset)))
st.caption(t("testset.review_help"))
notes = ts_ui.flag_notes(testset)
if notes:
    with st.expander(t("testset.why_flagged", n=len(notes))):
        st.markdown("\n".join(f"- {widgets.md_escape(line)}" for line in notes))
status_names = ts_ui.status_labels()
bulk_pick, bulk_accept, bulk_reject = st.columns([2, 1, 1])
bulk_choice = bulk_pick.selectbox(t("testset.bulk"), list(ts_ui.BULK_CHOICES), format_func={c: ts_ui.bulk_label(c) for c in ts_ui.BULK_CHOICES}.get, key="testset.bulk_choice")
for column, label, status in ((bulk_accept, t("testset.accept"), "accepted"), (bulk_reject, t("testset.reject"), "rejected")):
    if column.button(label, key=f"testset.bulk_{status}"):
        updated, n = ts_ui.bulk(testset, bulk_choice, status)
        _set_testset(updated)
        # a toast right before st.rerun() can be lost (streamlit#7740): the note is shown on the next run instead
        st.session_state[BULK_NOTE] = t("testset.bulk_done", n=n, status=status_names[status], choice=ts_ui.bulk_label(bulk_choice))
        st.rerun()
if st.session_state.get(BULK_NOTE):
    st.success(st.session_state.pop(BULK_NOTE))
editor_key = f"testset.editor.{st.session_state.get(ts_ui.EDITOR_VERSION, 0)}"
frame = ts_ui.items_frame(testset)
st.data_editor(
    frame,
    key=editor_key,
    num_rows="dynamic",
    hide_index=True,
    width="stretch",
    disabled=["id", "type", "flags", "twin", "grounding"],
    column_config={
        "id": st.column_config.TextColumn("id", width="small"),
        "type": st.column_config.TextColumn(header("type"), width="small"),
        "status": st.column_config.SelectboxColumn(header("status"), options=list(status_names), format_func=status_names.get,
                                                   width="small"),
        "flags": st.column_config.TextColumn(header("flags"), width="small"),
        "twin": st.column_config.TextColumn(header("twin"), width="small", help=t("testset.twin_help")),
        "section": st.column_config.TextColumn(header("section"), width="small"),
        "question": st.column_config.TextColumn(header("question"), width="large"),
        "ground_truth": st.column_config.TextColumn(header("ground_truth"), width="large"),
        "grounding": st.column_config.NumberColumn(header("grounding"), format="%.2f", help=t("testset.grounding_help")),
    },
)
edits = st.session_state.get(editor_key)
if data.has_edits(edits):
    updated, dropped = ts_ui.apply_item_edits(testset, frame, edits)
    _set_testset(updated)
    if dropped:
        st.toast(t("testset.removed_rows", n=int(dropped)))
    st.rerun()
st.download_button(t("testset.download"), testset.dumps(), file_name=f"{doc.name}-testset.json", mime="application/json")

def _builtin_rag(testset, doc, size, overlap, problems) -> None:
    """The built-in retrieve-and-answer RAG over the document, its outputs and downloads."""
    k_col, heading_col = st.columns(2)
    k = k_col.number_input(t("testset.k"), min_value=1, max_value=10, value=2, key="testset.k")
    with_heading = heading_col.toggle(t("testset.with_heading"), value=True, key="testset.with_heading")
    st.caption(t("testset.embed_help"))
    with st.expander(t("testset.answer_prompt", language=widgets.md_escape(doc.language))):
        rag_prompt = _prompt_editor("rag", "rag_answer", doc.language, "`{question}`, `{contexts}`", 240)
    if st.button(t("testset.run_rag"), type="primary", disabled=bool(problems) or not testset.items):
        bar = st.progress(0.0, text=t("testset.embedding"))
        try:
            config = sidebar.current_config()
            result = run_rag(
                testset.items,
                [doc],
                build_llm(config),
                build_embedder(config),
                k=int(k),
                chunk_size=size,
                chunk_overlap=overlap,
                include_heading=with_heading,
                template=ts_ui.prompt_override(rag_prompt, "rag_answer", doc.language),
                progress=lambda done, total: bar.progress(done / total, text=t("testset.answered", done=int(done), total=int(total))),
            )
        except (ProviderError, RagError) as exc:
            widgets.show_error(t("testset.rag_failed"), exc)
        else:
            st.session_state[ts_ui.RAG_RUN] = result
        bar.empty()

    run = st.session_state.get(ts_ui.RAG_RUN)
    if run is None:
        return

    cols = st.columns(4)
    cols[0].metric(t("testset.answers"), len(run.samples))
    cols[1].metric(t("testset.hit_rate"), "-" if run.hit_rate is None else f"{run.hit_rate:.0%}", help=t("testset.hit_rate_help"))
    cols[2].metric(t("testset.failed_answers"), run.errors)
    cols[3].metric(t("testset.top_k"), run.k)
    st.caption(t("testset.answered_by", model=widgets.md_escape(f"{run.provider}/{run.model}"),
                 offline=t("testset.offline_short") if run.offline else "", embedder=widgets.md_escape(run.embedder),
                 chunks=widgets.md_escape(run.chunks)))
    answers = ts_ui.rag_frame(run)
    widgets.table(answers, hide_index=True, width="stretch")

    use, evaluate, dl_json, dl_csv, dl_all = st.columns(5)
    name = ts_ui.dataset_name(testset)
    if use.button(t("testset.use"), type="primary"):
        ws = ts_ui.to_workset(run, name)
        state.use_dataset(ws)
        st.success(t("testset.loaded", n=len(ws.samples), name=widgets.md_escape(ws.name)))
    if evaluate.button(t("testset.open_evaluate")):
        st.switch_page(nav.EVALUATE.path)
    dl_json.download_button(t("testset.outputs_json"), ts_ui.rag_download(run, "json"), file_name=f"{name}.json", mime="application/json")
    dl_csv.download_button(t("testset.outputs_csv"), ts_ui.rag_download(run, "csv"), file_name=f"{name}.csv", mime="text/csv")
    dl_all.download_button(
        t("testset.everything"), ts_ui.rag_summary_json(testset, run), file_name=f"{name}-all.json", mime="application/json",
        help=t("testset.everything_help"),
    )


# ---- 3. RAG -----------------------------------------------------------------------------------------
st.subheader(t("testset.answer_heading"))
builtin_tab, yours_tab = st.tabs([t("testset.builtin_tab"), t("testset.yours_tab")])
with builtin_tab:
    _builtin_rag(testset, doc, size, overlap, problems)
with yours_tab:
    yr_ui.render(testset.items, str(testset.document.get("name") or "testset"))
