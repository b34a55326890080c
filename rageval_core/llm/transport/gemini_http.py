"""Gemini's HTTP side shared by the chat adapter and the embedder: the SDK's client options and the mapping
of its errors onto ``ProviderError`` (so ``embeddings`` need only ``llm.transport``, never the chat adapter)."""

from __future__ import annotations

from typing import Any

from google.genai import errors as genai_errors
from google.genai import types

from rageval_core.llm.base import ProviderError
from rageval_core.llm.transport.guard import http_client
from rageval_core.llm.transport.http_errors import (
    kind_for_status,
    parse_retry_after,
    parse_retry_info,
    provider_error,
    transport_kind,
)


def http_options(base_url: str | None, timeout_s: float) -> types.HttpOptions:
    """Client HTTP options: optional base_url, timeout in milliseconds, no SDK retries, and the HTTP client
    whose body reads stop at the per-call deadline (``guard.http_client``). A plain-http endpoint gets no
    TLS context (the SDK builds one for each client otherwise, 0.1-0.5 s before the first request)."""
    options: dict[str, Any] = {"timeout": max(1, int(timeout_s * 1000)), "httpx_client": http_client(timeout_s, base_url)}
    if base_url:
        options["base_url"] = base_url
        if str(base_url).startswith("http://"):
            options["client_args"] = {"verify": False}
            options["async_client_args"] = {"verify": False}
    return types.HttpOptions(**options)


def map_gemini_error(exc: BaseException, label: str, timeout_s: float, secrets: tuple[str, ...]) -> ProviderError:
    """Turn a google-genai / httpx exception into a scrubbed ``ProviderError``."""
    if isinstance(exc, genai_errors.APIError):
        status = int(exc.code or 0)
        kind, retryable = kind_for_status(status)
        details = exc.details
        if status == 400 and "API_KEY_INVALID" in str(details):
            kind, retryable = "auth", False
        retry_after = parse_retry_info(details)
        if retry_after is None and getattr(exc, "response", None) is not None:
            try:
                retry_after = parse_retry_after(dict(exc.response.headers))
            except Exception:  # noqa: BLE001 - some response types have no headers mapping
                retry_after = None
        message = exc.message or exc.status or "error"
        return provider_error(label, f"HTTP {status} {exc.status or ''}: {message}".replace("  ", " "), kind=kind, status=status, retry_after=retry_after, retryable=retryable, secrets=secrets)
    transport = transport_kind(exc)
    if transport == "timeout":
        return provider_error(label, f"no answer within {timeout_s:g} s", kind="timeout", retryable=True, secrets=secrets)
    if transport == "connection":
        return provider_error(label, f"cannot reach the Gemini endpoint ({type(exc).__name__})", kind="connection", retryable=True, secrets=secrets)
    if isinstance(exc, ValueError):  # json.JSONDecodeError and pydantic validation errors
        return provider_error(label, f"malformed response body ({type(exc).__name__}: {exc})", kind="malformed_response", secrets=secrets)
    return provider_error(label, f"{type(exc).__name__}: {exc}", kind="bad_request", secrets=secrets)
