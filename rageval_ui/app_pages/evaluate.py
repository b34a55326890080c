"""Evaluate: choose rows, decomposed metrics and judges; see the estimate; run with live progress; cancel."""

from __future__ import annotations

import streamlit as st

from rageval_core.scoring.metrics.registry import describe
from rageval_core.run.repeats import repeat_note
from rageval_core.core.types import ANSWER_RELEVANCY
from rageval_core.core.errors import RagevalError
from rageval_ui import data, demo, evaluation, jobs, judge_configs, nav, not_kept, sidebar, state, step_edit, token_counts, widgets
from rageval_ui.i18n import core, lang, t

st.title(nav.EVALUATE.heading)
ws: data.Workset = st.session_state[state.DATASET]
pinned: set[str] = st.session_state[state.PINNED]
config = sidebar.current_config()
st.caption(t("evaluate.caption", name=widgets.md_escape(ws.name), n=len(ws.samples), language=widgets.md_escape(ws.language), judge=sidebar.provider_label()))

if sidebar.is_offline() and demo.fits(ws):
    st.info(t("demo.offer"), icon="📼")
demo.offer("evaluate")
pinned_rows = [s for s in ws.samples if s.id in pinned]
# Choices survive a visit to another page (state.restore / state.remember): widgets forget them otherwise.
ROWS, METRICS, JUDGES, ECONOMY, AR_N = "evaluate.rows", "evaluate.metrics", "evaluate.judges", "evaluate.economy", "evaluate.ar_n"
state.restore(ROWS, "pinned" if pinned_rows else "all", ["pinned", "all"])
row_labels = {"pinned": t("evaluate.rows_pinned", n=len(pinned_rows)), "all": t("evaluate.rows_all", n=len(ws.samples))}
row_mode = st.radio(t("evaluate.rows"), ["pinned", "all"], format_func=row_labels.get, horizontal=True, key=ROWS)
samples = pinned_rows if row_mode == "pinned" else list(ws.samples)

left, right = st.columns(2)
with left:
    state.restore(METRICS, evaluation.default_metrics(), evaluation.metric_choices())
    chips = {m: widgets.metric_short(m) for m in evaluation.metric_choices()}  # short: a chip cuts what does not fit
    metric_ids = st.multiselect(t("evaluate.metrics"), evaluation.metric_choices(), format_func=chips.get, key=METRICS,
                                placeholder=t("common.choose"))
    for metric_id in metric_ids:
        offline_note = " " + t("evaluate.offline_relevancy") if metric_id == ANSWER_RELEVANCY and sidebar.is_offline() else ""
        st.caption(f"**{widgets.md_escape(widgets.metric_label(metric_id))}** — {widgets.md_escape(describe(metric_id, lang()))}{offline_note}")
with right:
    edited_rubric = st.session_state.get(state.RUBRIC)
    choices = evaluation.judge_choices(edited_rubric)
    labels = {c.key: c.label for c in choices}
    state.restore(JUDGES, ["preset:rubric5"] if "preset:rubric5" in labels else [], labels)
    judge_keys = st.multiselect(t("evaluate.judges"), list(labels), format_func=labels.get, key=JUDGES,
                                placeholder=t("common.choose"))
    state.restore(ECONOMY, False)
    state.restore(AR_N, 3)
    state.restore(state.EVALUATE_REPEATS, 1)
    with st.expander(t("evaluate.options")):
        economy = st.toggle(t("evaluate.economy"), key=ECONOMY)
        n_questions = st.number_input(t("evaluate.ar_n"), 1, 5, key=AR_N)
    repeats = int(st.number_input(t("evaluate.repeats"), 1, 10, key=state.EVALUATE_REPEATS, help=t("evaluate.repeats_help")))
    state.remember(ROWS, METRICS, JUDGES, ECONOMY, AR_N, state.EVALUATE_REPEATS)
    if repeats > 1:
        st.caption(widgets.md_escape(core(repeat_note(config.provider))))
