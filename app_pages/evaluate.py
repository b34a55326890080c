"""Evaluate: choose rows, decomposed metrics and judges; see the estimate; run with live progress; cancel."""

from __future__ import annotations

import streamlit as st

from rageval_core import runner
from rageval_core.metrics.registry import describe
from rageval_core.repeats import repeat_note
from rageval_core.types import ANSWER_RELEVANCY
from ui import data, evaluation, jobs, nav, sidebar, state, widgets

st.title(nav.EVALUATE.heading)
ws: data.Workset = st.session_state[state.DATASET]
pinned: set[str] = st.session_state[state.PINNED]
config = sidebar.current_config()
st.caption(f"Dataset **{ws.name}** ({len(ws.samples)} valid rows, {ws.language}) · judging with **{sidebar.provider_label()}**")

pinned_rows = [s for s in ws.samples if s.id in pinned]
row_mode = st.radio(
    "Rows",
    ["pinned", "all"],
    format_func=lambda m: f"Pinned rows ({len(pinned_rows)})" if m == "pinned" else f"All valid rows ({len(ws.samples)})",
    horizontal=True,
    key="evaluate.rows",
    index=0 if pinned_rows else 1,
)
samples = pinned_rows if row_mode == "pinned" else list(ws.samples)

left, right = st.columns(2)
with left:
    metric_ids = st.multiselect(
        "Decomposed metrics (RAGAS-style)",
        evaluation.metric_choices(),
        default=evaluation.default_metrics(),
        format_func=widgets.metric_label,
        key="evaluate.metrics",
    )
    for metric_id in metric_ids:
        offline_note = " Offline: no questions can be generated, so the heuristic checks the question's asks " \
            "against the answer (shown on Inspect)." if metric_id == ANSWER_RELEVANCY and sidebar.is_offline() else ""
        st.caption(f"**{widgets.metric_label(metric_id)}** — {describe(metric_id)}{offline_note}")
with right:
    edited_rubric = st.session_state.get(state.RUBRIC)
    choices = evaluation.judge_choices(edited_rubric)
    labels = {c.key: c.label for c in choices}
    judge_keys = st.multiselect(
        "One-call judges (LLM-as-a-judge)",
        list(labels),
        default=["preset:rubric5"] if "preset:rubric5" in labels else [],
        format_func=lambda k: labels.get(k, k),
        key="evaluate.judges",
    )
    with st.expander("Metric options"):
        economy = st.toggle("Economy mode (faithfulness and correctness share one verification call)", key="evaluate.economy")
        n_questions = st.number_input("Answer relevancy: questions generated per answer", 1, 5, 3, key="evaluate.ar_n")
    repeats = int(st.number_input(
        "Repeats", 1, 10, 1, key=state.EVALUATE_REPEATS,
        help="Score every row this many times to measure how much scores move (Trust page, stability). "
             "Repeats bypass the cache and vary the seed; each costs a full run.",
    ))
    if repeats > 1:
        st.caption(repeat_note(config.provider))
options = {"economy": economy, "answer_relevancy_n": int(n_questions)}

problems = sidebar.config_problems()
scorers = []
try:
    scorers = evaluation.build_all(
        metric_ids, judge_keys, options, edited=edited_rubric, edited_template=st.session_state.get(state.TEMPLATE_TEXT)
    )
except Exception as exc:  # noqa: BLE001 - UI boundary: shown as a message
    widgets.show_error("These choices cannot be evaluated", exc)

st.subheader("Estimate before starting")
if samples and scorers:
    est = runner.estimate(samples, scorers, provider=config.provider, model=config.model)
    if repeats > 1:
        st.caption(f"× {repeats} repeats: calls, tokens and cost below are for one repeat.")
    cols = st.columns(4)
    cols[0].metric("LLM calls", est.llm_calls)
    cols[1].metric("Embedding calls", est.embedding_calls)
    cols[2].metric("Tokens in / out", f"{est.input_tokens:,} / {est.output_tokens:,}")
    cols[3].metric("Cost", widgets.fmt_cost(est.cost_usd))
    st.dataframe(widgets.estimate_frame(est), hide_index=True, width="stretch")
    if config.provider == "offline":
        st.caption(
            "Offline: every call is answered locally by the heuristic judge, so nothing is billed and no tokens "
            "are counted; the token columns show the size of the prompts an API provider would receive. Answer "
            "relevancy sends no request offline (no questions can be generated without an LLM)."
        )
else:
    st.info("Pick at least one row and one metric or judge to see the estimate.")

job: jobs.Job | None = st.session_state.get(state.JOB)
running = job is not None and job.running
start = st.button(
    "Start evaluation", type="primary", disabled=running or not samples or not scorers or bool(problems)
)
sidebar.show_problems(problems)
if start:
    st.session_state[state.JOB] = jobs.start(
        samples, scorers, config, dataset_name=ws.name, dataset_hash=ws.content_hash, options=options,
        repeats=repeats,
    )
    st.rerun()


@st.fragment(run_every=0.5)
def live_progress() -> None:
    """Progress of the running job, refreshed twice a second; a full rerun when it ends."""
    current: jobs.Job | None = st.session_state.get(state.JOB)
    if current is None:
        return
    snap = current.snapshot()
    if current.running:
        total = snap.total if snap else current.n_samples * len(current.scorers) * current.repeats
        done = snap.done if snap else 0
        st.progress(done / total if total else 0.0, text=f"Run {current.run_id}: {done} of {total} row × scorer tasks")
        widgets.progress_metrics(snap)
        if st.button("Cancel run", key="evaluate.cancel"):
            current.cancel.set()
            st.toast("Cancelling: calls in flight finish, nothing new starts.")
        return
    if st.session_state.get("evaluate.shown") != current.run_id:
        st.session_state["evaluate.shown"] = current.run_id
        st.rerun(scope="app")


if running:
    live_progress()

job = st.session_state.get(state.JOB)
if job is not None and job.done:
    if job.error:
        widgets.show_error(f"Run {job.run_id} failed: {job.error}")
    elif job.result is not None:
        result = job.result
        note = widgets.unscored_note(result.results)
        (st.success if result.status == "done" and note is None else st.warning)(widgets.run_outcome(result))
        if note is not None:
            (st.error if note[0] == "error" else st.warning)(note[1], icon="⚠️")
        st.session_state[state.SELECTED_RUN] = result.run_id
        st.dataframe(widgets.summary_frame(result.summary), hide_index=True, width="stretch")
        if result.cost:
            st.markdown("**Cost per method** (from the call log)")
            st.dataframe(widgets.cost_frame(result.cost), hide_index=True, width="stretch")
        if st.button("Open in Compare", type="primary"):
            st.switch_page(nav.COMPARE.path)
