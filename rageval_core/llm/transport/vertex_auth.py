"""The google-genai client for Vertex AI (``vertexai=True``), shared by the chat adapter and the embedder.

Vertex is addressed by project and location (``--project`` / ``--location``, else the SDK's
``GOOGLE_CLOUD_PROJECT`` / ``GOOGLE_CLOUD_LOCATION``; location ``global`` when none is given) and authenticated
with application default credentials (``GOOGLE_APPLICATION_CREDENTIALS``, or ``gcloud auth application-default
login``), which the SDK loads and refreshes itself; or, with no project, by a Vertex API key (express mode,
``GOOGLE_API_KEY`` or the sidebar). Calls go to ``/v1beta1/projects/{project}/locations/{location}/publishers/
google/models/{model}:generateContent`` (embeddings: ``:predict``). The SDK's retries stay off, as for Gemini.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from rageval_core.core import redact
from rageval_core.llm.transport.gemini_http import http_options

__all__ = ["VertexClient", "vertex_client", "vertex_target"]


@dataclass(frozen=True)
class VertexClient:
    """The SDK client and what it is bound to; ``secret`` is the Vertex API key when one is used ("" with ADC)."""

    client: Any
    project: str | None
    location: str | None
    secret: str = field(default="", repr=False)


def vertex_target(project: str | None, location: str | None, api_key: str | None) -> tuple[str | None, str | None, str | None]:
    """(project, location, key) as this provider uses them: a project (flag or ``GOOGLE_CLOUD_PROJECT``) means
    application default credentials; without one, the Vertex API key (given, or ``GOOGLE_API_KEY``)."""
    project = project or (os.environ.get("GOOGLE_CLOUD_PROJECT") or "").strip() or None
    if project:
        location = location or (os.environ.get("GOOGLE_CLOUD_LOCATION") or "").strip() or "global"
        return project, location, None
    key = (api_key or "").strip() or (os.environ.get("GOOGLE_API_KEY") or "").strip() or None
    redact.remember(key)
    return None, None, key


def vertex_client(*, project: str | None, location: str | None, api_key: str | None, base_url: str | None, timeout_s: float) -> VertexClient:
    """A ``genai.Client(vertexai=True)`` for the project and location (ADC), or for a Vertex API key."""
    from google import genai

    project, location, key = vertex_target(project, location, api_key)
    options = http_options(base_url, timeout_s)
    if project:
        client = genai.Client(vertexai=True, project=project, location=location, http_options=options)
    else:
        client = genai.Client(vertexai=True, api_key=key, http_options=options)
    return VertexClient(client, project, location, key or "")
