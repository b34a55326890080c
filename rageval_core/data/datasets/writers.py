"""Samples to bytes and files: JSON, JSONL and CSV (UTF-8 with BOM so Excel reads Japanese), in the seed's names,
ragas's or DeepEval's, each in the shape that tool reads back. ``load_dataset`` reads every output back to the same
rows and hash.

- seed: ``id``, ``question``, ``contexts``, ``answer``, ``ground_truth``, metadata, external scores as
  ``ragas:<metric>`` keys; CSV list cells as JSON.
- ragas: ``user_input``, ``retrieved_contexts``, ``response``, ``reference`` (ragas's ``SingleTurnSample``; it ignores
  the ``id`` and metadata beside them), ragas's own earlier scores under their metric names as in its results;
  CSV list cells as Python reprs, as ragas's ``to_csv`` and pandas write them.
- deepeval: ``input``, ``actual_output``, ``expected_output``, ``retrieval_context`` (a ``context`` kept from a
  DeepEval file goes back as its ``context``), everything else under ``additional_metadata`` with the ``id``
  (DeepEval keeps that object through its own load and ``save_as``). CSV joins contexts with "|" as DeepEval's
  ``save_as`` does and its loader splits them, so a context holding "|" cannot go into a DeepEval CSV: refused
  naming the row (JSON and JSONL keep lists, which DeepEval's loaders read as they are).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rageval_core.core.csvsafe import dumps_csv
from rageval_core.core.private import write_private_bytes
from rageval_core.core.types import Sample
from rageval_core.data.datasets.dialects import DEEPEVAL_SEPARATOR
from rageval_core.data.datasets.formats import EXTENSIONS
from rageval_core.data.datasets.model import NAMINGS, DatasetError, Format, Naming

RAGAS_NAMES: dict[str, str] = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
}
DEEPEVAL_NAMES: dict[str, str] = {
    "question": "input",
    "contexts": "retrieval_context",
    "answer": "actual_output",
    "ground_truth": "expected_output",
}
_LIST_KEYS = {"seed": ("contexts",), "ragas": ("retrieved_contexts",), "deepeval": ("retrieval_context", "context")}


def row_dict(sample: Sample, naming: Naming = "seed") -> dict[str, Any]:
    """One sample as a row in ``naming``'s field names (lists as lists: each format writes them its own way)."""
    if naming == "deepeval":
        return _deepeval_row(sample)
    names = RAGAS_NAMES if naming == "ragas" else {}
    row: dict[str, Any] = {"id": sample.id}
    row[names.get("question", "question")] = sample.question
    row[names.get("contexts", "contexts")] = list(sample.contexts)
    row[names.get("answer", "answer")] = sample.answer
    if sample.ground_truth is not None:
        row[names.get("ground_truth", "ground_truth")] = sample.ground_truth
    for key, value in sample.metadata.items():
        row.setdefault(key, value)
    for key, score in sample.external_scores.items():
        row.setdefault(key.removeprefix("ragas:") if naming == "ragas" else key, score)
    return row


def _deepeval_row(sample: Sample) -> dict[str, Any]:
    metadata = dict(sample.metadata)
    row: dict[str, Any] = {
        "input": sample.question,
        "actual_output": sample.answer,
        "expected_output": sample.ground_truth,
        "retrieval_context": list(sample.contexts),
    }
    ideal = metadata.pop("context", None)
    if ideal is not None:
        row["context"] = list(ideal) if isinstance(ideal, (list, tuple)) else [str(ideal)]
    row["additional_metadata"] = {"id": sample.id, **metadata, **dict(sample.external_scores)}
    return row


def _python_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def _csv_cell(value: Any, naming: Naming = "seed", key: str = "", row: int = 0) -> Any:
    """Text and numbers as they are (the CSV writer neutralises formulas); a list of contexts as the tool writes it
    (JSON, a Python repr for ragas, "|"-joined for DeepEval); anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        return value
    if naming == "deepeval" and key in _LIST_KEYS["deepeval"] and _python_list(value):
        for i, item in enumerate(value, 1):
            if DEEPEVAL_SEPARATOR in item:
                raise DatasetError(
                    f"row {row}, {key} {i} holds a '|': DeepEval's CSV joins contexts with '|' and its loader splits them "
                    "there, so this context would come back as two; export the DeepEval names as JSON or JSONL instead")
        return DEEPEVAL_SEPARATOR.join(value)
    if naming == "ragas" and _python_list(value):
        return repr(list(value))  # what ragas's to_csv (csv.DictWriter: str(list)) and pandas write
    return json.dumps(value, ensure_ascii=False)


def dumps_rows(rows: Sequence[dict[str, Any]], fmt: Format, naming: Naming = "seed") -> bytes:
    """Rows (``row_dict`` shapes, maybe with more columns) as ``fmt`` bytes: JSON and JSONL as UTF-8, CSV as
    UTF-8 with BOM (Excel reads Japanese; pandas drops the BOM), list cells as ``naming``'s tool writes them."""
    if naming not in NAMINGS:
        raise DatasetError(f"unknown naming {naming!r}; use one of {', '.join(NAMINGS)}")
    if fmt == "json":
        return (json.dumps(list(rows), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if fmt == "csv":
        columns: list[str] = []
        for r in rows:
            columns.extend(k for k in r if k not in columns)
        lines = ([_csv_cell(r.get(c), naming, c, n) for c in columns] for n, r in enumerate(rows, 1))
        return dumps_csv(lines, columns, lineterminator="\r\n").encode("utf-8-sig")
    raise DatasetError(f"unknown dataset format {fmt!r}; use one of json, jsonl, csv")


def dumps_dataset(samples: Sequence[Sample], fmt: Format = "json", *, naming: Naming = "seed") -> bytes:
    """Serialise samples (for a download button or ``save_dataset``) in ``naming``'s field names; ``DatasetError``
    for what that tool's format cannot hold (a "|" inside a context of a DeepEval CSV)."""
    if naming not in NAMINGS:
        raise DatasetError(f"unknown naming {naming!r}; use one of {', '.join(NAMINGS)}")
    return dumps_rows([row_dict(s, naming) for s in samples], fmt, naming)


def format_of(path: str | Path) -> Format:
    """The format a file name's extension says (``DatasetError`` for another)."""
    fmt = EXTENSIONS.get(Path(path).suffix.lower())
    if fmt is None:
        raise DatasetError(f"cannot tell the format of {Path(path).name}; use .json, .jsonl or .csv")
    return fmt


def save_dataset(samples: Sequence[Sample], path: str | Path, *, naming: Naming = "seed") -> Path:
    """Write samples to ``path``; the format follows the extension (.json, .jsonl/.ndjson, .csv)."""
    target = Path(path)
    data = dumps_dataset(samples, format_of(target), naming=naming)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_private_bytes(target, data)
    return target
