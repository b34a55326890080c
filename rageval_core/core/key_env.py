"""Which environment variables hold a provider's key or token, defined once: ``llm.keys`` reads a key from them and
``core.redact`` searches every text it cleans for their values, so a key added for a new provider is redacted the
moment it can be used."""

from __future__ import annotations

# Provider id -> environment variables checked in order.
KEY_ENV_VARS: dict[str, tuple[str, ...]] = {
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "openai-compatible": ("OPENAI_API_KEY",),
    # The openai SDK's own variables: a key, or a Microsoft Entra ID bearer token (which the SDK prefers).
    "azure-openai": ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN"),
    "anthropic": ("ANTHROPIC_API_KEY",),
    # A Vertex API key (express mode) as google-genai reads it; a project uses application default credentials.
    "vertex": ("GOOGLE_API_KEY",),
}

# Secrets read from the environment by other parts (a Phoenix with auth, a gateway's extra headers): redacted too.
OTHER_SECRET_ENV_VARS: tuple[str, ...] = ("PHOENIX_API_KEY", "RAGEVAL_EXTRA_HEADERS")
