"""The Trust page's label split: deal the run's labels into train / dev / test (the core deals and stores
it: ``rageval_core.analysis.trust.run_report.deal_split``), show the sizes and agreement per split, and
keep test closed until the person opens it — each opening counted in the store and shown.

Opening test is a session choice per dataset: redrawing the page keeps it open without counting again;
"hide" closes it, and opening again is a new look.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from rageval_core.analysis.trust import run_report as trust_report
from rageval_core.analysis.trust.report import TrustReport
from rageval_core.analysis.trust.split_run import current_split
from rageval_core.analysis.trust.splits import DEFAULT_FRACTIONS, SPLITS, TEST
from rageval_core.store import label_splits
from rageval_core.store.runs import Store
from rageval_ui.i18n import core, t
from rageval_ui.runs import RunView
from rageval_ui.safe_text import md_escape
from rageval_ui.trust import agreement_table, calibration_frame, calibration_headings, run_samples
from rageval_ui.widgets import metric_label, table

OPEN_KEY = "trust.test_open"  # {dataset_hash: True} while test figures are open in this session


def _opened() -> dict[str, bool]:
    return st.session_state.setdefault(OPEN_KEY, {})


def _deal_form(view: RunView, store: Store, redeal: bool) -> None:
    """Fractions and seed, and the button that deals (or re-deals) the split."""
    cols = st.columns(4, vertical_alignment="bottom")
    names = {"train": t("split.train"), "dev": t("split.dev"), "test": t("split.test")}
    shares = {name: cols[i].number_input(names[name], 0.0, 1.0, DEFAULT_FRACTIONS[name], 0.05,
                                         key=f"trust.split.{name}") for i, name in enumerate(SPLITS)}
    seed = int(cols[3].number_input(t("split.seed"), 0, 10**6, 0, key="trust.split.seed"))
    total = sum(shares.values())
    label = t("split.redeal") if redeal else t("split.deal")
    if st.button(label, key="trust.split.deal", disabled=total <= 0):
        fractions = {k: v / total for k, v in shares.items()}
        trust_report.deal_split(store, view.run_id, fractions, seed, samples=run_samples(view) or None)
        _opened().pop(view.info.dataset_hash or "", None)
        st.rerun()


def split_panel(view: RunView, store: Store) -> bool:
    """The split's controls (under the page's heading, ``split.heading``); returns whether test figures are open for
    this run's dataset."""
    digest = view.info.dataset_hash or ""
    if not digest:
        st.caption(t("split.no_hash"))
        return False
    state = current_split(store, digest, dataset_name=view.info.dataset_name, row_ids=view.sample_ids())
    if state is None:
        st.caption(t("split.none"))
        _deal_form(view, store, redeal=False)
        return False
    st.caption(t("split.caption", seed=int(state.seed),
                 fractions=md_escape(", ".join(f"{k} {v:g}" for k, v in state.fractions.items()))))
    with st.expander(t("split.redeal_heading")):
        _deal_form(view, store, redeal=True)
    opened = _opened()
    if opened.get(digest):
        st.warning(t("split.test_open", looks=int(state.test_looks)))
        if st.button(t("split.hide_test"), key="trust.split.hide"):
            opened.pop(digest, None)
            st.rerun()
        return True
    st.info(t("split.test_closed", looks=int(state.test_looks)))
    if st.button(t("split.open_test"), key="trust.split.open"):
        label_splits.record_test_look(store, digest, "trust page")
        opened[digest] = True
        st.rerun()
    return False


def test_open(view: RunView) -> bool:
    """Whether test figures are open for this run's dataset in this session (the split's section opens with them)."""
    return bool(_opened().get(view.info.dataset_hash or ""))


def sizes_frame(rep: TrustReport) -> pd.DataFrame:
    """Rows per split, then labelled rows of each criterion per split."""
    split = rep.split
    rows = [{"": t("split.rows"), **{s: split.rows.get(s, 0) for s in SPLITS}}]
    rows += [{"": metric_label(c), **{s: v.get(s, 0) for s in SPLITS}} for c, v in split.labelled.items()]
    return pd.DataFrame(rows, columns=["", *SPLITS])


def split_tables(rep: TrustReport) -> None:
    """Sizes and agreement per split (test only when open), from the report's split block."""
    if rep.split is None:
        return
    table(sizes_frame(rep), hide_index=True, width="stretch")
    shown: Sequence[str] = [s for s in SPLITS if s in rep.split.agreement]
    for name in shown:
        st.markdown(t("split.agreement_on", split=name))
        agreement_table(rep.split.agreement[name])
    if TEST not in shown:
        for note in rep.split.notes:
            st.caption(md_escape(core(note)))
    if rep.calibration:
        st.markdown(t("split.calibration"))
        st.caption(t("split.calibration_help", default=f"{rep.threshold:g}"))
        table(calibration_frame(rep), hide_index=True, width="stretch", column_config=calibration_headings(rep))
    elif rep.calibration is not None:
        st.caption(t("split.no_calibration", default=f"{rep.threshold:g}"))
