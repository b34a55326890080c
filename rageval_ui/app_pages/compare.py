"""Compare: decomposed metrics next to the one-call judge — per category, per row, agreement, run A vs run B.

The sections are tabs that run only when open: a first open reads the run and draws the per-category layout,
not also every row's table, the run B diff and the report's ranking (on a 1,000-row run most of the work)."""

from __future__ import annotations

import streamlit as st

from rageval_core.analysis import compare
from rageval_core.views import run_summary
from rageval_core.analysis.report import svg
from rageval_core.store.runs import RunInfo, Store
from rageval_core.core.types import DECOMPOSED
from rageval_ui import charts, demo, filters, html_table, judges_view, leaderboard, nav, phoenix, report_button, run_picker, runs, state, theirs_view, trust_compare, widgets
from rageval_ui.i18n import lang, t

INSPECT_PICK, GO_INSPECT = "compare.inspect_pick", "compare.go_inspect"


def _open_picked() -> None:
    """A picked row goes to Inspect; the picker is cleared so that coming back to Compare does not leave again."""
    picked = st.session_state.get(INSPECT_PICK)
    if picked:
        st.session_state[state.INSPECT_SAMPLE] = picked
        st.session_state[INSPECT_PICK] = None
        st.session_state[GO_INSPECT] = True


def per_category(view: runs.RunView, judge: str | None) -> None:
    """The source article's layout: a table per method, criterion by criterion side by side, grouped bars.
    Tables and bars are two HTML blocks (``rageval_ui.html_table``, SVG images): the page's first open in a browser
    then loads no table, Markdown-with-HTML or chart library, and lays out two elements, not a cell each."""
    st.subheader(t("compare.per_category"))
    st.caption(t("compare.per_category_help"))
    tables = {m: view.category_table(m) for m in view.methods()}
    st.html("".join(html_table.score_table(table, index_label=t("chart.category"), column_label=widgets.metric_label,
                                           caption=_method_name(method)) for method, table in tables.items()))
    if judge and DECOMPOSED in view.methods() and judge in view.methods():
        # Built only while open (a collapsed expander's content is still computed and sent unless it tracks its state).
        with st.expander(t("compare.criterion_by_criterion"), key="compare.by_criterion", on_change="rerun") as box:
            for criterion in compare.shared_criteria(view.frame, DECOMPOSED, judge) if box.open else ():
                st.markdown(f"**{widgets.md_escape(widgets.metric_label(criterion))}**")
                side = view.cached(f"side:{criterion}:{judge}", lambda c=criterion: runs.category_comparison(view, c, judge))
                st.table(widgets.score_table(side, markdown=True))
    st.subheader(t("compare.bars"))
    if all(table.isna().all(axis=None) for table in tables.values()):
        st.info(t("compare.no_category_scored"))
    else:  # SVG as images: st.html drops inline SVG, and Markdown with raw HTML is parsed by a large script
        text = "#fafafa" if st.context.theme.type == "dark" else "#31333f"
        st.html(view.cached(f"bars:{lang()}:{text}", lambda: svg.category_charts(
            tables, view.category_order(), criterion_label=widgets.metric_label, method_label=_method_name,
            label_width=150, bar_width=200, images=text)))


def _method_name(method: str) -> str:
    return t("compare.decomposed") if method == DECOMPOSED else method


