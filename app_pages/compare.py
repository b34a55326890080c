"""Compare: decomposed metrics next to the one-call judge — per category, per row, agreement, run A vs run B."""

from __future__ import annotations

import streamlit as st

from rageval_core import compare, run_summary
from rageval_core.types import DECOMPOSED
from ui import charts, judges_view, nav, report_button, run_picker, runs, state, widgets

st.title(nav.COMPARE.heading)
store = runs.store()
infos = run_picker.stored_runs_or_stop(store, "No runs yet. Start one on the Evaluate page.", offer_evaluate=True)
run_id = run_picker.pick_run(infos)
view = runs.load(run_id, st.session_state.get(state.DATASET), store)
if view is None or view.frame.empty:
    st.warning("This run has no results yet (it may still be running or was cancelled before any row finished).")
    st.stop()

cost = compare.cost_frame(run_summary.method_costs(store, run_id))
st.caption(
    f"Judged by **{view.info.provider} · {view.info.model}** on dataset **{view.info.dataset_name or '?'}** "
    f"(hash `{str(view.info.dataset_hash or '')[:12]}`)"
    + (" · offline run: both methods come from the deterministic heuristic judge (it ignores prompt text)."
       if view.info.provider == "offline" else "")
)
cols = st.columns(4)
cols[0].metric("Rows", len(view.sample_ids()))
cols[1].metric("Methods", len(view.methods()), help=", ".join(view.methods()))
cols[2].metric("Calls (cache hits)", f"{int(cost['calls'].sum())} ({int(cost['cached_calls'].sum())})" if not cost.empty else "0")
cols[3].metric("Cost", widgets.fmt_cost(float(cost["cost_usd"].sum()) if not cost.empty else 0.0))
if view.info.status != "done":
    st.warning(f"This run is {view.info.status}: the tables cover the {len(view.sample_ids())} rows that finished.")

judges = view.judges()
judge = st.selectbox("Judge to compare with the decomposed metrics", judges) if len(judges) > 1 else (judges[0] if judges else None)

st.subheader("Per category (the source article's RAGAS vs judge layout)")
st.caption("Mean over scored rows of each category; \"-\" when no row of the category was scored.")
for method in view.methods():
    table = view.category_table(method)
    table.columns = [widgets.metric_label(c) for c in table.columns]
    st.markdown(f"**{'Decomposed (RAGAS-style)' if method == DECOMPOSED else method}**")
    st.table(widgets.score_table(table, markdown=True))

if judge and DECOMPOSED in view.methods():
    shared = compare.shared_criteria(view.frame, DECOMPOSED, judge)
    with st.expander("Criterion by criterion: decomposed vs judge per category", expanded=False):
        for criterion in shared:
            st.markdown(f"**{widgets.metric_label(criterion)}**")
            side = compare.category_comparison(view.frame, criterion, [DECOMPOSED, judge])
            side = side.reindex([c for c in view.category_order() if c in side.index])
            st.table(widgets.score_table(side, markdown=True))

st.subheader("Category × criterion × method")
bars = runs.chart_frame(view.frame)
if bars.empty:
    st.info("No category has a scored row yet.")
else:
    criterion_order = [widgets.metric_label(c) for c in dict.fromkeys(bars["criterion"])]
    bars["criterion"] = bars["criterion"].map(widgets.metric_label)
    st.altair_chart(charts.grouped_bars(bars, view.category_order(), criterion_order))

if judge and DECOMPOSED in view.methods():
    st.subheader(f"Decomposed vs {judge}, row by row")
    points = runs.scatter_frame(view.frame, judge)
    if not points.empty:
        criteria = [(c, widgets.metric_label(c)) for c in compare.shared_criteria(view.frame, DECOMPOSED, judge)]
        st.altair_chart(charts.agreement_scatter(points, criteria))
    stats = compare.agreement(view.frame, DECOMPOSED, judge)
    stats["criterion"] = stats["criterion"].map(widgets.metric_label)
    st.markdown("**Agreement** (rows scored by both; kappa with both sides split at 0.5)")
    st.dataframe(
        stats.style.format({c: widgets.fmt_score for c in ("pearson", "spearman", "mad", "kappa", "threshold")}),
        hide_index=True, width="stretch", placeholder=widgets.UNSCORED,
    )

    st.subheader("Rows where the methods disagree most")
    worst = compare.disagreements(view.frame, DECOMPOSED, judge, top=8)
    if worst.empty:
        st.info("No row was scored by both methods.")
    for i, row in worst.iterrows():
        left, right = st.columns([5, 1])
        left.markdown(
            f"**#{row['sample_id']}** {row['category'] or ''} · {widgets.metric_label(row['criterion'])}: "
            f"decomposed {widgets.fmt_score(row['value_a'])} vs judge {widgets.fmt_score(row['value_b'])} "
            f"(|Δ| {row['abs_diff']:.3f})  \n{view.question_snippet(row['sample_id'], 70)}"
        )
        if right.button(f"Inspect #{row['sample_id']}", key=f"compare.inspect.{i}"):
            st.session_state[state.INSPECT_SAMPLE] = row["sample_id"]
            st.switch_page(nav.INSPECT.path)

st.subheader("Per row")
st.dataframe(widgets.score_table(widgets.readable_columns(view.per_row(judge))), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

if len(view.judges()) >= 2:
    judges_view.show(view, store)
report_button.show(view, store)

st.subheader("Run A vs run B")
others = [i for i in infos if i.id != run_id]
if not others:
    st.caption("Only one run so far: evaluate again (another provider, an edited rubric) to see what changed.")
else:
    choices = run_summary.run_b_choices(infos, view.info)
    if st.session_state.get("compare.run_b_for", run_id) != run_id or st.session_state.get("compare.run_b") not in choices:
        st.session_state["compare.run_b"] = choices[0]  # run A changed: B starts on A's latest sibling again
    st.session_state["compare.run_b_for"] = run_id
    other = st.selectbox(
        "Compare with run B",
        choices,
        format_func=run_picker.run_labels(infos).get,
        key="compare.run_b",
        help="The latest other run on the same dataset version first, then other versions of it, then the rest.",
    )
    view_b = runs.load(other, st.session_state.get(state.DATASET), store)
    if view_b is None or view_b.frame.empty:
        st.info("Run B has no results yet.")
    else:
        diff = runs.cached_diff(view, view_b)
        st.caption(runs.diff_note(diff))
        summary = diff.summary.assign(metric=diff.summary["metric"].map(widgets.metric_label))  # the diff is cached
        st.dataframe(
            summary.style.format({c: widgets.fmt_score for c in ("mean_a", "mean_b", "delta")}),
            hide_index=True, width="stretch", placeholder=widgets.UNSCORED,
        )
        with st.expander(f"What differs between the runs' set-ups ({len(diff.differences)})"):
            if diff.differences:
                st.dataframe(runs.differences_frame(diff.differences), hide_index=True, width="stretch")
            else:
                st.caption("Same provider, model, settings and prompt versions.")
        changed = diff.changed
        st.caption(f"{len(changed)} (row, criterion, method) results changed between A ({run_id}) and B ({other}).")
        if not changed.empty:
            changed = changed.assign(metric=changed["metric"].map(widgets.metric_label))
            st.dataframe(
                changed[["sample_id", "category", "metric", "method", "method_b", "value_a", "value_b", "delta",
                         "present", "unscored_reason_a", "unscored_reason_b"]]
                .style.format({c: widgets.fmt_score for c in ("value_a", "value_b", "delta")}),
                hide_index=True,
                width="stretch",
                placeholder=widgets.UNSCORED,
            )
