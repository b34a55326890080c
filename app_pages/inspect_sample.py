"""Inspect a sample: texts, claims by verdict linked to their context, every metric's evidence, the judge's
scores and reasons, raw prompts and responses, and a 👍 / 👎 human label per criterion."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rageval_core.types import DECOMPOSED, MetricResult
from ui import evidence, inspector, nav, run_picker, runs, state, widgets
from ui import trust as trust_ui

st.title(nav.INSPECT.heading)
store = runs.store()
infos = run_picker.stored_runs_or_stop(store, "No runs yet. Evaluate some rows first; then open any row here.")
run_id = run_picker.pick_run(infos)
view = runs.load(run_id, st.session_state.get(state.DATASET), store)
if view is None or not view.sample_ids():
    st.warning("This run has no results yet.")
    st.stop()

sample_ids = view.sample_ids()
wanted = state.get(state.INSPECT_SAMPLE)


def _row_label(sid: str) -> str:
    sample = view.samples.get(sid)
    category = view.categories.get(sid) or ""
    question = sample.question if sample else ""
    return f"#{sid} {category} {question[:60]}"


position = sample_ids.index(wanted) if wanted in sample_ids else 0
pick, back, forward, label_next = st.columns([8, 1, 1, 3], vertical_alignment="bottom")
if back.button("◀", key="inspect.prev", help="Previous row", disabled=position == 0, width="stretch"):
    st.session_state[state.INSPECT_SAMPLE] = sample_ids[position - 1]
    st.rerun()
if forward.button("▶", key="inspect.next", help="Next row", disabled=position >= len(sample_ids) - 1, width="stretch"):
    st.session_state[state.INSPECT_SAMPLE] = sample_ids[position + 1]
    st.rerun()
if label_next.button("Next row to label", key="inspect.label_next", width="stretch",
                     help="Opens the row where a human label tells most (the Trust page's label-next ranking)."):
    candidate = trust_ui.next_to_label(view, store, trust_ui.label_keep(), skip=wanted)
    if candidate is None:
        st.toast("Every scored row already has a label on each scored criterion.")
    else:
        st.session_state[state.INSPECT_SAMPLE] = candidate.row_id
        st.session_state["inspect.label_hint"] = candidate
        st.rerun()
sample_id = pick.selectbox("Row", sample_ids, index=position, format_func=_row_label)
hint = st.session_state.get("inspect.label_hint")
if hint is not None and hint.row_id == sample_id:
    st.info(f"Suggested for labelling: **{widgets.metric_label(hint.criterion)}** ({hint.reason}). "
            "Give 👍 / 👎 under Human labels below.")
st.session_state[state.INSPECT_SAMPLE] = sample_id
sample = view.samples.get(sample_id)
results = evidence.reading_order(view.results_for(sample_id))
by_key: dict[tuple[str, str], MetricResult] = {(r.metric, r.method): r for r in results}
faith = by_key.get(("faithfulness", DECOMPOSED))
claims = list((faith.details.get("claims") if faith else None) or [])
prefix = f"r{sample_id}"

if sample is None:
    st.warning(
        f"The texts of row {sample_id} are not available: load the dataset this run was made on "
        f"(hash {str(view.info.dataset_hash)[:12]}…) on the Dataset page. Scores and reasons are shown below."
    )
else:
    if view.samples_source and "different version" in view.samples_source:
        st.caption(f"Texts from {view.samples_source}.")
    st.markdown(f"**Question** · {view.categories.get(sample_id) or ''}")
    st.markdown(f"> {sample.question}")
    left, right = st.columns(2)
    with left:
        st.markdown("**Answer** — claims coloured by the decomposed faithfulness verdict")
        st.html(inspector.answer_html(sample.answer, claims, prefix))
        if sample.ground_truth:
            st.markdown("**Ground truth**")
            st.markdown(sample.ground_truth)
    with right:
        st.markdown("**Contexts** — sentences that support a claim are marked")
        st.html(inspector.contexts_html(sample.contexts, claims, prefix))

st.subheader("Scores")
st.dataframe(widgets.results_frame(results, by="method"), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

if faith is not None:
    with st.expander("Faithfulness: claims and verdicts", expanded=True):
        if faith.unscored_reason and not claims:  # e.g. the provider failed: say why, not "no claims"
            st.warning(f"Unscored (`{faith.unscored_reason}`): {faith.reason or 'no reason recorded'}")
        else:
            st.html(inspector.claims_html(claims, prefix))
relevancy = by_key.get(("answer_relevancy", DECOMPOSED))
if relevancy is not None and relevancy.details.get("questions"):
    with st.expander("Answer relevancy: generated questions and their cosine to the question"):
        st.dataframe(pd.DataFrame(relevancy.details["questions"]), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
if relevancy is not None and relevancy.details.get("offline_relevancy"):
    offline_rel = relevancy.details["offline_relevancy"]
    with st.expander("Answer relevancy: the question's asks checked against the answer (offline heuristic)"):
        st.caption(relevancy.details.get("offline_note", "Offline cannot generate questions."))
        st.dataframe(evidence.asks_frame(offline_rel), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
        st.caption(
            f"best answer sentence: {offline_rel.get('best_sentence') or '-'} "
            f"(cosine {widgets.fmt_score(offline_rel.get('cosine'))}); "
            f"noncommittal share {widgets.fmt_score(offline_rel.get('noncommittal_share'))}"
        )
precision = by_key.get(("context_precision", DECOMPOSED))
if precision is not None and precision.details.get("verdicts"):
    with st.expander("Context precision: per-chunk verdicts"):
        st.dataframe(evidence.chunks_frame(precision.details), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
recall = by_key.get(("context_recall", DECOMPOSED))
if recall is not None and recall.details.get("reference_sentences"):
    with st.expander("Context recall: ground-truth sentences attributed to the contexts"):
        st.dataframe(pd.DataFrame(recall.details["reference_sentences"]), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
relevance = by_key.get(("context_relevance", DECOMPOSED))
if relevance is not None and relevance.details.get("extracted_sentences"):
    with st.expander("Context relevance: sentences needed to answer"):
        st.dataframe(pd.DataFrame(relevance.details["extracted_sentences"]), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
correctness = by_key.get(("answer_correctness", DECOMPOSED))
if correctness is not None and any(k in correctness.details for k in ("TP", "FP", "FN")):
    with st.expander("Answer correctness: statements classified TP / FP / FN"):
        st.dataframe(evidence.correctness_frame(correctness.details), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

for judge in view.judges():
    judged = [r for r in results if r.method == judge]
    with st.expander(f"{judge}: score and reason per criterion", expanded=True):
        for r in judged:
            criterion = r.details.get("criterion") or {}
            scale = f" (raw {r.raw_score:g} on {criterion.get('min')}–{criterion.get('max')})" if r.raw_score is not None else ""
            st.markdown(f"**{widgets.metric_label(r.metric)}** {widgets.fmt_score(r.value)}{scale}"
                        + (f" · unscored: `{r.unscored_reason}`" if r.unscored_reason else ""))
            st.caption(r.reason or "")

st.subheader("Human labels")
dataset_hash = view.info.dataset_hash or ""
stored = store.labels(dataset_hash).get(sample_id, {})
criteria = list(dict.fromkeys(r.metric for r in results))
st.caption("👍 = the answer is good on this criterion. Saved at once in the workbench store, keyed by dataset hash, row and criterion.")
label_cols = st.columns(min(4, max(1, len(criteria))))
for i, criterion in enumerate(criteria):
    with label_cols[i % len(label_cols)]:
        st.markdown(widgets.metric_label(criterion))
        current = stored.get(criterion)
        key = f"label.{dataset_hash[:12]}.{sample_id}.{criterion}"
        value = st.feedback("thumbs", key=key, default=None if current is None else int(current))
        if (None if value is None else float(value)) != (None if current is None else float(current)):
            store.set_label(dataset_hash, sample_id, criterion, None if value is None else float(value))
            st.toast(f"Saved {'👍' if value == 1 else '👎' if value == 0 else 'no'} label for {criterion} on row {sample_id}.")

st.subheader("Raw prompts and responses")
calls = runs.calls_for(run_id, sample_id, store)
if not calls:
    st.caption("No calls were logged for this row.")
for n, call in enumerate(calls, 1):
    with st.expander(evidence.call_title(n, call)):
        st.markdown("Prompt")
        st.code(call.prompt or "", language=None, wrap_lines=True)
        st.markdown("Response")
        st.code(call.response or (call.error or ""), language="json" if (call.response or "").lstrip().startswith("{") else None, wrap_lines=True)
