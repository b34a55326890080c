"""Test set: a document → synthetic QA pairs per section → review and edit → a simple RAG (top-k) → dataset."""

from __future__ import annotations

import streamlit as st

from rageval_core.documents import DocumentError, chunk_document
from rageval_core.llm.base import ProviderError
from rageval_core.llm.registry import build_embedder, build_llm
from rageval_core.rag import RagError, run_rag
from rageval_core.synth import MAX_PER_SECTION, QUESTION_TYPES, TASK_OF, SynthError, generate_testset
from ui import data, nav, sidebar, state, widgets
from ui import testset as ts_ui
from ui import your_rag as yr_ui
from ui.i18n import t


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
        f"Template: {placeholders}; `{{{{` `}}}}` for literal braces",
        ts_ui.shipped_prompt(task, language),
        height=height,
        key=f"testset.{name}_prompt.{language}",
    )


st.title(nav.TESTSET.heading)
st.caption(
    "Generate question / ground-truth pairs from a document, section by section (as in the synthetic-QA pipeline article), review them, answer them "
    "with a simple retrieve-and-answer RAG and evaluate the outputs like any dataset. Uses the provider in the sidebar."
)
if sidebar.is_offline():
    st.info(
        "Offline provider: questions are **heuristic** shapes, no language model — facts are extractive (a sentence's key "
        "phrase and the section heading; the sentence is the ground truth), reasoning applies a numeric rule to a case, "
        "multi-chunk asks about two sections at once, out-of-scope asks about aspects the document never mentions. RAG "
        "answers are the best-matching context sentences. Good for trying the pipeline; choose an API provider for real "
        "questions and answers.",
        icon="🧮",
    )

# ---- 1. document ------------------------------------------------------------------------------------
if ts_ui.DOCUMENT not in st.session_state:
    try:
        _set_document(ts_ui.load_sample_document(ts_ui.DEFAULT_DOCUMENT))
    except (OSError, DocumentError) as exc:
        widgets.show_error("Could not read the sample document", exc)
        st.stop()

st.subheader("1. Document")
pick, upload = st.columns(2)
with pick:
    docs = ts_ui.sample_documents()
    current = f"{st.session_state[ts_ui.DOCUMENT].name}.md"
    choice = st.selectbox("Sample document", docs, index=docs.index(current) if current in docs else 0, key="testset.sample_choice")
    if st.button("Load sample document", disabled=not docs):
        _set_document(ts_ui.load_sample_document(choice))
        st.rerun()
with upload:
    uploaded = st.file_uploader("Or upload Markdown or text", type=["md", "markdown", "txt"], key="testset.upload")
    if uploaded is not None and state.is_new_upload(uploaded, ts_ui.UPLOAD_SEEN):
        try:
            _set_document(ts_ui.load_uploaded_document(uploaded.name, uploaded.getvalue()))
        except DocumentError as exc:
            widgets.show_error(f"Could not use {uploaded.name}", exc)
        else:
            st.rerun()

doc = st.session_state[ts_ui.DOCUMENT]
with st.expander("Chunking (sections are cut into chunks for provenance and retrieval)"):
    size_col, overlap_col = st.columns(2)
    chunk_size = size_col.number_input(
        "Chunk size in characters (0 = default: ja 300, en 800)", min_value=0, max_value=5000, value=0, step=50, key="testset.chunk_size"
    )
    chunk_overlap = overlap_col.number_input(
        "Overlap in characters (-1 = default: ja 60, en 150)", min_value=-1, max_value=1000, value=-1, step=10, key="testset.chunk_overlap"
    )
size = int(chunk_size) or None
overlap = None if int(chunk_overlap) < 0 else int(chunk_overlap)
if size is not None and overlap is not None and overlap >= size:
    st.warning("The overlap must be smaller than the chunk size; using the default overlap.")
    overlap = None

cols = st.columns([3, 1, 1, 1])
cols[0].metric("Document", doc.name)
cols[1].metric("Language", doc.language)
cols[2].metric("Sections", len(doc.sections))
cols[3].metric("Chunks", len(chunk_document(doc, size=size, overlap=overlap)))
st.caption(f"Title: {doc.title} · {len(doc.text)} characters · sha256 `{doc.sha256[:12]}`")
with st.expander("Sections"):
    st.dataframe(ts_ui.sections_frame(doc, size, overlap), hide_index=True, width="stretch")

problems = sidebar.config_problems()
sidebar.show_problems(problems)

