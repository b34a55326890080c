"""Where the Phoenix server is and what is asked of it by default, kept apart from the HTTP client so that the
CLI's parser can show the defaults without loading ``urllib.request`` or the trace readers.

The server and project come from Phoenix's own environment variables when set (``PHOENIX_ENDPOINT``, then
``PHOENIX_COLLECTOR_ENDPOINT``; ``PHOENIX_PROJECT``, then ``PHOENIX_PROJECT_NAME``), as its clients read them.
"""

from __future__ import annotations

import os
import urllib.parse

from rageval_core.core import redact
from rageval_core.core.errors import DataError

API_KEY_ENV = "PHOENIX_API_KEY"
URL_ENVS = ("PHOENIX_ENDPOINT", "PHOENIX_COLLECTOR_ENDPOINT")
PROJECT_ENVS = ("PHOENIX_PROJECT", "PHOENIX_PROJECT_NAME")
DEFAULT_URL = "http://localhost:6006"
DEFAULT_PROJECT = "default"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_LIMIT = 100  # traces a pull reads at most
DEFAULT_LINK = "{url}/projects/{project_id}/traces/{trace_id}"  # Phoenix's own trace page
DEFAULT_IDENTIFIER = "rageval"  # the span annotations' identifier: a push replaces what an earlier one sent

__all__ = [
    "API_KEY_ENV", "DEFAULT_IDENTIFIER", "DEFAULT_LIMIT", "DEFAULT_LINK", "DEFAULT_PROJECT", "DEFAULT_TIMEOUT_S",
    "DEFAULT_URL", "PROJECT_ENVS", "URL_ENVS", "PhoenixError", "default_project", "default_url", "normalize_url",
]


class PhoenixError(DataError):
    """A Phoenix server that cannot be reached or refuses what was asked; the message names the server (never the key)
    and says what to do."""


def normalize_url(url: str) -> str:
    """The server's base URL: ``http(s)://host[:port][/root]`` with a collector path (``/v1/traces``) or ``/v1``
    and trailing slashes taken off. ``PhoenixError`` for anything that is not an http(s) URL."""
    text = str(url or "").strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise PhoenixError(f"Phoenix URL {redact.redact_url(text)!r} is not an http(s) URL, e.g. {DEFAULT_URL}")
    path = parts.path.rstrip("/")
    for tail in ("/v1/traces", "/v1"):
        if path.endswith(tail):
            path = path[: -len(tail)]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def default_url() -> str:
    """The server named by Phoenix's own environment variables, else ``http://localhost:6006``."""
    for name in URL_ENVS:
        value = (os.environ.get(name) or "").strip()
        if value:
            try:
                return normalize_url(value)
            except PhoenixError:
                return value  # said when it is used, not while the command line is being read
    return DEFAULT_URL


def default_project() -> str:
    for name in PROJECT_ENVS:
        value = (os.environ.get(name) or "").strip()
        if value:
            return value
    return DEFAULT_PROJECT
