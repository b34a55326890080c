"""The sidebar shown on every page: which provider and model judge, the API key, rate limits.

The key is a password field bound to session state only; it is handed to ``ProviderConfig`` (whose repr
hides it) when a page builds an LLM and is never written anywhere. ``check_config`` messages are shown as
they are, so a missing key names the environment variable or this field instead of raising.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from rageval_core.core.errors import RagevalError
from rageval_core.llm.transport.sdk_clients import DEFAULT_AZURE_API_VERSION, EXTRA_HEADERS_ENV
from rageval_core.providers.config import PROVIDERS, ProviderConfig, ProviderInfo, check_config
from rageval_ui import phoenix, recording, state
from rageval_ui.errors import unexpected_error
from rageval_ui.i18n import core, t, t_opt
from rageval_ui.safe_text import md_escape


def sidebar_names(provider: str | None = None) -> dict[str, str | None]:
    """How check_config names each setting here: the sidebar's fields as ``provider`` labels them (Azure's model
    field is its chat deployment, its base URL the endpoint); the CLI names its flags instead."""
    provider = provider or state.get(state.PROVIDER) or "offline"
    names = {
        "base_url": t("sidebar.name.base_url"),
        "model": t("sidebar.name.model"),
        "embedding_model": t("sidebar.name.embedding_model"),
        "replay_log": t("sidebar.name.replay_log"),
        "timeout": t("sidebar.name.timeout"),
        "concurrency": t("sidebar.name.concurrency"),
        "rpm": t("sidebar.name.rpm"),
        "tpm": t("sidebar.name.tpm"),
        "api_key": t("sidebar.name.api_key"),
        "api_version": t("sidebar.name.api_version"),
        "project": t("sidebar.name.project"),
        "location": t("sidebar.name.location"),
    }
    if provider == "azure-openai":
        names.update(base_url=t("sidebar.name.endpoint"), model=t("sidebar.name.deployment"),
                     embedding_model=t("sidebar.name.embedding_deployment"))
    return names


def current_config() -> ProviderConfig:
    """The provider configuration the sidebar describes right now (empty fields mean the provider default)."""
    return config_from(st.session_state)


def config_from(values: Mapping[str, Any]) -> ProviderConfig:
    """The ``ProviderConfig`` the sidebar's fields in ``values`` (session state) describe: one place maps every
    field, a new provider's included, onto the configuration a run is built from."""

    def get(key: str) -> Any:
        return values.get(key, state.DEFAULTS.get(key))  # a page run before state.init (AppTest) gets the defaults

    def text(key: str) -> str | None:
        return (get(key) or "").strip() or None

    rpm = int(get(state.RPM) or 0)
    tpm = int(get(state.TPM) or 0)
    return ProviderConfig(
        provider=get(state.PROVIDER) or "offline",
        model=text(state.MODEL),
        base_url=text(state.BASE_URL),
        api_key=text(state.API_KEY),
        embedding_model=text(state.EMBEDDING_MODEL),
        rpm=rpm or None,
        tpm=tpm or None,
        concurrency=max(1, int(get(state.CONCURRENCY) or 1)),
        replay_log=text(state.REPLAY_LOG),
        api_version=text(state.API_VERSION),
        project=text(state.PROJECT),
        location=text(state.LOCATION),
    )


def config_problems() -> list[str]:
    """Human messages of what keeps the current configuration from working (empty when it is usable)."""
    try:
        config = current_config()
        problems = list(check_config(config, names=sidebar_names(config.provider)))
    except RagevalError as exc:
        return [t("sidebar.check_failed", error=core(str(exc)))]
    except Exception as exc:  # noqa: BLE001 - last resort: the sidebar renders outside run_page, on every page
        return [t("sidebar.check_failed", error=unexpected_error(exc))]
    return [core(p) for p in problems]


def embedding_note() -> str | None:
    """The note shown when runs will embed with the bundled offline encoder: the same choice and summary the CLI
    prints and the run settings record (``embedding_choice``), with what to do about it for this provider (Claude
    has no embedding model at all; elsewhere an embedding model or deployment can be named)."""
    from rageval_core.providers.config import FALLBACK_NO_PROVIDER_EMBEDDINGS, embedding_choice

    try:
        config = current_config()
        choice = embedding_choice(config)
    except Exception:  # noqa: BLE001 - last resort: a note must never break the sidebar (outside run_page)
        return None
    if not choice.fallback:
        return None
    if choice.fallback == FALLBACK_NO_PROVIDER_EMBEDDINGS:
        return t("sidebar.embedding_none", summary=choice.describe())
    field = t("sidebar.embedding_deployment") if config.provider == "azure-openai" else t("sidebar.embedding_model")
    return t("sidebar.embedding_fallback", summary=choice.describe(), field=field)


def show_problems(problems: list[str]) -> None:
    """``config_problems`` as warnings, in the sidebar and beside every button that would send a call."""
    for message in problems:
        st.warning(md_escape(message), icon="🔑")


def provider_name(pid: str) -> str:
    """A provider's label in the UI language (the registry's English label when the catalogue has none)."""
    info = PROVIDERS.get(pid)
    return t_opt(f"provider.{pid}", info.label if info else pid)


def provider_label() -> str:
    """What judges right now, for page headers: provider label and model, as Markdown (the model is typed by the
    user, so the whole label is escaped)."""
    config = current_config()
    info = PROVIDERS.get(config.provider)
    if info is None:
        return md_escape(config.provider)
    model = config.model or info.default_model or t("sidebar.default_model")
    return md_escape(f"{provider_name(config.provider).split(' (')[0]} · {model}")


def is_offline() -> bool:
    return (state.get(state.PROVIDER) or "offline") == "offline"


