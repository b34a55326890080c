"""Distinct evaluation rows made from the seed data, shared by the benchmarks (soak, runner, scale, pages,
stream_scale): each row's question and answer carry its number, so no two rows hit the same cache entry.

Its own module so that the benchmarks that need rows do not import one another (runner and soak did, both ways).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["soak_rows"]


def soak_rows(n: int) -> list[dict[str, Any]]:
    """``n`` distinct rows from the seed data: each row's question and answer carry its number."""
    seed = json.loads((ROOT / "sample_data" / "ml_qa_ja.json").read_text(encoding="utf-8"))
    rows = []
    for i in range(n):
        row = dict(seed[i % len(seed)])
        row["id"] = f"soak-{i:04d}"
        row["question"] = f"{row['question']}（{i}）"
        row["answer"] = f"{row['answer']}（{i}）"
        rows.append(row)
    return rows