# ---- 2. generate ------------------------------------------------------------------------------------
st.subheader("2. Generate questions")
per_section = st.number_input("Questions per section", min_value=1, max_value=MAX_PER_SECTION, value=3, key="testset.per_section")
st.markdown("**Question types** (share of all questions, in %)")
TYPE_LABELS = {"fact": "Simple fact", "reasoning": "Reasoning", "multi_chunk": "Multi-chunk", "out_of_scope": "Out of scope"}
share_cols = st.columns(len(QUESTION_TYPES))
percents = {
    t: share_cols[n].number_input(TYPE_LABELS[t], min_value=0, max_value=100, value=100 if t == "fact" else 0, step=5,
                                  key=f"testset.share.{t}")
    for n, t in enumerate(QUESTION_TYPES)
}
shares = ts_ui.shares_from_percent(percents)
st.caption(
    "Simple fact: a lookup in one chunk. Reasoning: one step beyond a lookup (a rule applied to a case). Multi-chunk: "
    "needs two chunks of neighbouring sections, both kept as sources. Out of scope: on the topic but not answered by "
    "the document; the right answer is \"not in the documents\". The total stays questions per section × sections. "
    "Near-identical questions are set aside beside their twin. Generating and judging with the same model can favour "
    "its own wording (the synthetic-QA pipeline article warns of it): a different judge model is the safer check."
)
if shares is None:
    st.warning("Give at least one question type a share above 0.")
prompts: dict[str, str | None] = {}
with st.expander(f"Generation prompts ({doc.language})"):
    prompt_tabs = st.tabs([TYPE_LABELS[t] for t in QUESTION_TYPES])
    for tab, qtype in zip(prompt_tabs, QUESTION_TYPES):
        with tab:
            name = "synth" if qtype == "fact" else f"synth_{qtype}"
            variables = "`{title}`, `{heading_a}`, `{text_a}`, `{heading_b}`, `{text_b}`, `{n}`" if qtype == "multi_chunk" \
                else "`{title}`, `{heading}`, `{text}`, `{n}`" + (", `{not_found}`" if qtype == "out_of_scope" else "")
            edited = _prompt_editor(name, TASK_OF[qtype], doc.language, variables, 300)
            prompts[qtype] = ts_ui.prompt_override(edited, TASK_OF[qtype], doc.language)
    if sidebar.is_offline():
        st.caption("The offline provider ignores the prompt text (its questions are heuristic shapes per type); an edit "
                   "is still checked before anything is sent.")
if st.button("Generate test set", type="primary", disabled=bool(problems) or shares is None):
    bar = st.progress(0.0, text="Generating…")
    try:
        llm = build_llm(sidebar.current_config())
        generated = generate_testset(
            doc,
            llm,
            per_section=int(per_section),
            shares=shares,
            chunks=chunk_document(doc, size=size, overlap=overlap),
            templates=prompts,
            progress=lambda done, total, heading: bar.progress(done / total, text=f"Call {done}/{total}: {heading}"),
        )
    except (ProviderError, SynthError) as exc:
        widgets.show_error("Could not generate the test set", exc)
    else:
        _set_testset(generated)
    bar.empty()

testset = st.session_state.get(ts_ui.TESTSET)
if testset is None:
    st.stop()

gen = testset.generator
label = " — offline heuristic question shapes (no language model)" if testset.offline else ""
st.caption(f"Generated by **{gen.get('provider')}/{gen.get('model')}**{label} · template `{gen.get('template', '-')}`")
failed = [s for s in testset.sections if s.status != "ok"]
if failed:
    st.warning(
        f"{len(failed)} section(s) without questions: "
        + "; ".join(f"{s.heading or s.index}: {s.status} — {s.reason}" for s in failed),
        icon="⚠️",
    )
with st.expander(f"Per-section report ({len(testset.sections) - len(failed)}/{len(testset.sections)} ok)"):
    st.dataframe(ts_ui.report_frame(testset), hide_index=True, width="stretch")

BULK_NOTE = "testset.bulk_note"
st.subheader(f"Review the {len(testset.items)} pairs")
st.caption(ts_ui.review_summary(testset))
st.caption(
    "Flagged pairs come first, and a set-aside near-duplicate sits right under its twin. Change a status "
    "(accepted / edited / rejected), edit questions and ground truths in place (an edit marks the pair edited), delete "
    "rows, or add your own at the bottom. Rejected pairs are kept in the file but never answered or evaluated. The "
    "flags are lexical heuristics for review, not verdicts."
)
notes = ts_ui.flag_notes(testset)
if notes:
    with st.expander(f"Why {len(notes)} pair(s) are flagged"):
        st.markdown("\n".join(f"- {line}" for line in notes))
