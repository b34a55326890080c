"""Several annotators on the Trust page and Inspect: who is labelling (asked once a session), people's
agreement beside the judges', the disagreements to settle, a labels file naming its annotators, and the
annotation queue (pick rows, hand them out, progress per annotator).

Every figure comes from the core's report (``rageval_core.analysis.trust.annotator_report``); the queue and
settlements live in the store (``rageval_core.store.annotations``). This module only lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from rageval_core.analysis.trust.queue import MODES, deal, pick_rows
from rageval_core.store import annotations
from rageval_core.store.runs import Store
from rageval_ui.i18n import core, t
from rageval_ui.runs import RunView
from rageval_ui.safe_text import md_escape
from rageval_ui.trust import fmt_ci, open_in_inspect
from rageval_ui.widgets import UNSCORED, fmt_score, metric_label, table

NAME = "annotator.name"  # who is labelling this session (kept across pages, unlike a widget's own key)
NAME_WIDGET = "annotator.name_input"


def annotator_name() -> str:
    return str(st.session_state.get(NAME) or "").strip()


def _keep_name() -> None:
    st.session_state[NAME] = str(st.session_state.get(NAME_WIDGET) or "").strip()


def ask_name() -> str:
    """The session's annotator name: a text box until one is given, then a caption (changeable)."""
    name = annotator_name()
    if name and not st.session_state.get("annotator.editing"):
        left, right = st.columns([4, 1], vertical_alignment="center")
        left.caption(t("annotators.as", name=md_escape(name)))
        if right.button(t("annotators.change"), key="annotator.change"):
            st.session_state["annotator.editing"] = True
            st.rerun()
        return name
    st.session_state.setdefault(NAME_WIDGET, name)
    st.text_input(t("annotators.name"), key=NAME_WIDGET, on_change=_keep_name, placeholder=t("annotators.name_placeholder"),
                  help=t("annotators.name_help"))
    if annotator_name():
        st.session_state["annotator.editing"] = False
    return annotator_name()


def _words() -> dict[str, str]:
    """Statistic names, verdicts and queue modes in the UI language (literal keys, so the catalogue check sees them)."""
    return {
        "kappa": t("annotators.people_kappa"), "alpha": t("annotators.people_alpha"),
        "within": t("annotators.verdict_within"), "below": t("annotators.verdict_below"),
        "above": t("annotators.verdict_above"), "unknown": t("annotators.verdict_unknown"),
        "label_next": t("annotators.mode_label_next"), "filter": t("annotators.mode_filter"), "random": t("annotators.mode_random"),
    }


def people_frame(block: Any) -> pd.DataFrame:
    """One line for the people's agreement per criterion, then one per judge with its kappa with each person."""
    rows, words = [], _words()
    for c in block.criteria:
        spread = UNSCORED if c.spread is None else f"{fmt_score(c.spread[0])}–{fmt_score(c.spread[1])}"
        rows.append({"criterion": metric_label(c.criterion), "who": words[c.statistic], "rows": c.n_shared,
                     "agreement": fmt_ci(c.people), "with each / pairs": spread, "judge is": ""})
        for j in c.judges:
            each = ", ".join(f"{a} {fmt_score(v['kappa'])}" for a, v in j.per_annotator.items())
            rows.append({"criterion": "", "who": j.method, "rows": max((v["n"] for v in j.per_annotator.values()), default=0),
                         "agreement": fmt_score(j.mean), "with each / pairs": each, "judge is": words[j.verdict]})
    return pd.DataFrame(rows, columns=["criterion", "who", "rows", "agreement", "with each / pairs", "judge is"])


def settle_frame(queue: Sequence[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{"row": d["row_id"], "criterion": metric_label(d["criterion"]),
                          "labels": ", ".join(f"{a} {'👍' if v else '👎'}" for a, v in d["labels"].items())} for d in queue],
                        columns=["row", "criterion", "labels"])


def _settle(block: Any, view: RunView, store: Store) -> None:
    queue = block.to_settle()
    if not queue:
        st.success(t("annotators.all_settled"))
        return
    st.markdown(t("annotators.to_settle", n=len(queue)))
    table(settle_frame(queue), hide_index=True, width="stretch")
    keys = [f"{d['row_id']}|{d['criterion']}" for d in queue]
    shown = {k: f"#{k.split('|')[0]} · {metric_label(k.split('|')[1])}" for k in keys}  # labelled now, in this session's language
    pick = st.selectbox(t("annotators.settle_pick"), keys, key="annotators.settle", format_func=shown.get)
    row, criterion = pick.split("|")
    good, bad, look = st.columns(3)
    who = annotator_name() or t("annotators.someone")
    for col, value, label in ((good, 1.0, t("annotators.settle_good")), (bad, 0.0, t("annotators.settle_bad"))):
        if col.button(label, key=f"annotators.settle.{value}", width="stretch"):
            annotations.settle(store, view.info.dataset_hash or "", row, criterion, value, who)
            st.toast(t("annotators.settled", row=md_escape(row), criterion=md_escape(metric_label(criterion))))
            st.rerun()
    if look.button(t("annotators.open"), key="annotators.open", width="stretch"):
        open_in_inspect(view.run_id, row)


