"""Shared pieces of turning SDK exceptions into ``ProviderError``: status → kind, Retry-After parsing.

Kinds and retryability (the retry wrapper only looks at ``retryable``):
429 rate_limit, 408 timeout, 409/5xx server and transport timeouts/connection errors are retryable;
400/404/422 bad_request, 401/403 auth and malformed responses are not (retrying a parse failure would
only hide it).
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from rageval_core.llm.base import ProviderError
from rageval_core.llm.keys import scrub

_MAX_MESSAGE = 400


def kind_for_status(status: int) -> tuple[str, bool]:
    """(kind, retryable) for an HTTP status."""
    if status == 429:
        return "rate_limit", True
    if status == 408:
        return "timeout", True
    if status in (401, 403):
        return "auth", False
    if status == 409 or status >= 500:
        return "server", True
    return "bad_request", False


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date); None when absent."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    value = lowered.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - (time.time() if now is None else now))


_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)s\s*$")


def parse_retry_info(details: Any) -> float | None:
    """Gemini's ``google.rpc.RetryInfo`` ``retryDelay`` (e.g. ``"7s"``, ``"1.5s"``) from an error body."""
    items: Iterable[Any]
    if isinstance(details, Mapping):
        error = details.get("error", details)
        items = error.get("details") or [] if isinstance(error, Mapping) else []
    elif isinstance(details, list):
        items = details
    else:
        return None
    for item in items:
        if isinstance(item, Mapping) and str(item.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def provider_error(
    label: str,
    message: str,
    *,
    kind: str,
    status: int | None = None,
    retry_after: float | None = None,
    retryable: bool = False,
    secrets: Iterable[str | None] = (),
) -> ProviderError:
    """A ``ProviderError`` whose message is scrubbed of keys and kept short."""
    text = scrub(f"{label}: {message}", secrets)
    if len(text) > _MAX_MESSAGE:
        text = text[: _MAX_MESSAGE - 1] + "…"
    return ProviderError(text, kind=kind, status=status, retry_after=retry_after, retryable=retryable)


def transport_kind(exc: BaseException) -> str | None:
    """'timeout' or 'connection' for httpx / httpx2 transport errors (matched by class name, so both forks work)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "TimeoutException" in names or "APITimeoutError" in names or isinstance(exc, TimeoutError):
        return "timeout"
    if names & {"TransportError", "RequestError", "APIConnectionError", "NetworkError"} or isinstance(exc, ConnectionError):
        return "connection"
    return None
