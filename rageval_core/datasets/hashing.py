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

    ``surrogatepass`` so a lone surrogate in rows built outside the loader (which replaces them) hashes
    instead of raising; every other text hashes exactly as plain UTF-8."""
    payload = [sample_payload(s) for s in samples]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
