"""Compare: decomposed metrics next to the one-call judge — per category, per row, agreement, run A vs run B."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from rageval_core import compare
from rageval_core.types import DECOMPOSED
from ui import nav, runs, state, widgets

st.title("📊 Compare")
store = runs.store()
infos = store.list_runs()
if not infos:
    st.info("No runs yet. Start one on the Evaluate page.")
    if st.button("Go to Evaluate"):
        st.switch_page(nav.EVALUATE.path)
    st.stop()

ids = [i.id for i in infos]
labels = {i.id: runs.run_label(i) for i in infos}
selected = state.get(state.SELECTED_RUN)
run_id = st.selectbox("Run", ids, index=ids.index(selected) if selected in ids else 0, format_func=labels.get)
st.session_state[state.SELECTED_RUN] = run_id
view = runs.load(run_id, st.session_state.get(state.DATASET), store)
if view is None or view.frame.empty:
    st.warning("This run has no results yet (it may still be running or was cancelled before any row finished).")
    st.stop()

cost = compare.cost_table(store.calls(run_id))
cols = st.columns(4)
cols[0].metric("Provider · model", f"{view.info.provider} · {view.info.model}")
cols[1].metric("Rows", len(view.sample_ids()))
cols[2].metric("Calls (cache hits)", f"{int(cost['calls'].sum())} ({int(cost['cached_calls'].sum())})" if not cost.empty else "0")
cols[3].metric("Cost", widgets.fmt_cost(float(cost["cost_usd"].sum()) if not cost.empty else 0.0))
if view.info.provider == "offline":
    st.caption("Offline run: both methods come from the deterministic heuristic judge (it ignores prompt text).")

judges = view.judges()
judge = st.selectbox("Judge to compare with the decomposed metrics", judges) if len(judges) > 1 else (judges[0] if judges else None)

st.subheader("Per category (seed 000 layout)")
st.caption("Mean over scored rows of each category; \"-\" when no row of the category was scored.")
for method in view.methods():
    table = view.category_table(method)
    table.columns = [widgets.metric_label(c) for c in table.columns]
    st.markdown(f"**{'Decomposed (RAGAS-style)' if method == DECOMPOSED else method}**")
    st.table(widgets.score_table(table))

if judge and DECOMPOSED in view.methods():
    shared = compare.shared_criteria(view.frame, DECOMPOSED, judge)
    with st.expander("Criterion by criterion: decomposed vs judge per category", expanded=False):
        for criterion in shared:
            st.markdown(f"**{widgets.metric_label(criterion)}**")
            side = compare.category_comparison(view.frame, criterion, [DECOMPOSED, judge])
            side = side.reindex([c for c in view.category_order() if c in side.index])
            st.table(widgets.score_table(side))

st.subheader("Category × criterion × method")
bars = runs.chart_frame(view.frame)
if not bars.empty:
    criterion_order = [widgets.metric_label(c) for c in dict.fromkeys(bars["criterion"])]
    bars["criterion"] = bars["criterion"].map(widgets.metric_label)
    category_order = view.category_order()
    chart = (
        alt.Chart(bars)
        .mark_bar()
        .encode(
            x=alt.X("category:N", sort=category_order, title=None, axis=alt.Axis(labelAngle=-40, labelOverlap=False, labelLimit=120)),
            xOffset=alt.XOffset("method:N"),
            y=alt.Y("mean:Q", scale=alt.Scale(domain=[0, 1]), title="mean score"),
            color=alt.Color("method:N", title="method"),
            tooltip=["category", "criterion", "method", alt.Tooltip("mean:Q", format=".3f")],
        )
        .properties(width=175, height=220)
        .facet(column=alt.Column("criterion:N", title=None, sort=criterion_order))
        .configure_legend(orient="bottom")
    )
    st.altair_chart(chart)

if judge and DECOMPOSED in view.methods():
    st.subheader(f"Decomposed vs {judge}, row by row")
    points = runs.scatter_frame(view.frame, judge)
    if not points.empty:
        diagonal = alt.Chart(pd.DataFrame({"decomposed": [0.0, 1.0], "judge": [0.0, 1.0]})).mark_line(
            strokeDash=[4, 4], color="gray"
        ).encode(x="decomposed:Q", y="judge:Q")
        charts = []
        for criterion in compare.shared_criteria(view.frame, DECOMPOSED, judge):
            sub = points[points["criterion"] == criterion]
            dots = alt.Chart(sub).mark_circle(size=90, opacity=0.8).encode(
                x=alt.X("decomposed:Q", scale=alt.Scale(domain=[0, 1])),
                y=alt.Y("judge:Q", scale=alt.Scale(domain=[0, 1])),
                color=alt.Color("category:N"),
                tooltip=["sample_id", "category", alt.Tooltip("decomposed:Q", format=".3f"), alt.Tooltip("judge:Q", format=".3f")],
            )
            charts.append(alt.layer(diagonal, dots).properties(width=165, height=165, title=widgets.metric_label(criterion)))
        st.altair_chart(alt.concat(*charts, columns=4).configure_legend(orient="bottom"))
    stats = compare.agreement(view.frame, DECOMPOSED, judge)
    stats["criterion"] = stats["criterion"].map(widgets.metric_label)
    st.markdown("**Agreement** (rows scored by both; kappa with both sides split at 0.5)")
    st.dataframe(stats.style.format({c: widgets.fmt_score for c in ("pearson", "spearman", "mad", "kappa", "threshold")}), hide_index=True, width="stretch")

    st.subheader("Rows where the methods disagree most")
    worst = compare.disagreements(view.frame, DECOMPOSED, judge, top=8)
    if worst.empty:
        st.info("No row was scored by both methods.")
    for i, row in worst.iterrows():
        sample = view.samples.get(row["sample_id"])
        question = (sample.question[:70] + "…") if sample and len(sample.question) > 70 else (sample.question if sample else "")
        left, right = st.columns([5, 1])
        left.markdown(
            f"**#{row['sample_id']}** {row['category'] or ''} · {widgets.metric_label(row['criterion'])}: "
            f"decomposed {widgets.fmt_score(row['value_a'])} vs judge {widgets.fmt_score(row['value_b'])} "
            f"(|Δ| {row['abs_diff']:.3f})  \n{question}"
        )
        if right.button(f"Inspect #{row['sample_id']}", key=f"compare.inspect.{i}"):
            st.session_state[state.INSPECT_SAMPLE] = row["sample_id"]
            st.switch_page(nav.INSPECT.path)

st.subheader("Per row")
wide = compare.side_by_side(view.frame, judge) if judge else view.frame.pivot_table(
    index="sample_id", columns="metric", values="value", aggfunc="mean"
).reset_index()
st.dataframe(widgets.score_table(wide), hide_index=True, width="stretch")

st.subheader("Run A vs run B")
others = [i for i in ids if i != run_id]
if not others:
    st.caption("Only one run so far: evaluate again (another provider, an edited rubric) to see what changed.")
else:
    other = st.selectbox("Compare with run B", others, format_func=labels.get, key="compare.run_b")
    view_b = runs.load(other, st.session_state.get(state.DATASET), store)
    if view_b is not None and not view_b.frame.empty:
        summary = compare.summary_delta(view.frame, view_b.frame)
        summary["metric"] = summary["metric"].map(widgets.metric_label)
        st.dataframe(summary.style.format({c: widgets.fmt_score for c in ("mean_a", "mean_b", "delta")}), hide_index=True, width="stretch")
        changed = compare.run_delta(view.frame, view_b.frame, changed_only=True)
        st.caption(f"{len(changed)} (row, criterion, method) results changed between A ({run_id}) and B ({other}).")
        if not changed.empty:
            st.dataframe(
                changed[["sample_id", "category", "metric", "method", "value_a", "value_b", "delta", "unscored_reason_a", "unscored_reason_b"]]
                .style.format({c: widgets.fmt_score for c in ("value_a", "value_b", "delta")}),
                hide_index=True,
                width="stretch",
            )
