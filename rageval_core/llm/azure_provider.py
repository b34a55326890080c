"""Azure OpenAI: the openai SDK's ``AzureOpenAI`` client under the OpenAI adapter.

Azure addresses a *deployment* (a name its owner chose) at a resource endpoint, with an ``api-version`` query
parameter and an ``api-key`` header or an Entra ID bearer token; the SDK builds
``{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...`` from the ``model`` of each call.
Everything else is the OpenAI adapter's: the request body (structured output as ``response_format``
``json_schema``, strict first, then strict off, then ``json_object``), the errors (a 429's ``Retry-After``
honoured by the retry wrapper, SDK retries off), the guard (rate limits per deployment: each deployment is its
own stack), and the Batch API (``run.batch``: Azure's global-batch deployments, ``/openai/files`` +
``/openai/batches``, line URL ``/chat/completions``).
"""

from __future__ import annotations

from rageval_core.llm.openai_provider import OpenAILLM
from rageval_core.llm.structured import FormatLadder
from rageval_core.llm.transport.guard import RequestGuard
from rageval_core.llm.transport.sdk_clients import azure_api_version, azure_client

__all__ = ["AzureOpenAILLM"]


class AzureOpenAILLM(OpenAILLM):
    """Chat completions of one Azure OpenAI deployment (``model`` is the deployment name)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        ad_token: str | None = None,
        model: str,
        endpoint: str,
        api_version: str | None = None,
        timeout_s: float = 60.0,
        guard: RequestGuard | None = None,
        ladder: FormatLadder | None = None,
    ) -> None:
        self.api_version = azure_api_version(api_version)
        client = azure_client(api_key=api_key, ad_token=ad_token, endpoint=endpoint, api_version=self.api_version, timeout_s=timeout_s)
        super().__init__(api_key=api_key or ad_token or "", model=model, base_url=endpoint, timeout_s=timeout_s,
                         provider="azure-openai", guard=guard, ladder=ladder, client=client)

    def __repr__(self) -> str:
        return f"AzureOpenAILLM(deployment={self.model!r}, endpoint={self.base_url!r}, api_version={self.api_version!r})"
