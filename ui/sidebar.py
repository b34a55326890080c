"""The sidebar shown on every page: which provider and model judge, the API key, rate limits.

The key is a password field bound to session state only; it is handed to ``ProviderConfig`` (whose repr
hides it) when a page builds an LLM and is never written anywhere. ``check_config`` messages are shown as
they are, so a missing key names the environment variable or this field instead of raising.
"""

from __future__ import annotations

import streamlit as st

from rageval_core.llm.registry import PROVIDERS, ProviderConfig, check_config
from ui import state

OFFLINE_NOTICE = (
    "**Offline heuristic judge active** — heuristic, ignores prompt text. Scores come from lexical "
    "coverage and bundled embeddings computed on the structured inputs; edited prompts and rubric "
    "wording do not change them. Choose an API provider to judge with a real model."
)

# How check_config names each setting here: the sidebar's fields (the CLI names its flags instead).
SIDEBAR_NAMES: dict[str, str | None] = {
    "base_url": "sidebar field 'Base URL'",
    "model": "sidebar field 'Model'",
    "embedding_model": "sidebar field 'Embedding model'",
    "replay_log": "choose a recorded JSONL file in the sidebar",
    "timeout": "Timeout",
    "concurrency": "Concurrency (sidebar)",
    "rpm": "Requests per minute (sidebar)",
    "tpm": "Tokens per minute (sidebar)",
    "api_key": "API key",
}

COMPAT_EMBEDDING = (
    "OpenAI-compatible runs need the embedding model your server serves (sidebar field 'Embedding model'), "
    "e.g. nomic-embed-text."
)


def current_config() -> ProviderConfig:
    """The provider configuration the sidebar describes right now (empty fields mean the provider default)."""
    provider = state.get(state.PROVIDER) or "offline"
    rpm = int(state.get(state.RPM) or 0)
    tpm = int(state.get(state.TPM) or 0)
    return ProviderConfig(
        provider=provider,
        model=(state.get(state.MODEL) or "").strip() or None,
        base_url=(state.get(state.BASE_URL) or "").strip() or None,
        api_key=(state.get(state.API_KEY) or "").strip() or None,
        embedding_model=(state.get(state.EMBEDDING_MODEL) or "").strip() or None,
        rpm=rpm or None,
        tpm=tpm or None,
        concurrency=max(1, int(state.get(state.CONCURRENCY) or 1)),
        replay_log=(state.get(state.REPLAY_LOG) or "").strip() or None,
    )


def config_problems() -> list[str]:
    """Human messages of what keeps the current configuration from working (empty when it is usable)."""
    try:
        config = current_config()
        problems = list(check_config(config, names=SIDEBAR_NAMES))
    except Exception as exc:  # noqa: BLE001 - a broken registry must still not show a traceback
        return [f"Could not check the provider configuration: {exc}"]
    if config.provider == "openai-compatible" and not config.embedding_model:
        # Runs build the embedder up front (answer relevancy / correctness use it), so say so before Start.
        problems.append(COMPAT_EMBEDDING)
    return problems


def show_problems(problems: list[str]) -> None:
    """``config_problems`` as warnings, in the sidebar and beside every button that would send a call."""
    for message in problems:
        st.warning(message, icon="🔑")


def provider_label() -> str:
    """What judges right now, for page headers: provider label and model."""
    config = current_config()
    info = PROVIDERS.get(config.provider)
    if info is None:
        return config.provider
    return f"{info.label.split(' (')[0]} · {config.model or info.default_model or 'default model'}"


def is_offline() -> bool:
    return (state.get(state.PROVIDER) or "offline") == "offline"


PER_PROVIDER = (state.MODEL, state.API_KEY, state.BASE_URL, state.EMBEDDING_MODEL, state.REPLAY_LOG)
_KEPT = "sidebar.kept"  # {provider: {field: value}}, in this session's memory only
_SHOWN = "sidebar.provider_shown"


def _switch_fields(provider: str) -> None:
    """Give each provider its own model, key, URL and log fields for the session.

    Streamlit forgets a widget's value while it is hidden (the key field under the offline provider), and a
    key typed for one provider must never be sent to another. So on a provider change the fields are put
    aside for the old provider and the new one's are brought back (empty the first time).
    """
    kept: dict[str, dict[str, str]] = st.session_state.setdefault(_KEPT, {})
    previous = st.session_state.get(_SHOWN)
    if previous == provider:
        return
    if previous is not None:
        kept[previous] = {key: st.session_state.get(key) or "" for key in PER_PROVIDER}
    for key in PER_PROVIDER:
        st.session_state[key] = kept.get(provider, {}).get(key, "")
    st.session_state[_SHOWN] = provider


def render() -> None:
    """Draw the provider controls into the sidebar."""
    with st.sidebar:
        st.subheader("Judge provider")
        ids = list(PROVIDERS)
        if state.get(state.PROVIDER) not in ids:
            st.session_state[state.PROVIDER] = "offline" if "offline" in ids else ids[0]
        provider = st.selectbox(
            "Provider",
            ids,
            key=state.PROVIDER,
            format_func=lambda pid: PROVIDERS[pid].label,
            help="Offline needs no key. API providers read their key from the environment or the field below.",
        )
        _switch_fields(provider)
        info = PROVIDERS[provider]
        if info.description:
            st.caption(info.description)
        if provider != "offline":
            st.text_input("Model", key=state.MODEL, placeholder=info.default_model or "", help="Empty: the provider default.")
        if info.needs_key or provider == "openai-compatible":
            env_names = " or ".join(info.key_env_vars) if info.key_env_vars else "an environment variable"
            st.text_input(
                "API key",
                key=state.API_KEY,
                type="password",
                help=f"Kept in this browser session only, never saved. Empty: read from {env_names}.",
            )
        if provider == "openai-compatible":
            st.text_input("Base URL", key=state.BASE_URL, placeholder="http://127.0.0.1:8080/v1")
        if provider in ("gemini", "openai", "openai-compatible"):
            st.text_input(
                "Embedding model",
                key=state.EMBEDDING_MODEL,
                placeholder=info.default_embedding_model or "required, e.g. nomic-embed-text",
                help="Used by answer relevancy and answer correctness. Empty: the provider default.",
            )
        if provider == "replay":
            st.text_input("Replay log (JSON Lines)", key=state.REPLAY_LOG, placeholder="path/to/calls.jsonl")
        if provider != "offline":
            with st.expander("Rate limits and concurrency"):
                st.number_input("Requests per minute (0 = no limit)", min_value=0, step=10, key=state.RPM)
                st.number_input("Tokens per minute (0 = no limit)", min_value=0, step=1000, key=state.TPM)
                st.number_input("Parallel calls", min_value=1, max_value=64, key=state.CONCURRENCY)

        problems = config_problems()
        show_problems(problems)
        if provider == "offline":
            st.info(OFFLINE_NOTICE, icon="🧮")
        elif not problems:
            model = (state.get(state.MODEL) or "").strip() or info.default_model
            st.success(f"Judging with {info.label} · {model}")
