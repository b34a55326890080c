"""Trust: can I trust this score? First the one-screen answer per metric × method (``rageval_ui.trust_answer``), then
every section behind it folded: the label split, coverage, agreement with intervals, people against each other,
confusion cells that open their rows, the corrected estimate, bias, repeat stability, probes and what to label next."""

from __future__ import annotations

import streamlit as st

from rageval_ui import annotators as annotators_ui
from rageval_ui import charts, data, nav, run_picker, runs, state, trust_answer, trust_checks, trust_split, widgets
from rageval_ui import trust as trust_ui
from rageval_ui.i18n import t

LABELLED_SAMPLE = "trust_labelled.jsonl"
CLI = f"python -m rageval_core trust sample_data/{LABELLED_SAMPLE}"

st.title(nav.TRUST.heading)
st.caption(t("trust.caption"))
store = runs.store()


def offer_labelled_sample(where: str) -> None:
    """A way to a run with labels: the shipped labelled set, evaluated on the Evaluate page or by the CLI."""
    if st.button(t("trust.load_sample", name=LABELLED_SAMPLE), key=f"trust.sample.{where}"):
        ws = data.load_sample_file(LABELLED_SAMPLE)
        state.use_dataset(ws, pins=set())
        st.session_state["evaluate.rows"] = "all"
        st.switch_page(nav.EVALUATE.path)
    st.caption(t("trust.or_terminal", cli=widgets.md_code(CLI)))


infos = store.list_runs()  # the picker lists the user's runs; probes and other side runs with its toggle
if not infos:
    st.info(t("trust.no_runs"))
    offer_labelled_sample("empty")
    st.stop()
run_id = run_picker.pick_run(infos)
st.session_state[state.TRUST_RUN] = run_id  # the Prompts page's "vs people" panel follows the labelled run chosen here
view = runs.load(run_id, st.session_state.get(state.DATASET), store)
if view is None or view.frame.empty:
    st.warning(t("inspect.no_results"))
    st.stop()
if (note := runs.rows_note(view.samples_source)) is not None:  # a run stored before runs kept their rows
    st.caption(widgets.md_escape(note))

answer_box = st.container(key="trust-answer")  # the one-screen answer: filled once the report is computed
few, k_col = st.columns([3, 1], vertical_alignment="bottom")
kept = trust_ui.label_keep()
labelled_rows = sum(trust_ui.has_label_columns(s) for s in trust_ui.run_samples(view))
simulate = few.toggle(
    t("trust.some_rows"), value=kept is not None, disabled=labelled_rows < 2, help=t("trust.some_rows_help"),
)
k = int(k_col.number_input(t("trust.k"), 1, max(1, labelled_rows), min(16, max(1, labelled_rows)),
                           disabled=not simulate, key="trust.k"))
st.session_state[state.LABEL_KEEP] = k if simulate else None
keep = trust_ui.label_keep()
details = st.container()  # the run's caption and the offline judge's limits, under the controls

# Every detailed section below, folded: the answer above says what they add up to.
split_box = st.expander(t("split.heading"), expanded=trust_split.test_open(view))
with split_box:
    show_test = trust_split.split_panel(view, store)
with st.spinner(t("trust.computing")):
    rep = trust_ui.report(view, store, keep, show_test)
with split_box:
    trust_split.split_tables(rep)

with answer_box:
    trust_answer.answer_block(trust_answer.answer_of(rep))
    if rep.label_next:
        top = rep.label_next[0]
        if st.button(t("trust.label_top", row=widgets.md_escape(top.row_id),
                       criterion=widgets.md_escape(widgets.metric_label(top.criterion))), type="primary",
                     key="trust.label_top"):
            trust_ui.open_in_inspect(view.run_id, top.row_id)
with details:
    st.caption(t("trust.run_caption", run=widgets.md_escape(view.run_id), provider=widgets.md_escape(view.info.provider),
                 model=widgets.md_escape(view.info.model), n=rep.n_rows, threshold=f"{rep.threshold:g}",
                 iterations=rep.iterations, seed=rep.seed))
    if view.info.provider == "offline":
        st.caption(widgets.md_escape(trust_ui.offline_limits()))

with st.expander(t("trust.coverage")):
    if not rep.coverage:
        st.info(t("trust.no_labels", cli=widgets.md_code(f"python -m rageval_core trust {view.run_id} --labels FILE")))
        offer_labelled_sample("nolabels")
    else:
        widgets.table(trust_ui.coverage_frame(rep), hide_index=True, width="stretch")
        if rep.conflicts:
            st.warning(t("trust.conflicts", conflicts=widgets.counted(len(rep.conflicts), t("unit.conflict"), t("unit.conflicts"))))

if rep.agreement:
    with st.expander(t("trust.agreement")):
        st.caption(t("trust.agreement_help"))
        trust_ui.agreement_table(rep)
    with st.expander(t("annotators.heading")):
        annotators_ui.panel(rep, view, store)
    with st.expander(t("trust.confusion")):
        criteria = list(dict.fromkeys(a.metric for a in rep.agreement))
        criterion = st.selectbox(t("filter.criterion"), criteria,
                                 format_func={c: widgets.metric_label(c) for c in criteria}.get, key="trust.confusion")
        shown = [a for a in rep.agreement if a.metric == criterion]
        for col, agreement in zip(st.columns(len(shown)), shown):
            with col:
                trust_ui.confusion_grid(agreement, view.run_id, key=f"trust.cm.{agreement.method}")

if rep.estimates:
    with st.expander(t("trust.estimate")):
        st.caption(t("trust.estimate_help"))
        st.caption(t("trust.estimate_wider"))
        st.altair_chart(charts.estimates(trust_ui.estimate_points(rep)))
        trust_ui.estimate_table(rep)

if rep.bias is not None:
    with st.expander(t("trust.bias")):
        st.caption(t("trust.bias_help", flagged=sum(b.flagged for b in rep.bias), n=len(rep.bias)))
        if rep.bias:
            widgets.table(trust_ui.bias_frame(rep), hide_index=True, width="stretch")

with st.expander(t("stability.heading")):
    trust_checks.stability_panel(view, store)
with st.expander(t("probes.heading")):
    trust_checks.probes_panel(view, store)

with st.expander(t("trust.label_next")):
    if not rep.label_next:
        st.info(t("trust.all_labelled"))
    else:
        st.caption(t("trust.label_next_help"))
        widgets.table(trust_ui.label_next_frame(rep.label_next[:10], view), hide_index=True, width="stretch")
