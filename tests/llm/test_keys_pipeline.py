"""A planted API key never reaches what a whole evaluation leaves behind: the run store and its call log,
the response cache, the record log, JSON / CSV / JSONL exports, printed output and the error messages kept
with unscored rows — for an OpenAI-compatible and a Gemini run through the CLI against the fake server,
including a server that echoes the key in its error messages."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset, save_dataset
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.store_bytes import readable

ROOT = Path(__file__).resolve().parents[2]
OPENAI_KEY = "sk-pipeline-LEAKCHECK-3b9f0c7d21e84a6b"
GEMINI_KEY = "AIzaPipelineLEAKCHECK_q8Wn2Xk5Rv7Tz1Ym"


def _dataset(tmp_path: Path) -> Path:
    rows = load_dataset(ROOT / "sample_data" / "ml_qa_en.json").samples[:3]
    return save_dataset(rows, tmp_path / "rows.json")


def _evaluate(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("provider", ["openai-compatible", "gemini"])
def test_planted_key_never_reaches_store_exports_logs_or_messages(provider, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    key = OPENAI_KEY if provider == "openai-compatible" else GEMINI_KEY
    data = _dataset(tmp_path)
    db = tmp_path / "store.sqlite"
    printed: list[str] = []
    with FakeLLMServer() as server:
        base_url = server.openai_base_url if provider == "openai-compatible" else server.gemini_base_url
        server.fault("echo_key", times=8)  # a proxy that quotes the key in its 400 message (enough to outlast the json_schema fallback ladder)
        code, text = _evaluate(
            [
                "--db", str(db), "evaluate", str(data), "--provider", provider, "--base-url", base_url,
                "--model", "fake-judge", "--embedding-model", "fake-embed",
                "--metrics", "faithfulness,answer_relevancy", "--judge", "rubric5",
                "--out", str(tmp_path / "out.json"), "--calls-out", str(tmp_path / "calls.jsonl"),
                "--record-log", str(tmp_path / "record.jsonl"), "--details", "--quiet", "--concurrency", "2",
            ],
            capsys,
        )
        printed.append(text)
        assert code == 0, text
        # The key did reach the server, so the checks below are meaningful.
        assert server.total_requests > 0
    export = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    results = [r for row in export["rows"] for r in row["results"]]
    echoed = [r for r in results if r["unscored_reason"] == "provider_error"]
    assert echoed, "the echo_key fault should leave at least one unscored row with the server's message"
    assert all("***" in (r["reason"] or "") for r in echoed), [r["reason"] for r in echoed]
    run_id = export["run_id"]
    for extra in (
        ["runs", "export", run_id, "--out", str(tmp_path / "again.csv")],
        ["runs", "export", run_id, "--out", str(tmp_path / "again.json"), "--details"],
        ["runs", "calls", run_id, "--out", str(tmp_path / "again.jsonl")],
        ["runs", "list"],
    ):
        code, text = _evaluate(["--db", str(db), *extra], capsys)
        printed.append(text)
        assert code == 0, text

    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "rows.json"]
    names = {p.name for p in files}
    assert {"store.sqlite", "out.json", "calls.jsonl", "record.jsonl", "again.csv", "again.json", "again.jsonl"} <= names
    with sqlite3.connect(db) as conn:  # the store holds the run, its call log and the response cache
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert conn.execute("SELECT COUNT(*) FROM llm_response_cache").fetchone()[0] > 0, tables
    calls = (tmp_path / "calls.jsonl").read_text(encoding="utf-8")
    assert '"error"' in calls and "***" in calls  # the failed calls are logged, scrubbed
    blobs = [readable(p) for p in files] + [t.encode("utf-8") for t in printed]
    for secret in (key, key[-12:]):
        leaked = [p.name for p, b in zip(files, blobs) if secret.encode() in b]
        assert not leaked, f"{secret!r} found in {leaked}"
        assert all(secret.encode() not in b for b in blobs)
