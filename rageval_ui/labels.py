"""Human labels on Inspect: 👍 / 👎 with a free-text note per criterion of the row shown, and the same label
given to several rows at once (e.g. every row the filters left).

Labels live in the store keyed by dataset hash, row and criterion (``Store.set_label``); the note is saved with
its label. The feedback widgets' keys carry a version bumped by bulk labelling, so a widget never writes back
the value it showed before the bulk change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from rageval_core.analysis.trust.label_edits import LabelChange, save_label
from rageval_core.store.runs import Store
from rageval_ui.i18n import t
from rageval_ui.widgets import metric_label
from rageval_ui.safe_text import md_escape

VERSION = "labels.version"
BULK_ROWS = "labels.bulk_rows"
BULK_CRITERIA = "labels.bulk_criteria"
BULK_NOTE = "labels.bulk_note"


def _label_word(value: float | None) -> str:
    return "👍" if value == 1 else "👎" if value == 0 else t("labels.none")


def render_row(store: Store, dataset_hash: str, sample_id: str, criteria: Sequence[str], annotator: str = "") -> None:
    """One 👍 / 👎 and a note per criterion; a change is saved at once (as ``annotator``'s own when named, whose
    labels the thumbs then show)."""
    stored = store.labels(dataset_hash).get(sample_id, {})
    if annotator:
        mine = store.annotator_labels(dataset_hash).get(sample_id, {})
        stored = {c: mine.get(c, {}).get(annotator) for c in criteria}
    notes = store.label_notes(dataset_hash).get(sample_id, {})
    version = st.session_state.get(VERSION, 0)
    st.caption(t("labels.help"))
    cols = st.columns(min(4, max(1, len(criteria))))
    for i, criterion in enumerate(criteria):
        with cols[i % len(cols)]:
            st.markdown(md_escape(metric_label(criterion)))
            current = stored.get(criterion)
            base = f"{dataset_hash[:12]}.{sample_id}.{criterion}.{version}.{annotator}"
            value = st.feedback("thumbs", key=f"label.{base}", default=None if current is None else int(current))
            note = st.text_input(t("labels.note"), value=notes.get(criterion, ""), key=f"note.{base}",
                                 placeholder=t("labels.note_placeholder"))
            new_label = None if value is None else float(value)
            old_label = None if current is None else float(current)
            new_note, old_note = note.strip() or None, notes.get(criterion) or None
            if new_label != old_label or new_note != old_note:
                change = save_label(store, dataset_hash, sample_id, criterion, new_label, new_note, annotator=annotator or None) \
                    if new_label is not None or old_label is not None else None
                if change is None:  # a note on a row with no label
                    store.set_label(dataset_hash, sample_id, criterion, None, new_note)
                st.toast(t("labels.saved", label=_label_word(new_label), criterion=md_escape(metric_label(criterion)),
                                  row=md_escape(sample_id))
                         + (" " + t("labels.with_note") if new_note and new_note != old_note else "")
                         + (" " + _removal_note(change) if change is not None and new_label is None else ""))


def _removal_note(change: LabelChange) -> str:
    """Whose own label went with a label taken back, and who keeps theirs (they count in people's agreement)."""
    parts = []
    if change.removed_for:
        parts.append(t("labels.removed_for", names=md_escape(", ".join(change.removed_for))))
    if change.kept_by:
        parts.append(t("labels.kept_by", names=md_escape(", ".join(change.kept_by))))
    return " ".join(parts)


def _select_all(sample_ids: Sequence[str]) -> None:
    st.session_state[BULK_ROWS] = list(sample_ids)


def render_bulk(store: Store, dataset_hash: str, sample_ids: Sequence[str], criteria: Sequence[str],
                row_label: Callable[[str], str], annotator: str = "") -> None:
    """Give several rows the same label (and note) on the chosen criteria at once."""
    with st.expander(t("labels.bulk")):
        st.session_state[BULK_ROWS] = [r for r in st.session_state.get(BULK_ROWS, []) if r in sample_ids]
        rows = st.multiselect(t("labels.bulk_rows"), list(sample_ids), format_func={s: row_label(s) for s in sample_ids}.get,
                              key=BULK_ROWS)
        st.button(t("labels.bulk_all", n=len(sample_ids)), key="labels.bulk_all", on_click=_select_all, args=(list(sample_ids),))
        names = {c: metric_label(c) for c in criteria}
        chosen = st.multiselect(t("labels.bulk_criteria"), list(criteria), format_func=names.get, key=BULK_CRITERIA)
        note = st.text_input(t("labels.note"), key=BULK_NOTE, placeholder=t("labels.note_placeholder"))
        good, bad, clear = st.columns(3)
        disabled = not rows or not chosen
        action: float | None | str = "none"
        if good.button(t("labels.bulk_good"), key="labels.bulk_good", disabled=disabled, width="stretch"):
            action = 1.0
        if bad.button(t("labels.bulk_bad"), key="labels.bulk_bad", disabled=disabled, width="stretch"):
            action = 0.0
        if clear.button(t("labels.bulk_clear"), key="labels.bulk_clear", disabled=disabled, width="stretch"):
            action = None
        if action == "none":
            return
        notes = store.label_notes(dataset_hash)
        for row in rows:
            for criterion in chosen:
                kept = (note or "").strip() or notes.get(row, {}).get(criterion)
                save_label(store, dataset_hash, row, criterion, action, None if action is None else kept,  # type: ignore[arg-type]
                           annotator=annotator or None)
        st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1
        st.toast(t("labels.bulk_saved", label=_label_word(action), n=len(rows), k=len(chosen)))  # type: ignore[arg-type]
        st.rerun()
