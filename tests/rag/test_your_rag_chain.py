"""The CLI chain synth → rag → evaluate with your own system: a Python callable from the tests, and a loopback
server that fails or hangs on some questions (those rows are marked, the rest are evaluated)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rageval_core import cli
from tests.support.rag_server import RagServer

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "sample_data" / "company_policy_ja.md"


@pytest.fixture()
def rag_server() -> Iterator[RagServer]:
    srv = RagServer()
    yield srv
    srv.close()


@pytest.fixture()
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["synth", str(DOC), "--provider", "offline", "--per-section", "1", "--types", "fact=3,reasoning=1",
                     "--out", "testset.json", "--quiet"]) == 0
    return tmp_path


def _plant(path: Path, marks: dict[int, str]) -> list[str]:
    """Append FAIL / HANG to the questions at the given row positions; returns every row id."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for n, mark in marks.items():
        data["rows"][n]["question"] += f" {mark}"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return [r["id"] for r in data["rows"]]


def _results(path: Path) -> dict[str, dict]:
    export = json.loads(path.read_text(encoding="utf-8"))
    return {row["id"]: {r["metric"]: r for r in row["results"]} for row in export["rows"]}


def test_synth_rag_callable_evaluate(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _plant(work / "testset.json", {1: "FAIL"})
    assert cli.main(["rag", "testset.json", "--callable", "tests.support.rag_server:policy_rag", "--max-retries", "0",
                     "--out", "answered.json", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"{ids[1]}: " in err and "RuntimeError: retriever down" in err
    rows = {r["id"]: r for r in json.loads((work / "answered.json").read_text(encoding="utf-8"))}
    assert rows[ids[0]]["contexts"] == ["第1条 この規程は全従業員に適用する。"] and rows[ids[0]]["rag_system"] == "callable"
    assert rows[ids[0]]["question_type"] in ("fact", "reasoning")  # the test set's metadata rides along
    assert cli.main(["evaluate", "answered.json", "--provider", "offline", "--metrics", "faithfulness", "--quiet",
                     "--out", "results.json"]) == 0
    results = _results(work / "results.json")
    assert set(results) == set(ids)
    assert results[ids[1]]["faithfulness"]["unscored_reason"] == "empty_answer"
    assert all(results[i]["faithfulness"]["value"] is not None for i in ids if i != ids[1])


def test_a_server_that_fails_or_hangs_marks_those_rows_and_the_rest_are_evaluated(
    work: Path, rag_server: RagServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _plant(work / "testset.json", {0: "FAIL", 2: "HANG"})
    assert cli.main(["rag", "testset.json", "--endpoint", rag_server.url, "--timeout", "1", "--max-retries", "0",
                     "--out", "answered.json", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"{ids[0]}: server" in err and f"{ids[2]}: timeout" in err
    rows = {r["id"]: r for r in json.loads((work / "answered.json").read_text(encoding="utf-8"))}
    assert rows[ids[0]]["answer"] == "" and rows[ids[2]]["answer"] == ""
    assert all(rows[i]["answer"] and rows[i]["rag_latency_s"] is not None for i in ids if i not in (ids[0], ids[2]))
    assert cli.main(["evaluate", "answered.json", "--provider", "offline", "--metrics", "faithfulness", "--quiet",
                     "--out", "results.json"]) == 0
    results = _results(work / "results.json")
    assert {results[i]["faithfulness"]["unscored_reason"] for i in (ids[0], ids[2])} == {"empty_answer"}
    scored = [i for i in ids if i not in (ids[0], ids[2])]
    assert scored and all(results[i]["faithfulness"]["value"] is not None for i in scored)
