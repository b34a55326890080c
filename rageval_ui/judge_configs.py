"""Evaluate's saved judge configurations: pick several to score the same rows, add one, import a file.

Each picked configuration becomes its own scorers with its own provider stack (``rageval_core.scoring.judges``);
the list is saved in the state folder in the ``--judges FILE`` format. Keys are never stored: a
configuration names its key's environment variable, or uses the sidebar key when it is the sidebar's provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from rageval_core.scoring.judges import saved
from rageval_core.scoring.judges.bound import judge_scorers
from rageval_core.scoring.judges.config import JudgeConfig, JudgeConfigError, parse_judges
from rageval_core.providers.config import PROVIDERS
from rageval_ui.i18n import core, t
from rageval_ui.safe_text import md_escape

if TYPE_CHECKING:
    from rageval_core.providers.config import ProviderConfig

PICKED = "evaluate.judge_configs"


def _problems(exc: Exception) -> str:
    """A judge configuration's problems in the UI language (each one the core said; other errors as they are)."""
    return "; ".join(md_escape(core(p)) for p in getattr(exc, "problems", None) or [str(exc)])


def _label(j: JudgeConfig) -> str:
    return f"{j.id} — {j.provider}/{j.model or PROVIDERS[j.provider].default_model or '?'} · {j.method}"


def pick(config: ProviderConfig, *, economy: bool = False) -> list[Any]:
    """The multiselect of saved configurations and the scorers of those picked (bound to their own stacks)."""
    try:
        judges = saved.load_saved()
    except JudgeConfigError as exc:
        st.error(_problems(exc))
        judges = []
    by_id = {j.id: j for j in judges}
    if st.session_state.get(PICKED):
        st.session_state[PICKED] = [i for i in st.session_state[PICKED] if i in by_id]
    chosen = st.multiselect(t("evaluate.judge_configs"), list(by_id), format_func=lambda i: _label(by_id[i]), key=PICKED,
                            help=t("evaluate.judge_configs_help"), placeholder=t("evaluate.judge_configs_placeholder"))
    _editor(by_id)
    if not chosen:
        return []
    return judge_scorers([by_id[i] for i in chosen], config, economy=economy)


def _editor(by_id: dict[str, JudgeConfig]) -> None:
    with st.expander(t("evaluate.judge_configs_add")):
        with st.form("evaluate.judge_form", border=False):
            cols = st.columns(3)
            jid = cols[0].text_input("id", key="evaluate.jc.id")
            provider = cols[1].selectbox(t("evaluate.jc_provider"), [p for p in PROVIDERS if p != "replay"], key="evaluate.jc.provider")
            model = cols[2].text_input(t("evaluate.jc_model"), key="evaluate.jc.model")
            cols = st.columns(3)
            base_url = cols[0].text_input(t("evaluate.jc_base_url"), key="evaluate.jc.base_url")
            method = cols[1].text_input(t("evaluate.jc_method"), value="rubric5", key="evaluate.jc.method")
            metrics = cols[2].text_input(t("evaluate.jc_metrics"), key="evaluate.jc.metrics")
            cols = st.columns(3)
            temperature = cols[0].text_input("temperature", key="evaluate.jc.temperature")
            rpm = cols[1].text_input("rpm", key="evaluate.jc.rpm")
            key_env = cols[2].text_input("api_key_env", key="evaluate.jc.key_env")
            if st.form_submit_button(t("evaluate.jc_save")):
                entry = {"id": jid.strip() or None, "provider": provider, "model": model.strip() or None,
                         "base_url": base_url.strip() or None, "method": method.strip() or "rubric5",
                         "metrics": metrics.strip() or None, "temperature": temperature.strip() or None,
                         "rpm": rpm.strip() or None, "api_key_env": key_env.strip() or None}
                try:
                    judge = parse_judges([{k: v for k, v in entry.items() if v is not None}])[0]
                    saved.add(judge)
                except JudgeConfigError as exc:
                    st.error(_problems(exc))
                else:
                    st.toast(t("evaluate.jc_saved", id=md_escape(judge.id)))
                    st.rerun()
        upload = st.file_uploader(t("evaluate.jc_import"), type=["yaml", "yml", "json"], key="evaluate.jc.upload")
        if upload is not None and st.button(t("evaluate.jc_import_button"), key="evaluate.jc.import"):
            try:
                for judge in saved.import_text(upload.getvalue().decode("utf-8"), upload.name):
                    saved.add(judge)
            except (JudgeConfigError, UnicodeDecodeError) as exc:
                st.error(_problems(exc))
            else:
                st.rerun()
        if by_id:
            gone = st.selectbox(t("evaluate.jc_remove"), ["", *by_id], key="evaluate.jc.remove")
            if gone and st.button(t("evaluate.jc_remove_button"), key="evaluate.jc.remove_button"):
                saved.remove(gone)
                st.rerun()
