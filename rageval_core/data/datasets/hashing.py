"""The dataset's identity: SHA-256 of the normalised rows, so loading the same data again (or after a save
round trip) gives the same hash; runs and human labels are keyed by it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from rageval_core.core.types import Sample


def sample_payload(sample: Sample) -> dict[str, Any]:
    """The normalised, JSON-ready form of a sample that the content hash is computed from. ``external_scores`` (another
    tool's earlier results) are left out: a ragas results CSV and the JSONL of the same rows are the same dataset."""
    return {
        "id": sample.id,
        "question": sample.question,
        "contexts": list(sample.contexts),
        "answer": sample.answer,
        "ground_truth": sample.ground_truth,
        "metadata": dict(sample.metadata),
    }


def dataset_hash(samples: Iterable[Sample]) -> str:
    """SHA-256 of the samples in order (sorted keys, unicode kept): the dataset's identity.

    The digest is of the compact JSON list of the samples' payloads, fed to the hash a thousand rows at a
    time so a large dataset is never one string in memory (the bytes are those of ``json.dumps(list)``).
    ``surrogatepass`` so a lone surrogate in rows built outside the loader (which replaces them) hashes
    instead of raising; every other text hashes exactly as plain UTF-8."""
    hasher = DatasetHasher()
    for sample in samples:
        hasher.add(sample)
    return hasher.hexdigest()


class DatasetHasher:
    """``dataset_hash`` fed one sample at a time, for a dataset read while it is evaluated (the rows are never
    all in memory); ``hexdigest()`` once the last row was added gives exactly ``dataset_hash(all rows)``."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256(b"[")
        self._chunk: list[str] = []
        self._separator = ""  # "," once anything was hashed

    def add(self, sample: Sample) -> None:
        self._chunk.append(_ENCODER.encode(sample_payload(sample)))
        if len(self._chunk) == 1000:
            self._flush()

    def _flush(self) -> None:
        if self._chunk:
            self._digest.update((self._separator + ",".join(self._chunk)).encode("utf-8", "surrogatepass"))
            self._separator, self._chunk = ",", []

    def hexdigest(self) -> str:
        self._flush()
        digest = self._digest.copy()
        digest.update(b"]")
        return digest.hexdigest()


_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