def row_by_row(view: runs.RunView, judge: str | None) -> None:
    """Decomposed vs the judge on each row: scatter, agreement, the rows they disagree on most, every row."""
    if judge and DECOMPOSED in view.methods() and judge in view.methods():
        st.subheader(t("compare.row_by_row", judge=widgets.md_escape(judge)))
        if view.cached(f"heuristic:{judge}", lambda: compare.heuristic_only(view.frame, DECOMPOSED, judge)):
            st.warning(t("compare.heuristic_only"), icon="🧮")
            demo.offer("compare")
        points = view.cached(f"scatter:{judge}", lambda: runs.scatter_frame(view.frame, judge, view.side_by_side(judge)))
        if not points.empty:
            criteria = [(c, widgets.metric_label(c)) for c in compare.shared_criteria(view.frame, DECOMPOSED, judge)]
            charts.draw(charts.agreement_scatter(points, criteria))
        stats = view.cached(f"agreement:{judge}",
                            lambda: compare.agreement(view.frame, DECOMPOSED, judge, table=view.wide())).copy()
        stats["criterion"] = widgets.metric_labels(stats["criterion"])
        st.markdown(t("compare.agreement"))
        widgets.table(stats, column_config=widgets.score_columns(stats[["pearson", "spearman", "mad", "kappa", "threshold"]]),
                      hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
        disagreements(view, judge)
    st.subheader(t("compare.per_row"))
    per_row = view.cached(f"per_row:{judge}",
                          lambda: widgets.readable_columns(view.per_row(judge if judge in view.methods() else None)))
    per_row, links = phoenix.with_trace_links(per_row, view.samples)  # rows from traces link to them
    widgets.table(per_row, column_config={**widgets.score_columns(per_row), **links}, hide_index=True, width="stretch",
                  placeholder=widgets.UNSCORED)


def disagreements(view: runs.RunView, judge: str) -> None:
    """The eight results where decomposed and judge differ most, as one list and one row picker (eight rows of
    columns and buttons were forty elements for the browser to lay out)."""
    st.subheader(t("compare.disagree"))
    worst = view.cached(f"worst:{judge}", lambda: compare.disagreements(view.frame, DECOMPOSED, judge, top=8))
    if worst.empty:
        st.info(t("compare.none_both"))
        return
    st.markdown("\n".join(
        "- " + t("compare.disagree_line", row=widgets.md_escape(row.sample_id),
                 criterion=widgets.md_escape(widgets.metric_label(row.criterion)),
                 category=widgets.md_escape(f" {row.category}" if row.category else ""),
                 a=widgets.fmt_score(row.value_a), b=widgets.fmt_score(row.value_b), gap=f"{row.abs_diff:.3f}")
        + f"  \n  {widgets.md_escape(view.question_snippet(row.sample_id, 70))}"
        for row in worst.itertuples()
    ))
    st.pills(t("compare.inspect_pick"), list(dict.fromkeys(worst["sample_id"])), key=INSPECT_PICK,
             format_func=lambda sid: t("compare.inspect", row=widgets.md_escape(sid)), on_change=_open_picked)


def run_a_vs_b(full: runs.RunView, infos: list[RunInfo], store: Store) -> None:
    """What changed from run A to a run B (by default A's latest sibling on the same dataset); every difference
    on the tab is B − A, said once under the heading."""
    st.subheader(t("compare.a_vs_b"))
    st.caption(t("compare.sign"))
    if not [i for i in infos if i.id != full.run_id]:
        st.caption(t("compare.only_one_run"))
        return
    choices = run_summary.run_b_choices(infos, full.info)
    wanted = st.session_state.get(leaderboard.RUN_B, st.session_state.get(leaderboard.RUN_B_PICK))
    if st.session_state.get(leaderboard.RUN_B_FOR, full.run_id) != full.run_id or wanted not in choices:
        wanted = choices[0]  # run A changed: B starts on A's latest sibling again
    st.session_state[leaderboard.RUN_B] = wanted
    st.session_state[leaderboard.RUN_B_FOR] = full.run_id
    other = st.selectbox(t("compare.run_b"), choices, format_func=run_picker.run_labels(infos).get, key=leaderboard.RUN_B,
                         help=t("compare.run_b_help"))
    st.session_state[leaderboard.RUN_B_PICK] = other
    view_b = runs.load(other, st.session_state.get(state.DATASET), store)
    if view_b is None or view_b.frame.empty:
        st.info(t("compare.b_empty"))
        return
    diff = runs.cached_diff(full, view_b)
    st.caption(widgets.md_escape(runs.diff_note(diff)))
    summary = diff.summary.assign(metric=widgets.metric_labels(diff.summary["metric"]))  # the diff is cached
    widgets.table(summary, column_config=widgets.score_columns(summary[["mean_a", "mean_b", "delta"]]),
                  hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
    trust_compare.corrected_panel(full, view_b, store)
    with st.expander(t("compare.setups", n=len(diff.differences))):
        if diff.differences:
            widgets.table(runs.differences_frame(diff.differences), hide_index=True, width="stretch")
        else:
            st.caption(t("compare.same_setup"))
    changed = diff.changed
    st.caption(t("compare.changed", n=len(changed), a=widgets.md_escape(full.run_id), b=widgets.md_escape(other)))
    if not changed.empty:
        changed = changed.assign(metric=widgets.metric_labels(changed["metric"]),
                                 present=changed["present"].map({"both": t("compare.present_both")}).fillna(changed["present"]))
        shown = changed[["sample_id", "category", "metric", "method", "method_b", "value_a", "value_b", "delta",
                         "present", "unscored_reason_a", "unscored_reason_b"]]
        scores = {c: f for c, f in widgets.score_columns(shown).items() if c in ("value_a", "value_b", "delta")}
        widgets.table(shown, column_config=scores, hide_index=True, width="stretch", placeholder=widgets.UNSCORED)


if st.session_state.pop(GO_INSPECT, False):  # the rerun after a pick: straight on, before reading the run again
    st.switch_page(nav.INSPECT.path)
st.title(nav.COMPARE.heading)
store = runs.store()
infos = run_picker.stored_runs_or_stop(store, t("compare.no_runs"), offer_evaluate=True)
run_id, listed = run_picker.pick(infos)  # the user's runs; side runs with the toggle
full = runs.load(run_id, st.session_state.get(state.DATASET), store)
if full is None or full.frame.empty:
    st.warning(t("compare.no_results"))
    st.stop()

cost = compare.cost_frame(run_summary.method_costs(store, run_id, at=full.stamp))  # the stamp the run was read at
st.caption(t("compare.judged_by", provider=widgets.md_escape(full.info.provider), model=widgets.md_escape(full.info.model),
             dataset=widgets.md_escape(full.info.dataset_name or "?"), hash=widgets.md_code(str(full.info.dataset_hash or "")[:12])))
if (note := runs.rows_note(full.samples_source)) is not None:  # a run stored before runs kept their rows
    st.caption(widgets.md_escape(note))
widgets.offline_banner_of(full.frame)
demo.run_banner(full.info.provider, full.info.model)
cols = st.columns(5)
cols[0].metric(t("compare.rows"), len(full.sample_ids()))
cols[1].metric(t("compare.methods"), len(full.methods()), help=widgets.md_escape(", ".join(full.methods())))
cols[2].metric(t("compare.calls"), f"{int(cost['calls'].sum())} ({int(cost['cached_calls'].sum())})" if not cost.empty else "0")
cols[3].metric(t("evaluate.cost"), widgets.fmt_cost(float(cost["cost_usd"].sum()) if not cost.empty else 0.0))
cached_share, cached_by_method = compare.cached_input_share(cost)
cols[4].metric(t("compare.cached_input"), widgets.fmt_share(cached_share), help=t(
    "compare.cached_input_help",
    by_method=widgets.md_escape(", ".join(f"{m} {widgets.fmt_share(v)}" for m, v in cached_by_method.items()))))
if full.info.status != "done":
    st.warning(t("compare.partial", status=widgets.md_escape(runs.run_status(full.info.status)), n=len(full.sample_ids())))

judges = full.judges()
judge = st.selectbox(t("compare.judge"), judges, key="compare.judge") if len(judges) > 1 else (judges[0] if judges else None)
row_filter = filters.render(full, judge)
view, total = filters.apply(full, row_filter, judge, store)
if row_filter.active():
    st.info(t("compare.filtered", n=len(view.sample_ids()), total=int(total)), icon="🔎")
if view.frame.empty:
    st.warning(t("compare.nothing_matches"))
    st.stop()

sections = {t("compare.tab.categories"): lambda: per_category(view, judge),
            t("compare.tab.rows"): lambda: row_by_row(view, judge)}
if theirs_view.offered(full):  # the rows came with another tool's scores (a ragas results CSV)
    sections[t("compare.tab.theirs")] = lambda: theirs_view.show(view)
if len(view.judges()) >= 2:
    sections[t("compare.tab.judges")] = lambda: judges_view.show(view, store)
sections[t("compare.tab.runs")] = lambda: run_a_vs_b(full, listed, store)
sections[t("compare.tab.report")] = lambda: report_button.show(view, store)
if phoenix.can_push(full):
    sections[t("compare.tab.phoenix")] = lambda: phoenix.push_panel(full, store)
for tab, draw in zip(st.tabs(list(sections), key=state.COMPARE_TAB, on_change="rerun"), sections.values()):
    with tab:
        if tab.open:
            draw()
