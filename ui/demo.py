"""The no-key demo that compares something real: the shipped recording of a real small model's calls on the
sample dataset (sample_data/replay/), replayed through the ``replay`` provider in one click.

Offline, both methods come from the same heuristic and their agreement measures nothing; the recording's
answers came from an LLM, so decomposed vs judge is a real comparison, reproducible with no key. The page says
it is a recording, with the model and the date it was recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import streamlit as st

from ui import data, nav, sidebar, state
from ui.i18n import t

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


def _use() -> None:
    rec = recording()
    if rec is None:
        return
    sidebar.use_replay(rec.path)
    choices = {"evaluate.rows": "all", "evaluate.metrics": list(rec.metrics),
               "evaluate.judges": [f"preset:{j}" for j in rec.judges], "evaluate.economy": False}
    for key, value in choices.items():
        st.session_state[key] = value
        st.session_state[f"{key}.kept"] = value
    st.session_state["demo.go"] = True


def offer(where: str) -> None:
    """The one-click button (on a dataset the recording fits); after the click, go to Evaluate."""
    rec = recording()
    if st.session_state.pop("demo.go", False):
        st.switch_page(nav.EVALUATE.path)
    if rec is None or not fits(st.session_state.get(state.DATASET)) or state.get(state.PROVIDER) == "replay":
        return
    st.button(t("demo.use", model=rec.model, date=rec.recorded_on), key=f"demo.use.{where}", on_click=_use,
              help=t("demo.use_help"), type="primary")


def label() -> None:
    """In the sidebar while the shipped recording is the provider: say it is a recording, of which model, when."""
    rec = recording()
    if rec is not None and state.get(state.PROVIDER) == "replay" and (state.get(state.REPLAY_LOG) or "") == rec.path:
        st.info(t("demo.label", model=rec.model, provider=rec.provider, date=rec.recorded_on), icon="📼")


def run_banner(provider: str | None, model: str | None) -> None:
    """Above a replayed run's results: these are a recording's answers (model, date), not live calls."""
    rec = recording()
    if provider != "replay":
        return
    if rec is not None and model == rec.model:
        st.info(t("demo.run", model=rec.model, provider=rec.provider, date=rec.recorded_on), icon="📼")
    else:
        st.info(t("demo.run_other", model=model or "?"), icon="📼")
