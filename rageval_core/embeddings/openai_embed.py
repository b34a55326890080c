"""OpenAI (and OpenAI-compatible) embeddings, batched; SDK retries off like the chat provider.

Each batch is one HTTP request through the ``RequestGuard``, like a chat call: a rate-limit slot (the
chat limit of the host unless ``--embedding-rpm`` sets its own), the host breaker and the per-call deadline
(which also ends a reply still trickling in).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import openai

from rageval_core.llm.base import ProviderError
from rageval_core.llm.transport import warm
from rageval_core.llm.transport.guard import RequestGuard
from rageval_core.llm.transport.sdk_clients import openai_client
from rageval_core.llm.transport.http_errors import (
    kind_for_status,
    parse_retry_after,
    provider_error,
    transport_kind,
)

if TYPE_CHECKING:
    import numpy as np


class OpenAIEmbedder:
    """``client.embeddings.create`` in batches of ``batch_size`` texts; rows L2-normalised."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "text-embedding-3-small",
        base_url: str | None = None,
        timeout_s: float = 60.0,
        batch_size: int = 256,
        provider: str = "openai",
        guard: RequestGuard | None = None,
        client: openai.OpenAI | None = None,
    ) -> None:
        """``client`` replaces the plain ``openai.OpenAI`` one (Azure's embedding deployment: ``AzureOpenAI``)."""
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self._secrets = (api_key,)
        self.guard = guard or RequestGuard(timeout_s=timeout_s)
        self._client = client if client is not None else openai_client(api_key, base_url, timeout_s)
        warm.start("embeddings")  # the SDK's first-call work, done once off the request path (llm/warm.py)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(provider={self.provider!r}, model={self.model!r}, base_url={self.base_url!r})"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """One request (no batching, no normalisation): the unit the cache and retry wrappers call."""
        label = f"{self.provider} embeddings ({self.model})"
        response = self.guard.send(label, lambda: self._send(label, texts), tokens=lambda: text_tokens(texts), used=_used_tokens)
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise ProviderError(f"{label}: asked for {len(texts)} vectors, got {len(rows)}", kind="malformed_response")
        return _vectors(label, [r.embedding for r in rows])

    def _send(self, label: str, texts: Sequence[str]) -> Any:  # Any: the SDK's CreateEmbeddingResponse
        """One SDK call; failures become scrubbed ``ProviderError`` s."""
        error: ProviderError | None = None
        try:
            # Ask for floats: local servers often lack the SDK's default base64 encoding.
            response = self._client.embeddings.create(model=self.model, input=list(texts), encoding_format="float")
        except openai.APIStatusError as exc:
            kind, retryable = kind_for_status(exc.status_code)
            retry_after = parse_retry_after(dict(exc.response.headers)) if exc.response is not None else None
            error = provider_error(label, f"HTTP {exc.status_code}: {exc.message}", kind=kind, status=exc.status_code, retry_after=retry_after, retryable=retryable, secrets=self._secrets)
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
            transport = transport_kind(exc)
            if transport is not None:
                error = provider_error(label, f"{transport} error ({type(exc).__name__})", kind=transport, retryable=True, secrets=self._secrets)
            else:
                error = provider_error(label, f"malformed response ({type(exc).__name__}: {exc})", kind="malformed_response", secrets=self._secrets)
        if error is not None:
            raise error  # not chained to the SDK exception, which may quote the key
        return response

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from rageval_core.embeddings.cache import embed_in_batches

        return embed_in_batches(self, texts)


def text_tokens(texts: Sequence[str]) -> int:
    """A pre-call token estimate of an embedding batch (as ``ratelimit.estimate_tokens`` does for prompts)."""
    joined = "".join(texts)
    ascii_chars = sum(1 for ch in joined if ord(ch) < 128)
    return max(1, ascii_chars // 4 + (len(joined) - ascii_chars))


def _used_tokens(response: object) -> int:
    return int(getattr(getattr(response, "usage", None), "total_tokens", 0) or 0)


def _vectors(label: str, embeddings: list[object]) -> np.ndarray:
    """One flat vector per text, all of one length; anything else (e.g. llama.cpp started with
    ``--embedding`` on a chat model without pooling answers one vector per token) is a clear
    ``malformed_response`` instead of a numpy error deep inside a metric."""
    import numpy as np  # here: not before a command's first request (``metrics.scoring`` says why)

    try:
        vectors = np.asarray(embeddings, dtype=np.float32)
    except (TypeError, ValueError):
        vectors = None
    if vectors is None or vectors.ndim != 2 or vectors.shape[1] == 0:
        raise ProviderError(
            f"{label}: the server did not return one flat vector per text (per-token vectors or mixed lengths?); "
            "serve a sentence embedding model, e.g. llama.cpp with a pooling type (mean/cls) and an embedding GGUF",
            kind="malformed_response",
        )
    return vectors
