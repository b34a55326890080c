"""Compare's report download: pick the rows to show in full, build the self-contained HTML, download it."""

from __future__ import annotations

import streamlit as st

from rageval_core.analysis.report.build import choose_rows
from rageval_core.store.runs import Store
from rageval_core.views.report import report_html
from rageval_ui.i18n import lang, t
from rageval_ui.runs import RunView

BUILT = "compare.report"  # (run id, html) of the last report built on this page


def show(view: RunView, store: Store) -> None:
    st.subheader(t("report.heading"))
    st.caption(t("report.caption"))
    ranked = view.cached("report.ranked", lambda: [sid for sid, _ in choose_rows(view.frame, None, len(view.sample_ids()))])
    picked = st.multiselect(t("report.rows"), ranked, default=ranked[:3],
                            key=f"compare.report.rows.{view.run_id}", placeholder=t("report.rows_placeholder"))
    if st.button(t("report.build"), key="compare.report.build"):
        with st.spinner(t("report.building")):  # in the UI's language, the core's notes too
            html = report_html(store, [view.run_id], samples=list(view.samples.values()) or None, sample_ids=picked or None,
                               language=lang())
        st.session_state[BUILT] = (view.run_id, html)
    built = st.session_state.get(BUILT)
    if built and built[0] == view.run_id:
        data = built[1].encode("utf-8")
        st.download_button(t("report.download", kb=len(data) // 1024), data, file_name=f"report-{view.run_id}.html",
                           mime="text/html", key="compare.report.download")
