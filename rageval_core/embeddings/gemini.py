"""Gemini embeddings (gemini-embedding-001) through google-genai's batchEmbedContents, batched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from google import genai
from google.genai import types

from rageval_core.embeddings.openai_embed import text_tokens
from rageval_core.llm.base import ProviderError
from rageval_core.llm.transport.gemini_http import http_options, map_gemini_error
from rageval_core.llm.transport.guard import RequestGuard


class GeminiEmbedder:
    """``models.embed_content`` in batches of ``batch_size`` (the API accepts up to 100 per call)."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "gemini-embedding-001",
        base_url: str | None = None,
        timeout_s: float = 60.0,
        batch_size: int = 100,
        task_type: str | None = "SEMANTIC_SIMILARITY",
        guard: RequestGuard | None = None,
        client: genai.Client | None = None,
        provider: str = "gemini",
    ) -> None:
        """``client`` and ``provider`` replace the Gemini API's (Vertex AI: a ``vertexai`` client; its
        gemini-embedding models take one text a request there, so ``batch_size`` becomes 1 for them)."""
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.batch_size = 1 if provider == "vertex" and model.startswith("gemini-embedding") else min(batch_size, 100)
        self.task_type = task_type
        self._secrets = (api_key,)
        self.guard = guard or RequestGuard(timeout_s=timeout_s)
        self._client = client if client is not None else genai.Client(api_key=api_key, vertexai=False, http_options=http_options(base_url, timeout_s))

    def __repr__(self) -> str:
        return f"GeminiEmbedder(model={self.model!r}, base_url={self.base_url!r})"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        label = f"{self.provider} embeddings ({self.model})"
        config = types.EmbedContentConfig(task_type=self.task_type) if self.task_type else None

        def send() -> object:
            error: ProviderError | None = None
            try:
                contents: list[Any] = list(texts)  # Any: the SDK's content union takes plain strings too
                return self._client.models.embed_content(model=self.model, contents=contents, config=config)
            except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
                error = map_gemini_error(exc, label, self.timeout_s, self._secrets)
            raise error  # not chained to the SDK exception, which may quote the key

        response: Any = self.guard.send(label, send, tokens=lambda: text_tokens(texts))
        vectors = [e.values or [] for e in (response.embeddings or [])]
        if len(vectors) != len(texts) or any(not v for v in vectors):
            raise ProviderError(f"{label}: asked for {len(texts)} vectors, got {len(vectors)}", kind="malformed_response")
        return np.asarray(vectors, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from rageval_core.embeddings.cache import embed_in_batches

        return embed_in_batches(self, texts)
