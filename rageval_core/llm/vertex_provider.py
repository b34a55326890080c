"""Gemini on Vertex AI: the Gemini adapter over a ``genai.Client(vertexai=True)``.

The request (structured output as ``response_json_schema``, then ``response_schema``, then JSON mode), the
reading of the answer and the errors are the Gemini adapter's; what differs is the client (project and location
with application default credentials, or a Vertex API key: ``transport.vertex_auth``), the provider id that
labels calls, prices (``vertex:<model>`` entries of the price table: Vertex bills cached input at 10 % of the
input rate) and batch: Vertex batch prediction needs Cloud Storage or BigQuery, so ``--batch`` is refused here
(docs/providers.md says how to run one).
"""

from __future__ import annotations

from rageval_core.llm.gemini_provider import GeminiLLM
from rageval_core.llm.structured import FormatLadder
from rageval_core.llm.transport.guard import RequestGuard
from rageval_core.llm.transport.vertex_auth import vertex_client

__all__ = ["VertexLLM"]


class VertexLLM(GeminiLLM):
    """``generate_content`` on Vertex AI for one project, location and model."""

    def __init__(
        self,
        *,
        model: str = "gemini-2.5-flash",
        project: str | None = None,
        location: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        thinking_budget: int | None = None,
        guard: RequestGuard | None = None,
        ladder: FormatLadder | None = None,
    ) -> None:
        bound = vertex_client(project=project, location=location, api_key=api_key, base_url=base_url, timeout_s=timeout_s)
        self.project, self.location = bound.project, bound.location
        super().__init__(api_key=bound.secret, model=model, base_url=base_url, timeout_s=timeout_s, thinking_budget=thinking_budget,
                         guard=guard, ladder=ladder, client=bound.client, provider="vertex")

    def __repr__(self) -> str:
        return f"VertexLLM(model={self.model!r}, project={self.project!r}, location={self.location!r}, base_url={self.base_url!r})"
