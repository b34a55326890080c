"""Batching, retrying and caching for API embedders.

Vectors are cached in the shared SQLite database keyed by sha256(provider, model, base_url, text) — the base
URL as ``rageval_core.core.redact.url_identity`` gives it, never with its credentials — so a
re-run (or another metric embedding the same question) costs nothing. The store keeps each float32 vector exactly
as the provider's answer was normalised (``store.embedding_cache``: lossless). Rows come back L2-normalised.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rageval_core.store.embedding_cache import VectorRows
from rageval_core.llm.base import canonical_json
from rageval_core.llm.transport.cache import url_key
from rageval_core.llm.transport.retry import Retrier
from rageval_core.core.redact import redact_url

if TYPE_CHECKING:
    import numpy as np

# numpy is imported in the functions that use it, after a run's first request (``metrics.scoring`` says why).

class BatchEmbedder(Protocol):
    provider: str
    model: str
    batch_size: int

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalize(rows: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32)


def embed_in_batches(embedder: BatchEmbedder, texts: Sequence[str], retrier: Retrier | None = None) -> np.ndarray:
    """All texts, ``batch_size`` per request, optionally retried; L2-normalised rows in input order."""
    import numpy as np

    texts = list(texts)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    parts = []
    for start in range(0, len(texts), max(1, embedder.batch_size)):
        batch = texts[start : start + embedder.batch_size]
        parts.append(retrier.call(functools.partial(embedder.embed_batch, batch)) if retrier else embedder.embed_batch(batch))
    return l2_normalize(np.vstack(parts))


def embedding_key(provider: str, model: str, base_url: str | None, text: str) -> str:
    return hashlib.sha256(canonical_json([provider, model, base_url or "", text]).encode("utf-8")).hexdigest()


class BatchedEmbedder:
    """Batching and retries without the cache (``ProviderConfig(cache=False)``)."""

    def __init__(self, inner: BatchEmbedder, *, retrier: Retrier | None = None) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.retrier = retrier

    def __repr__(self) -> str:
        return f"BatchedEmbedder({self.inner!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return embed_in_batches(self.inner, texts, self.retrier)


class CachedEmbedder:
    """Looks every text up in ``embedding_cache``; embeds only the misses (batched, retried) and stores them."""

    def __init__(self, inner: BatchEmbedder, *, db_path: str | Path | None = None, base_url: str | None = None, retrier: Retrier | None = None) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.base_url = redact_url(base_url)
        self._url_key = url_key(base_url, db_path)  # no credentials in the key material
        self.db_path = db_path
        self.retrier = retrier
        self.hits = 0
        self.misses = 0
        self._rows = VectorRows(db_path)  # the table's one door (store.embedding_cache)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [embedding_key(self.provider, self.model, self._url_key, t) for t in texts]
        found = {k: np.frombuffer(v, dtype=np.float32) for k, v in self._rows.lookup(list(dict.fromkeys(keys))).items()}
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        missing_set = set(missing)
        self.hits += sum(1 for k in keys if k not in missing_set)
        if missing:
            first_text = {k: t for k, t in zip(keys, texts)}
            vectors = embed_in_batches(self.inner, [first_text[k] for k in missing], self.retrier)
            self._rows.store(missing, [v.astype(np.float32).tobytes() for v in vectors], provider=self.provider,
                             model=self.model, base_url=self.base_url)  # the vectors in hand are used either way
            for k, v in zip(missing, vectors):
                found[k] = v
            self.misses += len(missing)
        return l2_normalize(np.vstack([found[k] for k in keys]))
