"""The Dataset page's mapping step: for an uploaded file whose names the loader does not know, say which column holds
each field (and how contexts joined in one text are split), see the first rows exactly as they will be read, then use
them. The core reads (``rageval_core.data.datasets``: ``file_columns``, ``ColumnMap``, ``load_dataset``); this
module keeps the upload between reruns and draws the step."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rageval_core.data import datasets
from rageval_core.data.datasets.dialects import BLANK_LINE
from rageval_ui import data, state
from rageval_ui.i18n import t
from rageval_ui.safe_text import md_escape

UPLOAD_BYTES = "dataset.upload_bytes"  # (name, bytes) of the last upload, for reading it again through a map
FIELDS = ("question", "contexts", "answer", "ground_truth", "id")
AUTO = ""  # the selectbox value for "the loader's own names"
SEPARATORS: dict[str, str | None] = {"auto": None, "blank": BLANK_LINE, "newline": "\n", "pipe": "|", "triple": "|||"}
PREVIEW_ROWS = 5


def remember(name: str, payload: bytes) -> None:
    """Keep an upload's bytes so the mapping step can read it again (a new upload starts the map afresh)."""
    st.session_state[UPLOAD_BYTES] = (name, payload)
    for key in [k for k in st.session_state if str(k).startswith("dataset.map.")]:
        del st.session_state[key]


def preview_frame(samples: list[Any]) -> pd.DataFrame:
    """The first rows as they will be read: id, question, contexts (how many, then each, separated by ‖), answer,
    ground truth, and the external scores a file brought."""
    rows = []
    for s in samples[:PREVIEW_ROWS]:
        row: dict[str, Any] = {"id": s.id, "question": s.question, "contexts": f"{len(s.contexts)}: " + " ‖ ".join(s.contexts),
                               "answer": s.answer, "ground_truth": s.ground_truth or ""}
        row.update(s.external_scores)
        rows.append(row)
    return pd.DataFrame(rows)


def _column_map(columns: list[str]) -> datasets.ColumnMap | None:
    """The map the widgets say (None: the loader's own names), or None with an error shown for a map that cannot be."""
    chosen: dict[str, str] = {}
    cells = st.columns(len(FIELDS))
    for cell, field in zip(cells, FIELDS):
        picked = cell.selectbox(md_escape(field), [AUTO, *columns], key=f"dataset.map.{field}",
                                format_func=lambda c: t("dataset.map_auto") if c == AUTO else c)
        if picked:
            chosen[field] = picked
    labels = {"auto": t("dataset.map_sep_auto"), "blank": t("dataset.map_sep_blank"), "newline": t("dataset.map_sep_newline"),
              "pipe": t("dataset.map_sep_pipe"), "triple": t("dataset.map_sep_triple")}
    sep = st.selectbox(t("dataset.map_sep"), list(SEPARATORS), key="dataset.map.sep", format_func=labels.__getitem__,
                       help=t("dataset.map_sep_help"))
    try:
        return datasets.ColumnMap(chosen, SEPARATORS[sep]) or None
    except ValueError as exc:
        st.error(t("dataset.map_invalid", problem=md_escape(str(exc))))
        return None


def step(ws: data.Workset) -> None:
    """The mapping step for the last upload, while it is the working dataset; open when it loaded no row."""
    kept = st.session_state.get(UPLOAD_BYTES)
    if not kept or not ws.source.startswith(f"upload: {kept[0]}"):
        return
    name, payload = kept
    columns = datasets.file_columns(payload, name)
    with st.expander(t("dataset.map", name=md_escape(name)), expanded=not ws.samples):
        st.caption(t("dataset.map_help"))
        column_map = _column_map(columns)
        loaded = datasets.load_dataset(payload, name, column_map=column_map)
        st.caption(t("dataset.map_counts", rows=len(loaded.samples), total=loaded.total_rows,
                     errors=len(loaded.errors), warnings=len(loaded.warnings)))
        if loaded.samples:
            st.dataframe(preview_frame(loaded.samples), hide_index=True, width="stretch")
        if loaded.issues:
            st.dataframe(data.issues_frame(loaded.issues[:20]), hide_index=True, width="stretch")
        if st.button(t("dataset.map_apply"), disabled=not loaded.samples or column_map is None, key="dataset.map.apply"):
            state.use_dataset(data.load_upload(name, payload, column_map))
            st.rerun()