PER_PROVIDER = (state.MODEL, state.API_KEY, state.BASE_URL, state.EMBEDDING_MODEL, state.REPLAY_LOG, state.API_VERSION,
                state.PROJECT, state.LOCATION)
EMBEDS = ("gemini", "openai", "openai-compatible", "azure-openai", "vertex")  # providers with an embedding field
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


def use_replay(log: str) -> None:
    """Switch the sidebar to the replay provider reading ``log`` (call before the sidebar is drawn, e.g. from
    a button's on_click): the log is put where ``_switch_fields`` brings the replay fields back from."""
    kept: dict[str, dict[str, str]] = st.session_state.setdefault(_KEPT, {})
    kept["replay"] = {**{key: "" for key in PER_PROVIDER}, state.REPLAY_LOG: log}
    state.set_kept(state.PROVIDER, "replay")


def render() -> None:
    """Draw the provider controls into the sidebar."""
    with st.sidebar:
        st.subheader(t("sidebar.heading"))
        ids = list(PROVIDERS)
        if state.get(state.PROVIDER) not in ids:
            state.set_kept(state.PROVIDER, "offline" if "offline" in ids else ids[0])
        provider = st.selectbox(
            t("sidebar.provider"),
            ids,
            **state.bind(state.PROVIDER),
            format_func={pid: provider_name(pid) for pid in ids}.get,  # fixed per run: AppTest formats later
            help=t("sidebar.provider_help"),
        )
        _switch_fields(provider)
        info = PROVIDERS[provider]
        if info.description:
            st.caption(md_escape(t_opt(f"provider.{provider}.description", info.description)))
        if provider != "offline":
            _model_fields(provider, info)
        if provider == "replay":
            st.text_input(t("sidebar.replay_log"), placeholder="path/to/calls.jsonl",
                          **state.bind(state.REPLAY_LOG))
        if provider != "offline":
            with st.expander(t("sidebar.limits")):
                st.number_input(t("sidebar.rpm"), min_value=0, step=10, **state.bind(state.RPM))
                st.number_input(t("sidebar.tpm"), min_value=0, step=1000, **state.bind(state.TPM))
                st.number_input(t("sidebar.concurrency"), min_value=1, max_value=64, **state.bind(state.CONCURRENCY))

        problems = config_problems()
        show_problems(problems)
        note = embedding_note()
        if note:
            st.info(md_escape(note), icon="🧭")
        if provider == "offline":
            st.info(t("sidebar.offline_notice"), icon="🧮")
        elif provider == "replay":
            recording.label()
        elif not problems:
            model = (state.get(state.MODEL) or "").strip() or info.default_model
            st.success(t("sidebar.judging_with", provider=md_escape(provider_name(provider)), model=md_escape(model)))
        phoenix.settings()
    state.remember_widgets()  # as drawn, or as set above (the provider switch): put back by state.keep_widgets


def _model_fields(provider: str, info: ProviderInfo) -> None:
    """The fields of an API provider (a local server's and a gateway's too): model, key, where it is, embeddings.
    Each is a kept widget (``state.bind``); the key lives in this session's memory only."""
    azure = provider == "azure-openai"
    st.text_input(t("sidebar.deployment") if azure else t("sidebar.model"), **state.bind(state.MODEL),
                  placeholder=info.default_model or ("my-gpt-4o-mini" if azure else ""),
                  help=t("sidebar.deployment_help") if azure else t("sidebar.model_help"))
    if info.needs_key or provider in ("openai-compatible", "vertex"):
        env_names = " / ".join(info.key_env_vars) if info.key_env_vars else t("sidebar.an_env_var")
        st.text_input(t("sidebar.api_key"), **state.bind(state.API_KEY), type="password",
                      help=t("sidebar.vertex_key_help", env=md_escape(env_names)) if provider == "vertex"
                      else t("sidebar.api_key_help", env=md_escape(env_names)))
    if provider == "openai-compatible":
        st.text_input(t("sidebar.base_url"), placeholder="http://127.0.0.1:8080/v1", **state.bind(state.BASE_URL),
                      help=t("sidebar.base_url_gateway_help"))
        st.caption(t("sidebar.gateway_note", env=md_escape(EXTRA_HEADERS_ENV)))
    elif azure:
        st.text_input(t("sidebar.endpoint"), placeholder="https://my-resource.openai.azure.com",
                      **state.bind(state.BASE_URL), help=t("sidebar.endpoint_help"))
        st.text_input(t("sidebar.api_version"), placeholder=DEFAULT_AZURE_API_VERSION, **state.bind(state.API_VERSION),
                      help=t("sidebar.api_version_help", default=DEFAULT_AZURE_API_VERSION))
    elif provider == "vertex":
        st.text_input(t("sidebar.project"), placeholder="my-project", **state.bind(state.PROJECT),
                      help=t("sidebar.project_help"))
        st.text_input(t("sidebar.location"), placeholder="global", **state.bind(state.LOCATION),
                      help=t("sidebar.location_help"))
    if provider in ("anthropic", "vertex"):
        st.text_input(t("sidebar.base_url_optional"), **state.bind(state.BASE_URL),
                      placeholder="https://api.anthropic.com" if provider == "anthropic" else "",
                      help=t("sidebar.base_url_anthropic_help") if provider == "anthropic" else t("sidebar.base_url_vertex_help"))
    if provider in EMBEDS:
        st.text_input(
            t("sidebar.embedding_deployment") if azure else t("sidebar.embedding_model"),
            **state.bind(state.EMBEDDING_MODEL),
            placeholder=info.default_embedding_model or ("my-text-embedding-3-small" if azure else t("sidebar.embedding_placeholder")),
            help=t("sidebar.embedding_deployment_help") if azure else t("sidebar.embedding_help"),
        )
