"""Human labels on Inspect: 👍 / 👎 with a free-text note per criterion of the row shown (its state coloured, with a
"saved" sign), 👍 / 👎 on the whole row in one click or key (then on to the next unlabelled row), and the same label
given to several rows at once (e.g. every row the filters left).

Labels live in the store keyed by dataset hash, row and criterion (``Store.set_label``); the note is saved with
its label. The feedback widgets' keys carry a version bumped by bulk labelling, so a widget never writes back
the value it showed before the bulk change. On a store that cannot be written (read-only) the labels are shown and
the widgets are disabled, with a line saying why; a save the store refused anyway is said where the labels are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from rageval_core.analysis.trust.label_edits import LabelChange, save_label
from rageval_core.core.errors import StoreError
from rageval_core.store.runs import Store
from rageval_ui import state
from rageval_ui.i18n import core, t
from rageval_ui.widgets import metric_label
from rageval_ui.safe_text import md_escape

VERSION = "labels.version"
BULK_ROWS = "labels.bulk_rows"
BULK_CRITERIA = "labels.bulk_criteria"
BULK_NOTE = "labels.bulk_note"


REFUSED = "labels.refused"  # the store's message for a save it refused (read-only), shown once by render_row
SAVED = "labels.saved_now"  # (dataset hash, row, criterion) saved on this or the previous run: the "saved" sign
ADVANCE = "labels.advance"  # after 👍 / 👎 on the whole row, go to the next unlabelled row
GOOD_KEY, BAD_KEY, NEXT_KEY = "G", "B", "N"  # keyboard shortcuts (ignored while typing in a field)
# The chosen thumb filled green / red (st.feedback alone only darkens its outline). Style-only HTML takes no space.
THUMB_CSS = """<style>
[data-testid=stFeedback] button[aria-label="Thumbs up"][aria-checked="true"] {background: #d3f9d8; color: #2b8a3e; border-radius: 6px}
[data-testid=stFeedback] button[aria-label="Thumbs down"][aria-checked="true"] {background: #ffd8d8; color: #c92a2a; border-radius: 6px}
</style>"""


def _label_word(value: float | None) -> str:
    return "👍" if value == 1 else "👎" if value == 0 else t("labels.none")


def _badge(value: float | None, just_saved: bool) -> None:
    """The criterion's verdict, coloured: green 👍, red 👎, grey when not labelled; "saved" once it is stored."""
    if value is None:
        st.badge(t("labels.state_none"), color="gray")
    elif value == 1:
        st.badge(t("labels.state_good_now") if just_saved else t("labels.state_good"), icon=":material/check_circle:",
                 color="green")
    else:
        st.badge(t("labels.state_bad_now") if just_saved else t("labels.state_bad"), icon=":material/check_circle:",
                 color="red")


def shown_labels(store: Store, dataset_hash: str, annotator: str = "") -> dict[str, dict[str, float | None]]:
    """Every row's labels as Inspect shows them: the pooled ones, or the named annotator's own."""
    if annotator:
        return {row: {c: by.get(annotator) for c, by in crits.items()}
                for row, crits in store.annotator_labels(dataset_hash).items()}
    return store.labels(dataset_hash)


def _stored(store: Store, dataset_hash: str, sample_id: str, criteria: Sequence[str], annotator: str) -> dict[str, float | None]:
    """The row's labels as shown: the pooled ones, or the named annotator's own."""
    return dict(shown_labels(store, dataset_hash, annotator).get(sample_id, {}))


def label_whole_row(store: Store, dataset_hash: str, sample_id: str, criteria: Sequence[str], value: float,
                    annotator: str = "", then: Callable[[], str | None] | None = None) -> None:
    """👍 or 👎 on every criterion of the row at once (notes kept), as a button's callback; with ``then`` and the
    "go on" toggle set, the row it returns is shown next (the next unlabelled one)."""
    notes = store.label_notes(dataset_hash).get(sample_id, {})
    try:
        for criterion in criteria:
            save_label(store, dataset_hash, sample_id, criterion, value, notes.get(criterion) or None, annotator=annotator or None)
    except StoreError as exc:  # a callback: the page shows it on the rerun that follows
        st.session_state[REFUSED] = str(exc)
        return
    st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1
    st.session_state[SAVED] = {(dataset_hash, sample_id, c) for c in criteria}
    st.toast(t("labels.row_saved", label=_label_word(value), n=len(criteria), row=md_escape(sample_id)))
    if then is not None and st.session_state.get(ADVANCE, True):
        following = then()
        if following is not None and following != sample_id:
            st.session_state[state.INSPECT_SAMPLE] = following


def render_row(store: Store, dataset_hash: str, sample_id: str, criteria: Sequence[str], annotator: str = "",
               *, then: Callable[[], str | None] | None = None) -> None:
    """👍 / 👎 for the whole row (keyboard G / B), then one 👍 / 👎, its coloured state and a note per criterion; a
    change is saved at once (as ``annotator``'s own when named, whose labels the thumbs then show). ``then``: the
    row to show after the whole row is labelled (Inspect's next unlabelled row)."""
    notes = store.label_notes(dataset_hash).get(sample_id, {})
    st.html(THUMB_CSS)
    st.caption(t("labels.help"))
    read_only = store.read_only_reason() is not None
    refused = st.session_state.pop(REFUSED, None)
    if refused:
        st.error(md_escape(core(refused)), icon="🔒")
    elif read_only:
        st.caption(t("labels.read_only"))
    saved_now: set = st.session_state.pop(SAVED, set())
    with st.container(horizontal=True, vertical_alignment="center"):
        for value, key, label, shortcut in ((1.0, "labels.row_good", t("labels.row_good"), GOOD_KEY),
                                            (0.0, "labels.row_bad", t("labels.row_bad"), BAD_KEY)):
            st.button(label, key=key, on_click=label_whole_row, shortcut=shortcut, help=t("labels.row_help"),
                      args=(store, dataset_hash, sample_id, list(criteria), value, annotator, then),
                      disabled=not criteria or read_only)
        if then is not None:
            st.toggle(t("labels.advance"), value=st.session_state.get(ADVANCE, True), key=ADVANCE)
    stored = _stored(store, dataset_hash, sample_id, criteria, annotator)
    version = st.session_state.get(VERSION, 0)
    cols = st.columns(min(4, max(1, len(criteria))))
    for i, criterion in enumerate(criteria):
        with cols[i % len(cols)]:
            st.markdown(f"**{md_escape(metric_label(criterion))}**")
            badge = st.empty()
            current = stored.get(criterion)
            base = f"{dataset_hash[:12]}.{sample_id}.{criterion}.{version}.{annotator}"
            value = st.feedback("thumbs", key=f"label.{base}", default=None if current is None else int(current),
                                disabled=read_only)
            note = st.text_input(t("labels.note"), value=notes.get(criterion, ""), key=f"note.{base}",
                                 placeholder=t("labels.note_placeholder"), disabled=read_only)
            new_label = None if value is None else float(value)
            old_label = None if current is None else float(current)
            new_note, old_note = note.strip() or None, notes.get(criterion) or None
            just = (dataset_hash, sample_id, criterion) in saved_now
            if new_label != old_label or new_note != old_note:
                change = save_label(store, dataset_hash, sample_id, criterion, new_label, new_note, annotator=annotator or None) \
                    if new_label is not None or old_label is not None else None
                if change is None:  # a note on a row with no label
                    store.set_label(dataset_hash, sample_id, criterion, None, new_note)
                st.toast(t("labels.saved", label=_label_word(new_label), criterion=md_escape(metric_label(criterion)),
                                  row=md_escape(sample_id))
                         + (" " + t("labels.with_note") if new_note and new_note != old_note else "")
                         + (" " + _removal_note(change) if change is not None and new_label is None else ""))
                just = True
            with badge:
                _badge(new_label, just)


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
                              key=BULK_ROWS, placeholder=t("common.choose"))
        st.button(t("labels.bulk_all", n=len(sample_ids)), key="labels.bulk_all", on_click=_select_all, args=(list(sample_ids),))
        names = {c: metric_label(c) for c in criteria}
        chosen = st.multiselect(t("labels.bulk_criteria"), list(criteria), format_func=names.get, key=BULK_CRITERIA,
                                placeholder=t("common.choose"))
        note = st.text_input(t("labels.note"), key=BULK_NOTE, placeholder=t("labels.note_placeholder"))
        good, bad, clear = st.columns(3)
        disabled = not rows or not chosen or store.read_only_reason() is not None
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
