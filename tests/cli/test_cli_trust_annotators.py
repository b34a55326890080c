"""``trust`` with a two-annotator labels file: kappa between the people with its interval beside each judge's,
the verdict sentence, the rows to settle, and the ``annotators`` block of ``--out`` JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "sample_data" / "trust_labelled.jsonl"
TWO = ROOT / "sample_data" / "trust_two_annotators.jsonl"


def test_two_annotators_in_the_cli_and_the_json(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    code = cli.main(["trust", str(DATA), "--labels", str(TWO), "--metrics", "faithfulness", "--judge", "rubric5",
                     "--iterations", "200", "--out", "trust.json", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "agreement between people (aiko, ben; 95% bootstrap intervals) beside the judges:" in out
    block = json.loads((tmp_path / "trust.json").read_text(encoding="utf-8"))["annotators"]
    assert block["annotators"] == ["aiko", "ben"] and block["to_settle"] == 5
    by = {c["criterion"]: c for c in block["criteria"]}
    # faithfulness: 21 of 24 rows agree, 11 vs 12 passes: pe = 0.5, kappa = (0.875 - 0.5) / 0.5 = 0.75
    # answer_correctness: 22 of 24 agree, 12 vs 14 passes: pe = 0.5, kappa = (22/24 - 0.5) / 0.5 = 5/6
    assert by["faithfulness"]["people"]["value"] == pytest.approx(0.75)
    assert by["answer_correctness"]["people"]["value"] == pytest.approx(5 / 6)
    low, high = by["faithfulness"]["people"]["low"], by["faithfulness"]["people"]["high"]
    assert low < 0.75 <= high
    judges = {j["method"]: j for j in by["faithfulness"]["judges"]}
    assert set(judges) == {"decomposed", "judge:rubric5"}
    assert set(judges["judge:rubric5"]["per_annotator"]) == {"aiko", "ben"}
    assert judges["judge:rubric5"]["sentence"] in out
    assert [d["row_id"] for d in by["faithfulness"]["disagreements"]] == ["t12", "t13", "t17"]
    assert "to settle (5 disagreement(s); open the row in Inspect):" in out
