"""Print the judge prompt the workbench sends for one row (default: sample row 4, rubric5, Japanese).

    python bench/render_judge_prompt.py [--rubric rubric5|binary|binary-strict|PATH] [--row 4]
                                        [--data sample_data/ml_qa_ja.json] [--language ja|en]

Used to produce the judge prompt shown in docs/judges.md; it renders with the same code the judge calls with.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.scoring.metrics.judge import JudgeScorer, render_judge_prompt, sample_language  # noqa: E402
from rageval_core.scoring.rubric import PRESET_IDS, load_rubric  # noqa: E402
from rageval_core.core.types import Sample  # noqa: E402


def _load_row(path: Path, row_id: str) -> Sample:
    rows = json.loads(path.read_text(encoding="utf-8"))
    for row in rows:
        if str(row["id"]) == row_id:
            return Sample(
                id=str(row["id"]),
                question=row["question"],
                contexts=tuple(row["contexts"]),
                answer=row["answer"],
                ground_truth=row.get("ground_truth"),
            )
    raise SystemExit(f"no row {row_id!r} in {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rubric", default="rubric5")
    parser.add_argument("--row", default="4")
    parser.add_argument("--data", type=Path, default=ROOT / "sample_data" / "ml_qa_ja.json")
    parser.add_argument("--language", choices=["ja", "en"], default=None, help="default: the row's language")
    args = parser.parse_args(argv)
    sample = _load_row(args.data, args.row)
    language = args.language or sample_language(sample)
    rubric = load_rubric(args.rubric, language) if args.rubric in PRESET_IDS else load_rubric(args.rubric)
    request = JudgeScorer(rubric).build_request(rubric, sample)
    assert request.prompt_text.endswith(render_judge_prompt(rubric, sample))
    print(render_judge_prompt(rubric, sample))
    print(f"\n# rubric {rubric.id} {rubric.short_hash} · request key {request.key()[:16]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
