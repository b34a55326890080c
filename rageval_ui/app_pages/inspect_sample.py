"""Inspect a sample: texts, claims by verdict linked to their context, every metric's evidence, the judge's
scores and reasons, raw prompts and responses, and a 👍 / 👎 human label per criterion."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rageval_core.analysis.row_filter import next_unlabelled
from rageval_core.core.types import DECOMPOSED, MetricResult
from rageval_ui import data, evidence, filters, inspector, labels, nav, phoenix, run_picker, runs, state, widgets
from rageval_ui import annotators as annotators_ui
from rageval_ui import trust as trust_ui
from rageval_ui.i18n import core, t

st.title(nav.INSPECT.heading)
store = runs.store()
infos = run_picker.stored_runs_or_stop(store, t("inspect.no_runs"))
run_id = run_picker.pick_run(infos)
full = runs.load(run_id, st.session_state.get(state.DATASET), store)
if full is None or not full.sample_ids():
    st.warning(t("inspect.no_results"))
    st.stop()

judges = full.judges()
filter_judge = state.get("compare.judge") if state.get("compare.judge") in judges else (judges[0] if judges else None)
row_filter = filters.render(full, filter_judge)
view, total = filters.apply(full, row_filter, filter_judge, store)
if row_filter.active():
    st.info(t("compare.filtered", n=len(view.sample_ids()), total=int(total)), icon="🔎")
if not view.sample_ids():
    st.warning(t("compare.nothing_matches"))
    st.stop()
widgets.offline_banner_of(full.frame)
if (note := runs.rows_note(full.samples_source)) is not None:  # a run stored before runs kept their rows
    st.caption(widgets.md_escape(note))

sample_ids = view.sample_ids()
wanted = state.get(state.INSPECT_SAMPLE)


def _row_label(sid: str) -> str:
    sample = view.samples.get(sid)
    category = view.categories.get(sid) or ""
    question = sample.question if sample else ""
    return f"#{sid} {category} {widgets.shorten(question, 60)}"


def _next_unlabelled(after: str | None) -> str | None:
    """The next row of the list (after ``after``, wrapping round) missing a 👍 / 👎 on one of its criteria."""
    criteria = view.cached("criteria_by_row", lambda: {
        str(sid): list(ms) for sid, ms in view.frame.groupby("sample_id", sort=False)["metric"].unique().items()})
    shown = labels.shown_labels(store, view.info.dataset_hash or "", annotators_ui.annotator_name())
    return next_unlabelled(sample_ids, after, criteria, shown)


position = sample_ids.index(wanted) if wanted in sample_ids else 0
pick, back, forward, unlabelled, label_next = st.columns([7, 1, 1, 3, 3], vertical_alignment="bottom")
if unlabelled.button(t("inspect.next_unlabelled"), key="inspect.next_unlabelled", width="stretch",
                     shortcut=labels.NEXT_KEY, help=t("inspect.next_unlabelled_help")):
    following = _next_unlabelled(wanted)
    if following is None:
        st.toast(t("inspect.all_labelled"))
    else:
        st.session_state[state.INSPECT_SAMPLE] = following
        st.rerun()
if back.button("◀", key="inspect.prev", help=t("inspect.prev"), disabled=position == 0, width="stretch"):
    st.session_state[state.INSPECT_SAMPLE] = sample_ids[position - 1]
    st.rerun()
if forward.button("▶", key="inspect.next", help=t("inspect.next"), disabled=position >= len(sample_ids) - 1, width="stretch"):
    st.session_state[state.INSPECT_SAMPLE] = sample_ids[position + 1]
    st.rerun()
if label_next.button(t("inspect.label_next"), key="inspect.label_next", width="stretch", help=t("inspect.label_next_help")):
    candidate = trust_ui.next_to_label(view, store, trust_ui.label_keep(), skip=wanted)
    if candidate is None:
        st.toast(t("inspect.all_labelled"))
    else:
        st.session_state[state.INSPECT_SAMPLE] = candidate.row_id
        st.session_state["inspect.label_hint"] = candidate
        st.rerun()
sample_id = pick.selectbox(t("inspect.row"), sample_ids, index=position, format_func={sid: _row_label(sid) for sid in sample_ids}.get)
hint = st.session_state.get("inspect.label_hint")
if hint is not None and hint.row_id == sample_id:
    st.info(t("inspect.suggested", criterion=widgets.md_escape(widgets.metric_label(hint.criterion)), reason=widgets.md_escape(core(hint.reason))))
st.session_state[state.INSPECT_SAMPLE] = sample_id
sample = view.samples.get(sample_id)
results = evidence.reading_order(view.results_for(sample_id))
by_key: dict[tuple[str, str], MetricResult] = {(r.metric, r.method): r for r in results}
faith = by_key.get(("faithfulness", DECOMPOSED))
claims = list((faith.details.get("claims") if faith else None) or [])
prefix = inspector.anchor_prefix(sample_id)

if sample is None:
    st.warning(t("inspect.no_texts", row=widgets.md_escape(sample_id), hash=widgets.md_escape(str(view.info.dataset_hash)[:12])))
else:
    if view.samples_source and "different version" in view.samples_source:
        st.caption(t("inspect.texts_from", source=widgets.md_escape(view.samples_source)))
    category = view.categories.get(sample_id)
    st.markdown(f"**{t('inspect.question')}**" + (f" · {widgets.md_escape(category)}" if category else ""))
    st.markdown(f"> {widgets.md_escape(sample.question)}")
    trace = data.trace_caption(sample.metadata, phoenix.link_template())
    if trace:
        st.caption(trace)
    left, right = st.columns(2)
    with left:
        st.markdown(t("inspect.answer"))
        st.html(inspector.answer_html(sample.answer, claims, prefix))
        if sample.ground_truth:
            st.markdown(f"**{t('inspect.ground_truth')}**")
            st.markdown(widgets.md_escape(sample.ground_truth))
    with right:
        st.markdown(t("inspect.contexts"))
        st.html(inspector.contexts_html(sample.contexts, claims, prefix))

st.subheader(t("inspect.scores"))
widgets.table(widgets.results_frame(results, by="method"), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

if faith is not None:
    with st.expander(t("inspect.claims"), expanded=True):
        if faith.unscored_reason and not claims:  # e.g. the provider failed: say why, not "no claims"
            st.warning(t("inspect.unscored", why=widgets.md_code(widgets.unscored_label(faith.unscored_reason)), reason=widgets.md_escape(core(faith.reason)) or t("inspect.no_reason")))
        else:
            st.html(inspector.claims_html(claims, prefix))
relevancy = by_key.get(("answer_relevancy", DECOMPOSED))
if relevancy is not None and relevancy.details.get("questions"):
    with st.expander(t("inspect.generated")):
        widgets.table(pd.DataFrame(relevancy.details["questions"]), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
if relevancy is not None and relevancy.details.get("offline_relevancy"):
    offline_rel = relevancy.details["offline_relevancy"]
    with st.expander(t("inspect.asks")):
        st.caption(t("inspect.offline_asks") if relevancy.details.get("offline_note") else t("inspect.offline_no_questions"))
        widgets.table(evidence.asks_frame(offline_rel), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
        st.caption(t("inspect.best_sentence", sentence=widgets.md_escape(offline_rel.get("best_sentence") or "-"),
                     cosine=widgets.fmt_score(offline_rel.get("cosine")),
                     share=widgets.fmt_score(offline_rel.get("noncommittal_share"))))
precision = by_key.get(("context_precision", DECOMPOSED))
if precision is not None and precision.details.get("verdicts"):
    with st.expander(t("inspect.chunks")):
        widgets.table(evidence.chunks_frame(precision.details), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
recall = by_key.get(("context_recall", DECOMPOSED))
if recall is not None and recall.details.get("reference_sentences"):
    with st.expander(t("inspect.recall")):
        widgets.table(pd.DataFrame(recall.details["reference_sentences"]), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
relevance = by_key.get(("context_relevance", DECOMPOSED))
if relevance is not None and relevance.details.get("extracted_sentences"):
    with st.expander(t("inspect.relevance")):
        widgets.table(pd.DataFrame(relevance.details["extracted_sentences"]), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
correctness = by_key.get(("answer_correctness", DECOMPOSED))
if correctness is not None and any(k in correctness.details for k in ("TP", "FP", "FN")):
    with st.expander(t("inspect.correctness")):
        widgets.table(evidence.correctness_frame(correctness.details), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

for judge in view.judges():
    judged = [r for r in results if r.method == judge]
    with st.expander(t("inspect.judge", judge=widgets.md_escape(judge)), expanded=True):
        for r in judged:
            criterion = r.details.get("criterion") or {}
            scale = t("inspect.raw", raw=f"{r.raw_score:g}", lo=widgets.md_escape(criterion.get("min")),
                      hi=widgets.md_escape(criterion.get("max"))) if r.raw_score is not None else ""
            st.markdown(f"**{widgets.md_escape(widgets.metric_label(r.metric))}** {widgets.fmt_score(r.value)}{scale}"
                        + (f" · {t('inspect.unscored_short')}: {widgets.md_code(r.unscored_reason)}" if r.unscored_reason else "")
                        + f" · {widgets.md_code(widgets.source_tag(r))}")
            st.caption(widgets.md_escape(r.reason or ""))

st.subheader(t("inspect.labels"))
criteria = list(dict.fromkeys(r.metric for r in results))
annotator = annotators_ui.ask_name()
labels.render_row(store, view.info.dataset_hash or "", sample_id, criteria, annotator,
                  then=lambda: _next_unlabelled(sample_id))
labels.render_bulk(store, view.info.dataset_hash or "", sample_ids, criteria, _row_label, annotator)

st.subheader(t("inspect.raw_calls"))
calls = runs.calls_for(run_id, sample_id, store)
if not calls:
    st.caption(t("inspect.no_calls"))
for n, call in enumerate(calls, 1):
    with st.expander(widgets.md_escape(evidence.call_title(n, call))):
        st.markdown(t("inspect.prompt"))
        st.code(call.prompt or "", language=None, wrap_lines=True)
        st.markdown(t("inspect.response"))
        st.code(call.response or (call.error or ""), language="json" if (call.response or "").lstrip().startswith("{") else None, wrap_lines=True)
