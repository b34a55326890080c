"""The no-key demo that compares something real: the shipped recording of a real small model's calls on the
sample dataset (sample_data/replay/), replayed through the ``replay`` provider in one click.

Offline, both methods come from the same heuristic and their agreement measures nothing; the recording's
answers came from an LLM, so decomposed vs judge is a real comparison, reproducible with no key. The page says
it is a recording, with the model and the date it was recorded.
"""

from __future__ import annotations

import streamlit as st

from rageval_ui import nav, sidebar, state
from rageval_ui.i18n import t
from rageval_ui.recording import EXPECTED, RECORDING, Recording, fits, label, recording
from rageval_ui.safe_text import md_escape

__all__ = ["EXPECTED", "RECORDING", "Recording", "fits", "label", "offer", "recording", "run_banner"]


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


def offer(where: str, *, primary: bool = True) -> None:
    """The one-click button (on a dataset the recording fits); after the click, go to Evaluate. Not ``primary`` where
    the page's primary button is the next step of the tour (the Dataset page)."""
    rec = recording()
    if st.session_state.pop("demo.go", False):
        st.switch_page(nav.EVALUATE.path)
    if rec is None or not fits(st.session_state.get(state.DATASET)) or state.get(state.PROVIDER) == "replay":
        return
    st.button(t("demo.use", model=md_escape(rec.model), date=md_escape(rec.recorded_on)), key=f"demo.use.{where}", on_click=_use,
              help=t("demo.use_help"), type="primary" if primary else "secondary")


def run_banner(provider: str | None, model: str | None) -> None:
    """Above a replayed run's results: these are a recording's answers (model, date), not live calls."""
    rec = recording()
    if provider != "replay":
        return
    if rec is not None and model == rec.model:
        st.info(t("demo.run", model=md_escape(rec.model), provider=md_escape(rec.provider), date=md_escape(rec.recorded_on)), icon="📼")
    else:
        st.info(t("demo.run_other", model=md_escape(model or "?")), icon="📼")
