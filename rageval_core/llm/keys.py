"""API keys: where they come from and how they are kept out of messages.

A key lives only in memory (the provider config and the SDK client). Every key resolved here is remembered
by the one redaction step (``rageval_core.core.redact``), and every message built from an SDK exception goes
through ``scrub`` (that step), so a server or proxy that echoes the key cannot leak it into the call log,
the response cache, exports or the UI.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from rageval_core.core import redact as redact_module

from rageval_core.core.key_env import KEY_ENV_VARS  # noqa: E402,F401  (the table lives in core: redaction needs it too)

# Local OpenAI-compatible servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_KEY = "not-needed"
SIDEBAR_KEY_FIELD = "API key"

REDACTED = redact_module.REDACTED


def key_from_env(provider: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The first non-empty key among the provider's environment variables."""
    env = os.environ if environ is None else environ
    for name in KEY_ENV_VARS.get(provider, ()):
        value = (env.get(name) or "").strip()
        if value:
            return value
    return None


def resolve_api_key(provider: str, explicit: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The key to use: the sidebar value, then the environment; a placeholder for local servers."""
    if explicit and explicit.strip():
        redact_module.remember(explicit.strip())  # a key typed in the sidebar is redacted everywhere from now on
        return explicit.strip()
    found = key_from_env(provider, environ)
    if found is None and provider == "openai-compatible":
        return PLACEHOLDER_KEY
    redact_module.remember(found)
    return found


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` through the one redaction step, with ``secrets`` remembered as known values from now on."""
    redact_module.remember(*(s for s in secrets if s != PLACEHOLDER_KEY))
    return redact_module.redact(text)


def missing_key_message(provider: str, label: str, key_field: str | None = SIDEBAR_KEY_FIELD) -> str:
    """What to tell a user who chose a provider without a key (no traceback, names where to set it).
    ``key_field`` is the front end's field for typing a key (the sidebar's), None where keys come from the
    environment only (the CLI)."""
    names = KEY_ENV_VARS.get(provider, ())
    env = " or ".join(names) if names else "the provider's key variable"
    env_ja = " または ".join(names) if names else "プロバイダのキーの環境変数"
    example = f" (e.g. export {names[0]}=...)" if names else ""
    if key_field is None:
        return (
            f"{label} needs an API key: set the environment variable {env}{example} before running the command "
            f"(keys are read from the environment only). / {label} には API キーが必要です: "
            f"環境変数 {env_ja} を設定してから実行してください。"
        )
    return (
        f"{label} needs an API key: set the environment variable {env}{example} before starting the app "
        f"or the CLI, or paste the key into the sidebar field '{key_field}'. "
        f"/ {label} には API キーが必要です: 環境変数 {env_ja} を設定してからアプリまたは CLI を起動するか、"
        f"サイドバーの「{key_field}」欄に入力してください。"
    )