options = {"economy": economy, "answer_relevancy_n": int(n_questions)}
step_overrides = step_edit.run_options(ws.language)
if step_overrides and metric_ids:
    st.caption(t("evaluate.edited_steps", names=widgets.md_escape(", ".join(sorted(step_overrides)))))

problems = sidebar.config_problems()
scorers = []
try:
    scorers = evaluation.build_all(
        metric_ids, judge_keys, options, edited=edited_rubric, edited_template=st.session_state.get(state.TEMPLATE_TEXT)
    )
except RagevalError as exc:
    widgets.show_error(t("evaluate.cannot"), exc)
try:
    scorers += judge_configs.pick(config, economy=economy)
except RagevalError as exc:
    widgets.show_error(t("evaluate.cannot"), exc)

st.subheader(t("evaluate.estimate"))
if samples and scorers:
    est = token_counts.estimate(config, samples, scorers)
    if repeats > 1:
        st.caption(t("evaluate.per_repeat", n=repeats))
    cols = st.columns(4)
    cols[0].metric(t("evaluate.llm_calls"), est.llm_calls)
    cols[1].metric(t("evaluate.embedding_calls"), est.embedding_calls)
    cols[2].metric(t("evaluate.tokens"), widgets.fmt_tokens(est.input_tokens, est.output_tokens))
    cols[3].metric(t("evaluate.cost"), widgets.fmt_cost(est.cost_usd))
    token_counts.note(config, samples, scorers, est, usable=not problems)
    cache_note = widgets.prompt_cache_note(est)
    if cache_note:
        st.caption(cache_note)
    widgets.table(widgets.estimate_frame(est), hide_index=True, width="stretch")
    if config.provider == "offline":
        st.caption(t("evaluate.offline_estimate"))
else:
    st.info(t("evaluate.pick"))

job: jobs.Job | None = st.session_state.get(state.JOB)
running = job is not None and job.running
start = st.button(
    t("evaluate.start"), type="primary", disabled=running or not samples or not scorers or bool(problems)
)
sidebar.show_problems(problems)
if start:
    st.session_state[state.JOB] = jobs.start(jobs.evaluation_spec(
        samples, scorers, config, dataset_name=ws.name, dataset_hash=ws.content_hash,
        options={**options, "templates": step_overrides} if step_overrides else options,
        repeats=repeats,
    ))
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
        st.progress(done / total if total else 0.0, text=t("evaluate.progress", run=widgets.md_escape(current.run_id), done=int(done),
                                                                         total=int(total)))
        widgets.progress_metrics(snap)
        if st.button(t("evaluate.cancel"), key="evaluate.cancel"):
            current.cancel.set()
            st.toast(t("evaluate.cancelling"))
        return
    if st.session_state.get("evaluate.shown") != current.run_id:
        st.session_state["evaluate.shown"] = current.run_id
        st.rerun(scope="app")


if running:
    live_progress()

job = st.session_state.get(state.JOB)
if job is not None and job.done:
    if job.error:
        widgets.show_error(t("evaluate.failed", run=job.run_id, error=job.error))
    elif job.result is not None:
        result = job.result
        note = widgets.unscored_note(result.results)
        if not result.kept_whole:  # never a success: what was lost, where it is kept, how to finish
            st.error(widgets.run_outcome(result), icon="🛑")
            not_kept.show(result, job)
        else:
            (st.success if result.status == "done" and note is None else st.warning)(widgets.run_outcome(result))
        if note is not None:
            (st.error if note[0] == "error" else st.warning)(widgets.md_escape(note[1]), icon="⚠️")
        st.session_state[state.SELECTED_RUN] = result.run_id
        widgets.table(widgets.summary_frame(result.summary), hide_index=True, width="stretch")
        if result.cost:
            st.markdown(t("evaluate.cost_per_method"))
            widgets.table(widgets.cost_frame(result.cost), hide_index=True, width="stretch")
        if st.button(t("common.open_compare"), type="primary"):
            st.switch_page(nav.COMPARE.path)