bulk_pick, bulk_accept, bulk_reject = st.columns([2, 1, 1])
bulk_choice = bulk_pick.selectbox("Bulk: pairs", list(ts_ui.BULK_CHOICES), key="testset.bulk_choice")
for column, label, status in ((bulk_accept, "Accept these", "accepted"), (bulk_reject, "Reject these", "rejected")):
    if column.button(label, key=f"testset.bulk_{status}"):
        updated, n = ts_ui.bulk(testset, bulk_choice, status)
        _set_testset(updated)
        # a toast right before st.rerun() can be lost (streamlit#7740): the note is shown on the next run instead
        st.session_state[BULK_NOTE] = f"{n} pair(s) {status}: {bulk_choice}"
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
        "type": st.column_config.TextColumn("type", width="small"),
        "status": st.column_config.SelectboxColumn("status", options=["accepted", "edited", "rejected"], width="small"),
        "flags": st.column_config.TextColumn("flags", width="small"),
        "twin": st.column_config.TextColumn("twin", width="small", help="The pair a near-duplicate repeats"),
        "section": st.column_config.TextColumn("section", width="small"),
        "question": st.column_config.TextColumn("question", width="large"),
        "ground_truth": st.column_config.TextColumn("ground_truth", width="large"),
        "grounding": st.column_config.NumberColumn(
            "grounding", format="%.2f", help="Share of the ground truth's character trigrams found in its source chunks (1 = copied from them)"
        ),
    },
)
edits = st.session_state.get(editor_key)
if data.has_edits(edits):
    updated, dropped = ts_ui.apply_item_edits(testset, frame, edits)
    _set_testset(updated)
    if dropped:
        st.toast(f"{dropped} row(s) without a question or ground truth were removed")
    st.rerun()
st.download_button("Download test set (JSON)", testset.dumps(), file_name=f"{doc.name}-testset.json", mime="application/json")

def _builtin_rag(testset, doc, size, overlap, problems) -> None:
    """The built-in retrieve-and-answer RAG over the document, its outputs and downloads."""
    k_col, heading_col = st.columns(2)
    k = k_col.number_input("Chunks retrieved per question (k)", min_value=1, max_value=10, value=2, key="testset.k")
    with_heading = heading_col.toggle("Embed each chunk with its section heading", value=True, key="testset.with_heading")
    st.caption("Chunks and questions are embedded with the sidebar provider's embedder; the top-k chunks by cosine are the contexts.")
    with st.expander(f"Answer prompt (rag_answer, {doc.language})"):
        rag_prompt = _prompt_editor("rag", "rag_answer", doc.language, "`{question}`, `{contexts}`", 240)
    if st.button("Run RAG", type="primary", disabled=bool(problems) or not testset.items):
        bar = st.progress(0.0, text="Embedding chunks…")
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
                progress=lambda done, total: bar.progress(done / total, text=f"Answered {done}/{total}"),
            )
        except (ProviderError, RagError) as exc:
            widgets.show_error("Could not run the RAG", exc)
        else:
            st.session_state[ts_ui.RAG_RUN] = result
        bar.empty()

    run = st.session_state.get(ts_ui.RAG_RUN)
    if run is None:
        return

    cols = st.columns(4)
    cols[0].metric("Answers", len(run.samples))
    cols[1].metric("Retrieval hit rate", "-" if run.hit_rate is None else f"{run.hit_rate:.0%}", help="Share of questions whose source section is among the top-k chunks")
    cols[2].metric("Failed answers", run.errors)
    cols[3].metric("Top-k", run.k)
    st.caption(f"Answered by **{run.provider}/{run.model}**{' (offline heuristic)' if run.offline else ''} · embeddings {run.embedder} · {run.chunks} chunks")
    st.dataframe(ts_ui.rag_frame(run), hide_index=True, width="stretch")

    use, evaluate, dl_json, dl_csv, dl_all = st.columns(5)
    name = ts_ui.dataset_name(testset)
    if use.button(t("testset.use"), type="primary"):
        ws = ts_ui.to_workset(run, name)
        state.use_dataset(ws)
        st.success(t("testset.loaded", n=len(ws.samples), name=ws.name))
    if evaluate.button(t("testset.open_evaluate")):
        st.switch_page(nav.EVALUATE.path)
    dl_json.download_button(t("testset.outputs_json"), ts_ui.rag_download(run, "json"), file_name=f"{name}.json", mime="application/json")
    dl_csv.download_button(t("testset.outputs_csv"), ts_ui.rag_download(run, "csv"), file_name=f"{name}.csv", mime="text/csv")
    dl_all.download_button(
        t("testset.everything"), ts_ui.rag_summary_json(testset, run), file_name=f"{name}-all.json", mime="application/json",
        help=t("testset.everything_help"),
    )


# ---- 3. RAG -----------------------------------------------------------------------------------------
st.subheader("3. Answer the questions")
builtin_tab, yours_tab = st.tabs(["Simple RAG (built-in)", "Your RAG"])
with builtin_tab:
    _builtin_rag(testset, doc, size, overlap, problems)
with yours_tab:
    yr_ui.render(testset.items, str(testset.document.get("name") or "testset"))
