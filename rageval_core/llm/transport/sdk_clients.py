"""The SDK clients of the HTTP providers, built in one place: the openai SDK's ``OpenAI`` and ``AzureOpenAI``,
and the headers a gateway asks for.

Why here (below the adapters): the chat adapter and the embedder of one provider build the same client (same
endpoint, credentials, headers, no SDK retries, the guard's deadline-bound HTTP client), and ``embeddings``
may use ``llm.transport`` but never a chat adapter.

Gateways (a LiteLLM proxy, OpenRouter, an API management front door) often want headers of their own:
``RAGEVAL_EXTRA_HEADERS`` holds them, as a JSON object or as ``Name=value`` pairs separated by commas or new
lines (the OpenTelemetry ``OTEL_EXPORTER_OTLP_HEADERS`` form). Their values are remembered by the one
redaction step as they are read, since such a header often carries a credential, and they are never part of
a cache key, a call record or a message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from rageval_core.core import redact
from rageval_core.core.errors import ConfigError
from rageval_core.llm.transport.guard import http_client

__all__ = ["DEFAULT_AZURE_API_VERSION", "EXTRA_HEADERS_ENV", "HeaderError", "azure_api_version", "azure_client", "azure_credentials", "azure_endpoint", "extra_headers", "openai_client"]

EXTRA_HEADERS_ENV = "RAGEVAL_EXTRA_HEADERS"
# The newest GA data-plane version that has structured outputs (json_schema) and the Batch API (Azure's
# "API version lifecycle" page, read 2026-12-04); OPENAI_API_VERSION or --api-version choose another.
DEFAULT_AZURE_API_VERSION = "2024-10-21"


class HeaderError(ConfigError):
    """``RAGEVAL_EXTRA_HEADERS`` that cannot be read (the message never quotes a value)."""


def extra_headers(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The gateway headers from ``RAGEVAL_EXTRA_HEADERS`` (empty when unset); every value is remembered for
    redaction. Raises ``HeaderError`` naming the variable and the entry, never a value."""
    env = os.environ if environ is None else environ
    raw = (env.get(EXTRA_HEADERS_ENV) or "").strip()
    if not raw:
        return {}
    headers: dict[str, str] = {}
    if raw.startswith("{"):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise HeaderError(f"{EXTRA_HEADERS_ENV} is not a JSON object (column {exc.colno})") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise HeaderError(f"{EXTRA_HEADERS_ENV}: a JSON object of header names to string values is expected")
        headers = {str(k).strip(): v.strip() for k, v in data.items()}
    else:
        for n, item in enumerate((p for line in raw.splitlines() for p in line.split(",")), 1):
            if not item.strip():
                continue
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise HeaderError(f"{EXTRA_HEADERS_ENV}: entry {n} is not Name=value")
            headers[name.strip()] = value.strip()
    bad = [name for name in headers if not name or any(c in name for c in " :\t\r\n")]
    if bad:
        raise HeaderError(f"{EXTRA_HEADERS_ENV}: {', '.join(repr(b) for b in bad)} is not a header name")
    redact.remember(*(v for v in headers.values() if len(v) >= 8))  # short values (a title, "1") are not secrets
    return headers


def openai_client(api_key: str, base_url: str | None, timeout_s: float) -> Any:
    """``openai.OpenAI`` with the SDK's retries off, the guard's HTTP client and the gateway headers."""
    import openai

    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0,
                         default_headers=extra_headers() or None, http_client=http_client(timeout_s, base_url))


def azure_endpoint(base_url: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The Azure OpenAI resource endpoint: ``--base-url``, else ``AZURE_OPENAI_ENDPOINT`` (as the SDK reads it)."""
    env = os.environ if environ is None else environ
    return (base_url or (env.get("AZURE_OPENAI_ENDPOINT") or "").strip() or None)


def azure_credentials(explicit: str | None, environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """(key, Entra ID token) as the openai SDK picks them: a key typed in (sidebar), else ``AZURE_OPENAI_AD_TOKEN``
    (the SDK prefers it), else ``AZURE_OPENAI_API_KEY``. Both are remembered for redaction."""
    env = os.environ if environ is None else environ
    if explicit and explicit.strip():
        redact.remember(explicit.strip())
        return explicit.strip(), None
    token = (env.get("AZURE_OPENAI_AD_TOKEN") or "").strip() or None
    key = None if token else (env.get("AZURE_OPENAI_API_KEY") or "").strip() or None
    redact.remember(token, key)
    return key, token


def azure_client(
    *, api_key: str | None, ad_token: str | None, endpoint: str, api_version: str | None, timeout_s: float,
    environ: Mapping[str, str] | None = None,
) -> Any:
    """``openai.AzureOpenAI`` for a resource endpoint: the key as the ``api-key`` header, or an Entra ID token as
    ``Authorization: Bearer``; the API version from the argument, ``OPENAI_API_VERSION``, else
    ``DEFAULT_AZURE_API_VERSION``. The deployment is the ``model`` of each call (the SDK puts it in the path)."""
    import openai

    env = os.environ if environ is None else environ
    return openai.AzureOpenAI(
        api_key=api_key, azure_ad_token=ad_token, azure_endpoint=endpoint.rstrip("/"),
        api_version=azure_api_version(api_version, env), timeout=timeout_s, max_retries=0,
        default_headers=extra_headers(env) or None, http_client=http_client(timeout_s, endpoint),
    )


def azure_api_version(given: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The API version a call uses: ``given``, else ``OPENAI_API_VERSION``, else ``DEFAULT_AZURE_API_VERSION``."""
    env = os.environ if environ is None else environ
    return given or (env.get("OPENAI_API_VERSION") or "").strip() or DEFAULT_AZURE_API_VERSION
