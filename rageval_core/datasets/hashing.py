"""The dataset's identity: SHA-256 of the normalised rows, so loading the same data again (or after a save
round trip) gives the same hash; runs and human labels are keyed by it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from rageval_core.types import Sample


def sample_payload(sample: Sample) -> dict[str, Any]:
    """The normalised, JSON-ready form of a sample that the content hash is computed from."""
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
    digest = hashlib.sha256(b"[")
    chunk: list[str] = []
    separator = ""  # "," once anything was hashed
    for sample in samples:
        chunk.append(_ENCODER.encode(sample_payload(sample)))
        if len(chunk) == 1000:
            digest.update((separator + ",".join(chunk)).encode("utf-8", "surrogatepass"))
            separator, chunk = ",", []
    if chunk:
        digest.update((separator + ",".join(chunk)).encode("utf-8", "surrogatepass"))
    digest.update(b"]")
    return digest.hexdigest()


_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
