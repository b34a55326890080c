"""API keys: where they come from and how they are kept out of messages.

A key lives only in memory (the provider config and the SDK client). Every message built from an SDK
exception goes through ``scrub`` so a server or proxy that echoes the key cannot leak it into the call
log, the response cache, exports or the UI.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

# Provider id -> environment variables checked in order.
KEY_ENV_VARS: dict[str, tuple[str, ...]] = {
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "openai-compatible": ("OPENAI_API_KEY",),
}
# Local OpenAI-compatible servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_KEY = "not-needed"
SIDEBAR_KEY_FIELD = "API key"

# Shapes of well-known keys, scrubbed even when we do not know the exact value (e.g. a key from the
# environment that the server echoes back in a different form).
_KEY_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)(x-goog-api-key['\"]?\s*[:=]\s*['\"]?)[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)([?&]key=)[A-Za-z0-9._\-]{8,}"),
)
REDACTED = "***"


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
        return explicit.strip()
    found = key_from_env(provider, environ)
    if found is None and provider == "openai-compatible":
        return PLACEHOLDER_KEY
    return found


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with the given secrets and anything shaped like an API key replaced by ``***``."""
    out = str(text)
    for secret in secrets:
        if secret and secret != PLACEHOLDER_KEY and len(secret) >= 4:
            out = out.replace(secret, REDACTED)
    for pattern in _KEY_PATTERNS:
        out = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, out)
    return out


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
