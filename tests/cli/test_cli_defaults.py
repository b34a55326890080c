"""The defaults the README promises (issue 38 item 8): the provider is offline unless a command names another, and
``evaluate`` without ``--out`` prints its summary on stdout and stores the run (no export file), so docs/traces.md's
``evaluate traces.jsonl --metrics faithfulness --judge rubric5`` is a whole command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.store.runs import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = str(ROOT / "sample_data" / "ml_qa_en.json")


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_evaluate_without_provider_or_out_runs_offline_prints_the_summary_and_stores_the_run(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["evaluate", SAMPLE, "--metrics", "faithfulness", "--judge", "rubric5", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"faithfulness\s+decomposed\s+0\.\d{3}\s+12\s", out)  # the summary table, on stdout
    run_id = re.search(r"run (\S+) \(done\) stored; export it with: runs export \1 --out results.json", out).group(1)
    info = Store().find_run(run_id)
    assert info is not None and info.provider == "offline"
    assert sorted(p.name for p in home.iterdir()) == ["home"]  # no export file written anywhere in the folder
    assert cli.main(["runs", "export", run_id, "--out", "later.json"]) == 0  # and the stored run exports later
    exported = json.loads((home / "later.json").read_text(encoding="utf-8"))
    assert exported["run_id"] == run_id and exported["provider"] == "offline" and len(exported["rows"]) == 12


def test_the_default_provider_gives_the_same_scores_as_provider_offline(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["evaluate", SAMPLE, "--metrics", "faithfulness", "--quiet", "--out", "a.json"]) == 0
    assert cli.main(["evaluate", SAMPLE, "--metrics", "faithfulness", "--quiet", "--out", "b.json",
                     "--provider", "offline"]) == 0
    capsys.readouterr()
    a, b = (json.loads((home / name).read_text(encoding="utf-8")) for name in ("a.json", "b.json"))
    assert a["provider"] == b["provider"] == "offline"
    mean = a["summary"]["decomposed"]["faithfulness"]["mean"]
    assert mean == pytest.approx(b["summary"]["decomposed"]["faithfulness"]["mean"], abs=1e-12)  # summed in any order


def test_naming_still_needs_an_out_file(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["evaluate", SAMPLE, "--metrics", "faithfulness", "--naming", "ragas"]) == 2
    assert "--naming writes the rows in that tool's shape: give --out FILE" in capsys.readouterr().err


def test_synth_and_the_built_in_rag_default_to_offline(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = str(ROOT / "sample_data" / "company_policy_ja.md")
    assert cli.main(["synth", policy, "--per-section", "1", "--out", "testset.json", "--quiet"]) == 0
    assert cli.main(["rag", "testset.json", "--docs", policy, "--out", "answers.json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "answers by offline/" in out and (home / "answers.json").is_file()
    assert cli.main(["rag", "testset.json", "--out", "answers.json"]) == 2  # neither a system nor --docs
    assert "--docs DOC [--provider P]" in capsys.readouterr().err
