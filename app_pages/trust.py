"""Trust: can I trust this score? Human labels against every metric × method, with intervals, confusion
cells that open their rows, the corrected estimate, repeat stability, probes and what to label next."""

from __future__ import annotations

import streamlit as st

from ui import charts, data, nav, run_picker, runs, state, trust_checks, widgets
from ui import trust as trust_ui

LABELLED_SAMPLE = "trust_labelled.jsonl"
CLI = f"python -m rageval_core trust sample_data/{LABELLED_SAMPLE}"

st.title(nav.TRUST.heading)
st.caption("Can I trust this score? Scores against human labels, with 95% intervals.")
store = runs.store()


def offer_labelled_sample(where: str) -> None:
    """A way to a run with labels: the shipped labelled set, evaluated on the Evaluate page or by the CLI."""
    if st.button(f"Load {LABELLED_SAMPLE} (48 labelled rows, ja + en) and go to Evaluate", key=f"trust.sample.{where}"):
        ws = data.load_sample_file(LABELLED_SAMPLE)
        state.use_dataset(ws, pins=set())
        st.session_state["evaluate.rows"] = "all"
        st.switch_page(nav.EVALUATE.path)
    st.caption(f"Or in a terminal: `{CLI}`")


infos = [i for i in store.list_runs() if not (i.settings or {}).get("probe")]
if not infos:
    st.info("No runs yet. Evaluate a dataset with human labels (label_faithful, label_relevant, label_context, "
            "label_correct columns, or 👍 / 👎 in Inspect), then come back.")
    offer_labelled_sample("empty")
    st.stop()
run_id = run_picker.pick_run(infos)
view = runs.load(run_id, st.session_state.get(state.DATASET), store)
if view is None or view.frame.empty:
    st.warning("This run has no results yet.")
    st.stop()

few, k_col = st.columns([3, 1], vertical_alignment="bottom")
kept = trust_ui.label_keep()
labelled_rows = sum(trust_ui.has_label_columns(s) for s in trust_ui.run_samples(view))
simulate = few.toggle(
    "Use the label columns of only some rows", value=kept is not None, disabled=labelled_rows < 2,
    help="Try the workflow from scratch: keep the labels of a seeded random subset of rows, then see what the "
         "corrected estimate gains and label the suggested rows in Inspect.",
)
k = int(k_col.number_input("Rows that keep labels", 1, max(1, labelled_rows), min(16, max(1, labelled_rows)),
                           disabled=not simulate, key="trust.k"))
st.session_state[state.LABEL_KEEP] = k if simulate else None
keep = trust_ui.label_keep()

with st.spinner("Computing agreement and intervals…"):
    rep = trust_ui.report(view, store, keep)
st.caption(f"Run **{view.run_id}** · {view.info.provider}/{view.info.model} · {rep.n_rows} rows · pass = score ≥ "
           f"{rep.threshold:g} · bootstrap {rep.iterations} resamples, seed {rep.seed}")

st.subheader("Labels coverage")
if not rep.coverage:
    st.info("No human labels on this run's rows. Add label columns to the dataset (label_faithful, label_relevant, "
            "label_context, label_correct: 0/1 or 1–5), give 👍 / 👎 in Inspect, or pass a labels file: "
            f"`python -m rageval_core trust {view.run_id} --labels FILE`.")
    offer_labelled_sample("nolabels")
else:
    st.dataframe(trust_ui.coverage_frame(rep), hide_index=True, width="stretch")
    if rep.conflicts:
        st.warning(f"{widgets.plural(len(rep.conflicts), 'label conflict')} between sources (the inspector wins).")

if rep.agreement:
    st.subheader("Agreement with people")
    st.caption("Rows both scored and labelled. AUROC: how well the score ranks good above bad answers (0.5 = chance). "
               "Balanced accuracy and kappa at the pass threshold; best threshold maximises balanced accuracy.")
    st.dataframe(trust_ui.agreement_frame(rep), hide_index=True, width="stretch")

    st.subheader("Confusion matrices")
    criteria = list(dict.fromkeys(a.metric for a in rep.agreement))
    criterion = st.selectbox("Criterion", criteria, format_func=widgets.metric_label, key="trust.confusion")
    shown = [a for a in rep.agreement if a.metric == criterion]
    for col, agreement in zip(st.columns(len(shown)), shown):
        with col:
            trust_ui.confusion_grid(agreement, view.run_id, key=f"trust.cm.{agreement.method}")

if rep.estimates:
    st.subheader("Corrected estimate")
    st.caption("The share of answers that pass: the score's mean over all rows (biased by the scorer's errors), "
               "the labels alone (unbiased, wide), and the score corrected by its error on the labelled rows "
               "(prediction-powered). \"As tight as k labels\": labelling k random rows alone would give an "
               "interval as narrow as the corrected one.")
    st.altair_chart(charts.estimates(trust_ui.estimate_points(rep)))
    st.dataframe(trust_ui.estimate_frame(rep), hide_index=True, width="stretch")

trust_checks.stability_panel(view, store)
trust_checks.probes_panel(view, store)

st.subheader("Label next")
if not rep.label_next:
    st.info("Every scored row already has a label on each scored criterion. Turn on \"Use the label columns of "
            "only some rows\" above to see which rows a person should label first.")
else:
    st.caption("Unlabelled rows where a label tells most: a score near the threshold, methods that disagree, "
               "repeats that differ.")
    st.dataframe(trust_ui.label_next_frame(rep.label_next[:10], view), hide_index=True, width="stretch")
    top = rep.label_next[0]
    if st.button(f"Label row #{top.row_id} in Inspect ({widgets.metric_label(top.criterion)})", type="primary",
                 key="trust.label_top"):
        trust_ui.open_in_inspect(view.run_id, top.row_id)
