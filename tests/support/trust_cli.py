"""What the ``trust`` command tests share: the small labelled Japanese sample and the run id a report names."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "sample_data" / "labelled_mini_ja.jsonl"


def run_id_of(out: str) -> str:
    """The run id in ``trust``'s first line ("trust report of run <id> ...")."""
    return out.split("trust report of run ", 1)[1].split()[0]
