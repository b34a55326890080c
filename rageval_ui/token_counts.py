"""How the Evaluate page's estimate counts tokens, said beside it: by OpenAI's tokenizer (openai, azure-openai),
approximately elsewhere, or — on a click, since it sends requests — by Claude's or Gemini's token-counting endpoint
(``rageval_core.providers.tokens``). A counted estimate is kept for this session while the provider settings, rows
and scorers stay the same; any change brings the offline estimate back."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import streamlit as st

from rageval_core import run as runner
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.tokens import COUNTING_ENDPOINTS, token_counter
from rageval_ui import widgets
from rageval_ui.i18n import t

COUNTED = "evaluate.counted_estimate"  # (signature, Estimate) counted by the provider's endpoint


def _signature(config: ProviderConfig, samples: Sequence[Any], scorers: Sequence[Any]) -> str:
    """What a counted estimate depends on: the provider settings (no key), the rows and the scorers."""
    parts = [json.dumps(config.to_dict(), sort_keys=True, default=str), *(s.id for s in samples),
             *(f"{s.name}:{s.method}:{getattr(s, 'describe', lambda: {})()}" for s in scorers)]
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


def estimate(config: ProviderConfig, samples: Sequence[Any], scorers: Sequence[Any]) -> Any:
    """The estimate to show: the one counted by the endpoint when it still applies, else the offline one."""
    kept = st.session_state.get(COUNTED)
    if kept is not None and kept[0] == _signature(config, samples, scorers):
        return kept[1]
    return runner.estimate(samples, scorers, provider=config.provider, model=config.model)


def note(config: ProviderConfig, samples: Sequence[Any], scorers: Sequence[Any], est: runner.Estimate, *, usable: bool) -> None:
    """The caption saying how the tokens were counted, and for Claude / Gemini / Vertex a button that counts them
    with the provider's endpoint (``usable``: the configuration has what it needs, e.g. a key)."""
    counted = [n for n in est.tokens_by if not n.startswith("approximate")]
    failed = [n[len("approximate "):] for n in est.tokens_by if n.startswith("approximate (")]
    if counted:
        said = t("evaluate.tokens_counted", by=widgets.md_escape(", ".join(counted)))
        st.caption(said + ("" if est.tokens_exact else " " + t("evaluate.tokens_rest_approximate")))
    else:
        st.caption(t("evaluate.tokens_approximate") + "".join(f" {widgets.md_escape(f)}" for f in failed))
    if config.provider in COUNTING_ENDPOINTS and usable and not est.tokens_exact:
        if st.button(t("evaluate.count_tokens"), key="evaluate.count_tokens", help=t("evaluate.count_tokens_help")):
            with st.spinner(t("evaluate.counting")):
                counted = runner.estimate(samples, scorers, provider=config.provider, model=config.model,
                                          counter=token_counter(config))
            st.session_state[COUNTED] = (_signature(config, samples, scorers), counted)
            st.rerun()
