"""The rows every fixture script here writes through another library: four rows of each seed dataset
(sample_data/ml_qa_en.json, ml_qa_ja.json) plus one row whose texts hold what list cells must survive
(an apostrophe and double quotes together, a newline, a pipe, Japanese). Standard library only, so the scripts
can import it inside the libraries' own virtual environments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
PICK = {"ml_qa_en.json": (0, 3, 6, 9), "ml_qa_ja.json": (0, 4, 8, 11)}

TRICKY: dict[str, Any] = {
    "id": "quotes-1",
    "category": "tricky",
    "question": "What does the \"model's\" early-stopping rule say?",
    "contexts": [
        "The model's training stops when the \"validation loss\" has not improved for 5 epochs.",
        "Line one of a passage.\nLine two: patience | min_delta are its two settings.",
        "検証損失が改善しなくなった時点で学習を打ち切る手法を早期終了と呼ぶ。",
    ],
    "answer": "It stops training once the \"validation loss\" stops improving for 5 epochs; it's called early stopping.",
    "ground_truth": "Training stops after 5 epochs without improvement of the validation loss.",
}


def source_rows() -> list[dict[str, Any]]:
    """The rows, in the fixtures' order (ids as text)."""
    rows: list[dict[str, Any]] = []
    for name, picks in PICK.items():
        data = json.loads((ROOT / "sample_data" / name).read_text(encoding="utf-8"))
        for i in picks:
            row = dict(data[i])
            row["id"] = str(row["id"])
            rows.append(row)
    rows.append(dict(TRICKY))
    return rows


def record_versions(section: str, versions: dict[str, str]) -> None:
    """Write ``versions`` under ``section`` of versions.json beside the files (other sections kept)."""
    path = HERE / "versions.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[section] = versions
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