def _import(view: RunView, store: Store) -> None:
    """A labels file naming its annotators, read by the same rule as ``annotate RUN --import``: refused (each
    problem named) when a value is not a label (unless the box says skip those rows) or a column is on neither
    scale; what is left out or chosen (unknown rows, duplicates, conflicts) is said beside the import."""
    from rageval_core.analysis.trust.label_import import plan_import
    from rageval_core.analysis.trust.run_report import read_label_rows
    import tempfile
    from pathlib import Path

    upload = st.file_uploader(t("annotators.import"), type=["json", "jsonl", "csv"], key="annotators.import",
                              help=t("annotators.import_help"))
    skip_bad = st.checkbox(t("annotators.skip_bad"), key="annotators.skip_bad", help=t("annotators.skip_bad_help"))
    seen = (upload.name, upload.size, skip_bad) if upload is not None else None
    if upload is None or st.session_state.get("annotators.imported") == seen:
        for kind, line in st.session_state.get("annotators.import_notes", []):
            (st.error if kind == "error" else st.warning)(md_escape(line))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(upload.name).name
        path.write_bytes(upload.getvalue())
        rows = read_label_rows(path)
    plan = plan_import(rows, set(view.sample_ids()), view.run_id)
    st.session_state["annotators.imported"] = seen
    refusal = plan.refusal(skip_bad=skip_bad)
    if refusal:
        st.session_state["annotators.import_notes"] = [("error", core(line)) for line in refusal]
        st.rerun()
    st.session_state["annotators.import_notes"] = [("warning", core(line)) for line in plan.warnings()]
    annotations.import_labels(store, view.info.dataset_hash or "", plan.named)
    st.toast(t("annotators.import_done", n=len(plan.named), people=plan.people()))
    st.rerun()


def _queue(rep: Any, view: RunView, store: Store) -> None:
    dataset_hash = view.info.dataset_hash or ""
    rows = view.sample_ids()
    names = st.text_input(t("annotators.queue_people"), value=", ".join(rep.annotators.annotators) if rep.annotators else "",
                          key="annotators.queue_people")
    people = [n.strip() for n in names.split(",") if n.strip()]
    mode_col, n_col, per_col = st.columns(3)
    words = _words()
    mode = mode_col.selectbox(t("annotators.queue_mode"), MODES, format_func=words.get, key="annotators.mode")
    n = int(n_col.number_input(t("annotators.queue_n"), 1, max(1, len(rows)), min(10, max(1, len(rows))), key="annotators.n"))
    per_row = int(per_col.number_input(t("annotators.per_row"), 1, max(1, len(people) or 1), min(2, max(1, len(people) or 1)),
                                       key="annotators.per_row", help=t("annotators.per_row_help")))
    criteria = list(dict.fromkeys(a.metric for a in rep.agreement)) or ["faithfulness"]
    chosen = st.multiselect(t("annotators.queue_criteria"), criteria, default=criteria[:1], format_func=metric_label,
                            key="annotators.criteria", placeholder=t("common.choose"))
    keep = None
    if mode == "filter":
        categories = sorted({c for c in view.categories.values() if c})
        picked = st.multiselect(t("annotators.queue_categories"), categories, key="annotators.categories",
                                placeholder=t("filter.any"))
        keep = lambda r: not picked or view.categories.get(r) in picked  # noqa: E731
    ranked = [c.row_id for c in rep.label_next]
    if st.button(t("annotators.hand_out"), key="annotators.hand_out", disabled=not people or not chosen, type="primary"):
        picked_rows = pick_rows(rows, mode, n, ranked=ranked, keep=keep, seed=0)
        added = annotations.hand_out(store, dataset_hash, deal(picked_rows, people, per_row), chosen)
        st.toast(t("annotators.handed", n=added, rows=len(picked_rows), people=len(people)))
    progress = annotations.progress(store, dataset_hash)
    if progress:
        table(pd.DataFrame([{"annotator": p.annotator, "done": f"{p.done} / {p.assigned}", "next row": p.next_row or "—"}
                            for p in progress]), hide_index=True, width="stretch")
        mine = next((p for p in progress if p.annotator == annotator_name() and p.next_row), None)
        if mine is not None and st.button(t("annotators.my_next", row=md_escape(mine.next_row)), key="annotators.my_next"):
            open_in_inspect(view.run_id, mine.next_row)


def panel(rep: Any, view: RunView, store: Store) -> None:
    """The Trust page's annotators block: people beside the judges, the sentences, settling, import, the queue (under
    the page's own heading, ``annotators.heading``)."""
    block = rep.annotators
    if block is None:
        st.info(t("annotators.none"))
    else:
        st.caption(t("annotators.help", people=md_escape(", ".join(block.annotators))))
        table(people_frame(block), hide_index=True, width="stretch")
        for c in block.criteria:
            for j in c.judges:
                st.markdown(f"- {md_escape(core(j.sentence))}")
        _settle(block, view, store)
    with st.expander(t("annotators.import_heading")):
        _import(view, store)
    with st.expander(t("annotators.queue_heading")):
        _queue(rep, view, store)
