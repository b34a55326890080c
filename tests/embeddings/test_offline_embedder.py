"""The offline embedder's shared cache and batcher: each distinct text encoded once, concurrent calls pooled
into one batch, errors raised to the caller, BLAS held to one thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rageval_core.offline import encoder as E


class _Recorder:
    """A fake encode function: a 3-d vector per text, every batch recorded; the first batch can be held."""

    def __init__(self, hold_first: bool = False, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold_first:
            self.release.set()
        self.fail_on = fail_on

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        self.started.set()
        self.release.wait(5)
        if self.fail_on in texts:
            raise RuntimeError("encoder broke")
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)


def test_each_distinct_text_is_encoded_once_and_cached() -> None:
    rec = _Recorder()
    enc = E._Encoder(rec)
    first = enc.vectors(["aa", "b", "aa"])
    again = enc.vectors(["b", "aa"])
    assert rec.batches == [["aa", "b"]]  # duplicates dropped, the second call all cache hits
    assert enc.encoded == 2
    np.testing.assert_allclose(first[0], again[1])
    np.testing.assert_allclose(np.linalg.norm(np.vstack(first), axis=1), 1.0, rtol=1e-6)


def test_calls_waiting_for_the_encoder_are_pooled_into_one_batch() -> None:
    rec = _Recorder(hold_first=True)
    enc = E._Encoder(rec)
    out: dict[str, list[np.ndarray]] = {}
    lead = threading.Thread(target=lambda: out.setdefault("lead", enc.vectors(["x"])))
    lead.start()
    assert rec.started.wait(5)
    others = [
        threading.Thread(target=lambda k=k, texts=texts: out.setdefault(k, enc.vectors(texts)))
        for k, texts in (("a", ["p", "q"]), ("b", ["q", "r"]), ("c", ["x", "p"]))
    ]
    for t in others:
        t.start()
    for _ in range(200):  # until the three callers have queued their texts (bounded, no sleep)
        with enc._cond:
            if set(enc._queued) == {"p", "q", "r"}:
                break
        threading.Event().wait(0.01)
    rec.release.set()
    for t in [lead, *others]:
        t.join(5)
    assert rec.batches[0] == ["x"]
    assert sorted(rec.batches[1]) == ["p", "q", "r"]  # three callers, one batch, "q" once; "x" waited for
    assert len(rec.batches) == 2
    np.testing.assert_allclose(out["c"][0], out["lead"][0])


def test_an_encoder_error_reaches_the_caller_and_the_text_can_be_retried() -> None:
    rec = _Recorder(fail_on="bad")
    enc = E._Encoder(rec)
    with pytest.raises(RuntimeError, match="encoder broke"):
        enc.vectors(["bad", "ok"])
    rec.fail_on = None
    assert len(enc.vectors(["bad", "ok"])) == 2
    assert enc.encoded == 2


def test_the_cache_is_bounded() -> None:
    enc = E._Encoder(_Recorder(), cache_size=2)
    rows = enc.vectors(["a", "b", "c"])
    assert list(enc._cache) == ["b", "c"]
    assert len(rows) == 3 and enc.encoded == 3  # a call larger than the cache still gets every row, once


def test_embedders_of_one_encoder_share_the_cache_and_blas_runs_one_thread() -> None:
    pytest.importorskip("threadpoolctl")
    a, b = E.OfflineEmbedder(), E.OfflineEmbedder()
    text = "共有キャッシュの確認用の一文です。"
    va = a.embed([text])
    shared = E._encoders[E.DEFAULT_ENCODER]
    encoded = shared.encoded
    vb = b.embed([text, text])
    assert shared.encoded == encoded  # the second instance encoded nothing
    np.testing.assert_allclose(vb[0], va[0])
    fresh = E.OfflineEmbedder(cache=False).embed([text])
    assert float(fresh[0] @ va[0]) > 0.999
    blas = E.blas_threads()
    assert blas and all(info["num_threads"] == 1 for info in blas)
