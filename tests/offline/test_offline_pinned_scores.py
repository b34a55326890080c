"""The offline judge's scores pinned: every metric and rubric5 criterion of the sample rows, through the CLI.

Why: the offline path is optimised for speed (shared vector cache, pooled batches, memoised tokens); an
optimisation must not move a score. The pinned values were written by the code before those optimisations
(``python -m tests.offline.test_offline_pinned_scores`` rewrites them, only when a score is meant to change). Float32
vectors depend in the 7th digit on which texts share an encoder batch; where the paraphrase rule makes a
claim's support its cosine that noise reaches the score itself (row 12-en moved by 3e-5 between a run alone
and one after the other offline tests), hence the 1e-4 tolerance: far below any change a rule or a refit makes.

Rows: the Japanese and English sample files, and the Japanese rows again with numbered questions and
answers as ``bench/scale.py`` makes them (their last answer sentence reaches the encoder in two spellings,
full-width and NFKC-normalised brackets)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


from rageval_core import cli

ROOT = Path(__file__).resolve().parents[2]
PINNED = ROOT / "tests" / "data" / "offline_pinned_scores.json"
METRICS = "faithfulness,answer_relevancy,context_precision,context_recall,context_relevance,answer_correctness"


def _rows() -> list[dict[str, Any]]:
    ja = json.loads((ROOT / "sample_data" / "ml_qa_ja.json").read_text(encoding="utf-8"))
    en = json.loads((ROOT / "sample_data" / "ml_qa_en.json").read_text(encoding="utf-8"))
    numbered = [
        {**row, "id": f"n{i}", "question": f"{row['question']}（{i}）", "answer": f"{row['answer']}（{i}）"}
        for i, row in enumerate(ja)
    ]
    return ja + en + numbered


def offline_scores(work: Path) -> dict[str, Any]:
    """``{"row|method|metric": value or "unscored:<reason>"}`` of one offline CLI run over ``_rows()``."""
    data = work / "rows.json"
    data.write_text(json.dumps(_rows(), ensure_ascii=False), encoding="utf-8")
    out = work / "out.json"
    code = cli.main(["evaluate", str(data), "--provider", "offline", "--metrics", METRICS, "--judge", "rubric5",
                     "--quiet", "--out", str(out)])
    assert code == 0
    scores: dict[str, Any] = {}
    for row in json.loads(out.read_text(encoding="utf-8"))["rows"]:
        for r in row["results"]:
            key = f"{row['id']}|{r['method']}|{r['metric']}"
            scores[key] = r["value"] if r["unscored_reason"] is None else f"unscored:{r['unscored_reason']}"
    return scores


def _same(pinned: Any, got: Any) -> bool:
    if isinstance(pinned, float) and isinstance(got, float):
        return abs(pinned - got) <= 1e-4
    return pinned == got


def test_offline_scores_of_the_sample_rows_are_pinned(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    got = offline_scores(tmp_path)
    assert sorted(got) == sorted(pinned)
    assert len(got) == 36 * 10  # 36 rows × (6 metrics + 4 rubric5 criteria)
    moved = {k: (pinned[k], got[k]) for k in pinned if not _same(pinned[k], got[k])}
    assert not moved, moved


if __name__ == "__main__":  # rewrite the pinned values (only when a score is meant to change)
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RAGEVAL_HOME"] = str(Path(tmp) / "home")
        for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
            os.environ.pop(name, None)
        PINNED.write_text(json.dumps(offline_scores(Path(tmp)), ensure_ascii=False, indent=0, sort_keys=True) + "\n",
                          encoding="utf-8")
    sys.exit(0)
