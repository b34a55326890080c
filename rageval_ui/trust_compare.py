"""Compare's run A vs run B: the difference corrected by people's labels (``rageval_core.analysis.trust.
compare_run``), beside the judge's own difference and the labels' alone; nothing is computed here."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from rageval_core.analysis.trust.compare_run import RunsComparison, compare_runs
from rageval_core.analysis.trust.paired import Difference
from rageval_core.core.types import Sample
from rageval_core.store.runs import Store
from rageval_ui.i18n import core, t
from rageval_ui.runs import RunView
from rageval_ui.safe_text import md_escape
from rageval_ui.trust import run_samples
from rageval_ui.widgets import UNSCORED, metric_label, table


def fmt_diff(d: Difference) -> str:
    """``+0.120 [+0.031, +0.209] *`` (* = excludes 0); ``-`` when undefined."""
    if d.value is None:
        return UNSCORED
    interval = "" if d.low is None else f" [{d.low:+.3f}, {d.high:+.3f}]"
    return f"{d.value:+.3f}{interval}" + (" *" if d.excludes_zero else "")


@st.cache_data(show_spinner=False, max_entries=8)
def _cached(signature: str, store_path: str, run_a: str, run_b: str, _a: list[Sample] | None,
            _b: list[Sample] | None) -> RunsComparison:
    return compare_runs(Store(store_path), run_a, run_b, samples_a=_a, samples_b=_b)


def comparison_frame(comparison: RunsComparison) -> pd.DataFrame:
    return pd.DataFrame(
        [{"criterion": metric_label(c.metric), "method": c.method, "judge": comparison.judge_of(c.method),
          "rows": c.n_shared, "labelled in both": c.n_labelled,
          "judge only": fmt_diff(c.judge_only), "labels only": fmt_diff(c.labels_only), "corrected": fmt_diff(c.corrected),
          "judge vs corrected": t("compare.corrected.disagree") if c.disagree else t("compare.corrected.agree")
          if c.judge_only.value is not None and c.corrected.value is not None else UNSCORED}
         for c in comparison.comparisons],
        columns=["criterion", "method", "judge", "rows", "labelled in both", "judge only", "labels only", "corrected",
                 "judge vs corrected"],
    )


def corrected_panel(view_a: RunView, view_b: RunView, store: Store) -> None:
    """Run B − run A per criterion × method: judge-only, labels-only and corrected, with 95% intervals, each
    method's judges named; what the runs could not be compared on is said."""
    st.markdown(t("compare.corrected.heading"))
    samples_a = run_samples(view_a) or None
    samples_b = run_samples(view_b) or None
    signature = json.dumps([view_a.run_id, len(view_a.frame), view_b.run_id, len(view_b.frame),
                            store.labels(view_a.info.dataset_hash or ""), store.labels(view_b.info.dataset_hash or "")],
                           sort_keys=True, default=str)
    comparison = _cached(signature, str(store.path), view_a.run_id, view_b.run_id, samples_a, samples_b)
    for note in comparison.notes:
        st.caption(md_escape(core(note)))
    if not any(c.n_labelled for c in comparison.comparisons):
        st.caption(t("compare.corrected.no_labels"))
        return
    st.caption(t("compare.corrected.help"))
    table(comparison_frame(comparison), hide_index=True, width="stretch")
    for c in comparison.comparisons:
        for note in c.notes:
            (st.warning if c.disagree else st.caption)(md_escape(f"{metric_label(c.metric)} · {c.method}: {core(note)}"))
