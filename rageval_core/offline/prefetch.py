"""Encoding ahead of an offline run: the texts the heuristics will embed, a few dozen rows at a time.

Why: the heuristics ask the encoder for a row's texts while they score it, a handful at a time (about 4
texts a batch on 1,000 seed-size rows), and the forward pass costs about 2.3 ms a text in batches of 4
against 1.7 ms in batches of 32 (its weights are streamed once a batch). Encoding the rows' texts before the
workers reach them, in batches of up to 256, measured 7-8 ms of CPU a row less on 400 seed-size rows (the
cache filled before the run: 16.9 and 20.3 s against 19.6 and 23.7 s).

What a row embeds: its question, answer and reference whole, and the sentences of its answer, reference and
contexts as the project's splitter cuts them in the row's language (on the seed rows exactly the texts the
heuristics encode, bar NFKC spellings of the same sentences, which the encoder's id cache serves). A text
encoded here is the one a heuristic would have encoded: vectors differ only in float32 rounding with the
batch (the 7th digit). Paced by use: the next rows are encoded only while at most ``AHEAD`` prefetched texts
wait to be asked for, so a long run never fills the cache with rows far ahead, and a text never asked for
(a heuristic that changed) stops the prefetching instead of wasting work.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Protocol

from rageval_core.core.text import detect_language, split_sentences
from rageval_core.core.types import Sample

CHUNK_ROWS = 32  # rows encoded together (about 100 new texts of seed-size rows)
AHEAD = 512  # prefetched texts not asked for yet before the next rows wait


class PrefetchingEncoder(Protocol):
    """What the prefetcher needs of ``offline.encoder._Encoder``."""

    prefetch_hits: int

    def prefetch(self, texts: Sequence[str]) -> int: ...


def row_texts(sample: Sample) -> list[str]:
    """The texts the offline heuristics embed for ``sample``, each once, blank ones left out."""
    contexts = [c for c in sample.contexts if c and c.strip()]
    answer, reference = sample.answer or "", sample.ground_truth or ""
    lang = detect_language(answer + " " + (contexts[0] if contexts else ""))
    texts = [sample.question or "", answer, reference]
    for text in (answer, reference, *contexts):
        texts.extend(split_sentences(text, lang))
    return [t for t in dict.fromkeys(texts) if t.strip()]


class Prefetcher:
    """A daemon thread encoding ``samples``' texts through ``encoder.prefetch`` ahead of the workers."""

    def __init__(self, samples: Sequence[Sample], encoder: PrefetchingEncoder, *, chunk_rows: int = CHUNK_ROWS,
                 ahead: int = AHEAD) -> None:
        self._samples = samples
        self._encoder = encoder
        self._chunk_rows = chunk_rows
        self._ahead = ahead
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="offline-prefetch", daemon=True)
        self.prefetched = 0  # texts encoded here
        self.rows = 0  # rows whose texts went through

    def start(self) -> Prefetcher:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        enc = self._encoder
        for start in range(0, len(self._samples), self._chunk_rows):
            while self.prefetched - enc.prefetch_hits > self._ahead:
                if self._stop.wait(0.05):
                    return
            if self._stop.is_set():
                return
            rows: Iterable[Sample] = self._samples[start : start + self._chunk_rows]
            texts = [t for s in rows for t in row_texts(s)]
            try:
                self.prefetched += enc.prefetch(texts)
            except Exception:  # an encoder error reaches the heuristic that needs the text, not this thread
                return
            self.rows = min(len(self._samples), start + self._chunk_rows)


def start_for_run(provider: str, embedding_model: str, samples: object) -> Prefetcher | None:
    """A started ``Prefetcher`` when the run is the offline provider's on the bundled encoder over rows in
    memory (a streamed file is read as the run goes: nothing to look ahead in); ``None`` otherwise."""
    from rageval_core.embeddings.encoders import ENCODERS

    if provider != "offline" or embedding_model not in ENCODERS or not isinstance(samples, Sequence) or not samples:
        return None
    from rageval_core.offline.encoder import shared_encoder  # numpy: only for a run that encodes here

    return Prefetcher(samples, shared_encoder(embedding_model)).start()
