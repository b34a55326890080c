"""``rageval runs theirs RUN``: a ragas results CSV (tests/data/external, written by ragas 0.4.3) evaluated offline,
then ragas's scores set beside ours from the store, as Compare's "their scores vs ours" tab shows them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.views.theirs import for_run
from rageval_core.store.runs import Store

RESULTS = Path(__file__).resolve().parents[1] / "data" / "external" / "ragas_results.csv"


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_runs_theirs_lists_matches_agreement_and_rows(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["evaluate", str(RESULTS), "--provider", "offline", "--metrics", "faithfulness,answer_correctness",
                     "--out", "o.json", "--quiet"]) == 0
    run_id = json.loads((home / "o.json").read_text(encoding="utf-8"))["run_id"]
    capsys.readouterr()
    assert cli.main(["runs", "theirs", run_id[:12], "--limit", "2", "--out", "rows.csv"]) == 0
    out = capsys.readouterr().out
    assert "their scores come from the file" in out
    assert "compared: ragas faithfulness -> faithfulness (8 of 9 rows scored by ragas)" in out
    assert "not compared: ragas context_precision (this run did not compute context_precision)" in out
    view = for_run(Store(), run_id)
    line = view.agreement[view.agreement["column"] == "answer_correctness"].iloc[0]
    printed = next(ln for ln in out.splitlines() if ln.startswith("ragas:answer_correctness"))
    assert printed.split()[3:9] == ["9", *(f"{line[k]:.3f}" for k in ("pearson", "spearman", "mad",
                                                                              "mean_diff", "agree"))]
    worst = view.rows(next(c for c in view.matched if c.column == "faithfulness"), "decomposed").iloc[0]
    block = out[out.index("ragas:faithfulness vs our faithfulness by decomposed"):].splitlines()
    assert block[3].split()[0] == worst["sample_id"] and block[3].split()[3] == f"{worst['diff']:.3f}"
    with (home / "rows.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 18 and {r["column"] for r in rows} == {"faithfulness", "answer_correctness"}


def test_runs_theirs_without_other_tools_scores_says_so(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = RESULTS.parent / "ragas_to_jsonl.jsonl"
    assert cli.main(["evaluate", str(data), "--provider", "offline", "--metrics", "faithfulness", "--out", "o.json",
                     "--quiet"]) == 0
    run_id = json.loads((home / "o.json").read_text(encoding="utf-8"))["run_id"]
    capsys.readouterr()
    assert cli.main(["runs", "theirs", run_id]) == 2
    assert "carry no other tool's scores" in capsys.readouterr().err
