"""Samples to bytes and files: JSON, JSONL and CSV (UTF-8 with BOM so Excel reads Japanese), seed or
ragas field names. ``load_dataset`` reads every output back to the same rows and hash."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rageval_core.core.csvsafe import dumps_csv
from rageval_core.data.datasets.formats import EXTENSIONS
from rageval_core.data.datasets.model import DatasetError, Format, Naming
from rageval_core.core.types import Sample
from rageval_core.core.private import write_private_bytes

RAGAS_NAMES: dict[str, str] = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
}


def _row_dict(sample: Sample, naming: Naming) -> dict[str, Any]:
    names = RAGAS_NAMES if naming == "ragas" else {}
    row: dict[str, Any] = {"id": sample.id}
    row[names.get("question", "question")] = sample.question
    row[names.get("contexts", "contexts")] = list(sample.contexts)
    row[names.get("answer", "answer")] = sample.answer
    if sample.ground_truth is not None:
        row[names.get("ground_truth", "ground_truth")] = sample.ground_truth
    for key, value in sample.metadata.items():
        row.setdefault(key, value)
    return row


def _csv_cell(value: Any) -> Any:
    """Text and numbers as they are (the CSV writer neutralises formulas), anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        return value
    return json.dumps(value, ensure_ascii=False)


def dumps_dataset(samples: Sequence[Sample], fmt: Format = "json", *, naming: Naming = "seed") -> bytes:
    """Serialise samples (for a download button or ``save_dataset``).

    JSON and JSONL are UTF-8 without BOM; CSV is UTF-8 with BOM (so Excel reads Japanese), contexts as a
    JSON list string, non-text metadata as JSON.
    """
    rows = [_row_dict(s, naming) for s in samples]
    if fmt == "json":
        return (json.dumps(rows, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if fmt == "csv":
        columns: list[str] = []
        for r in rows:
            columns.extend(k for k in r if k not in columns)
        text = dumps_csv(([_csv_cell(r.get(c)) for c in columns] for r in rows), columns, lineterminator="\r\n")
        return text.encode("utf-8-sig")
    raise DatasetError(f"unknown dataset format {fmt!r}; use one of json, jsonl, csv")


def save_dataset(samples: Sequence[Sample], path: str | Path, *, naming: Naming = "seed") -> Path:
    """Write samples to ``path``; the format follows the extension (.json, .jsonl/.ndjson, .csv)."""
    target = Path(path)
    fmt = EXTENSIONS.get(target.suffix.lower())
    if fmt is None:
        raise DatasetError(f"cannot tell the format of {target.name}; use .json, .jsonl or .csv")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_private_bytes(target, dumps_dataset(samples, fmt, naming=naming))
    return target
