"""The shipped recording of a real small model's calls on the sample dataset (sample_data/replay/): what it
holds, whether it fits the loaded dataset, and the sidebar's note while it is the provider.

Apart from ``rageval_ui.demo`` (the one-click switch to it) so that the sidebar can show the note without importing the
module that switches the sidebar.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import streamlit as st

from rageval_ui import data, state
from rageval_ui.i18n import t
from rageval_ui.safe_text import md_escape

RECORDING = data.SAMPLE_DIR / "replay" / "ml_qa_ja_qwen2.5-coder-1.5b.jsonl"
EXPECTED = RECORDING.with_name(RECORDING.name.replace(".jsonl", ".expected.json"))


@dataclass(frozen=True)
class Recording:
    path: str
    model: str
    provider: str
    recorded_on: str  # YYYY-MM-DD of the first call
    metrics: tuple[str, ...]
    judges: tuple[str, ...]
    dataset_hash: str


@cache
def recording() -> Recording | None:
    """What the shipped recording holds (None when sample_data/replay is absent)."""
    if not RECORDING.is_file() or not EXPECTED.is_file():
        return None
    with RECORDING.open(encoding="utf-8") as fh:
        first = json.loads(fh.readline())
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    sample = data.load_sample_file(Path(expected["dataset"]).name)
    return Recording(str(RECORDING), str(first.get("model") or expected.get("model")), str(first.get("provider") or "?"),
                     str(first.get("recorded_at") or "")[:10], tuple(expected["metrics"]), tuple(expected["judges"]),
                     sample.content_hash)


def fits(ws: data.Workset | None) -> bool:
    """The recording answers this dataset (the sample it was recorded on, unedited)."""
    rec = recording()
    return rec is not None and ws is not None and ws.content_hash == rec.dataset_hash


def label() -> None:
    """In the sidebar while the shipped recording is the provider: say it is a recording, of which model, when."""
    rec = recording()
    if rec is not None and state.get(state.PROVIDER) == "replay" and (state.get(state.REPLAY_LOG) or "") == rec.path:
        st.info(t("demo.label", model=md_escape(rec.model), provider=md_escape(rec.provider), date=md_escape(rec.recorded_on)), icon="📼")
