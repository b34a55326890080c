"""Issue 10, must show: a planted key, a credentialed base URL (userinfo and ``?key=``) and a RAG endpoint's
header token are found in no file under the state directory (RAGEVAL_HOME; every file, SQLite and its WAL
included, as bytes), no export, no record log, no crash log and no printed output — through the CLI
(``python -m rageval_core`` as a subprocess, then in-process) with the real openai and google-genai SDKs, against
servers that echo what they received (key, Authorization header, request URL) inside successful answers and the
key inside a 401 body.

The planted values have no well-known key shape (no ``sk-`` / ``AIza`` prefix), so only the redaction of
known values and URL / header forms can catch them, not the shape patterns."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset, save_dataset
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.rag_server import RagServer
from tests.support.store_bytes import readable

ROOT = Path(__file__).resolve().parents[2]
OPENAI_KEY = "plainOpenaiValue-LEAKCHECK-7731x"
GEMINI_KEY = "plainGeminiValue-LEAKCHECK-4412y"
URL_PASSWORD = "urlPassword-LEAKCHECK-9031z"
QUERY_KEY = "queryKeyValue-LEAKCHECK-5508w"
RAG_TOKEN = "ragHeaderToken-LEAKCHECK-2290v"
BASIC = base64.b64encode(f"alice:{URL_PASSWORD}".encode()).decode()
PLANTED = (OPENAI_KEY, GEMINI_KEY, URL_PASSWORD, QUERY_KEY, RAG_TOKEN, BASIC)


def _leaks(root: Path, printed: list[str]) -> list[str]:
    """Every planted value (and a 12-character tail of each, a truncated echo) found in any file or output."""
    blobs = [(str(p.relative_to(root)), readable(p)) for p in root.rglob("*") if p.is_file() and p.name != "rows.json"]
    blobs += [(f"output {i}", t.encode("utf-8")) for i, t in enumerate(printed)]
    needles = {s for value in PLANTED for s in (value, value[-12:])}
    return [f"{s!r} in {name}" for s in sorted(needles) for name, blob in blobs if s.encode() in blob]


def _main(args: list[str], capsys: pytest.CaptureFixture[str], printed: list[str]) -> int:
    code = cli.main(args)
    out = capsys.readouterr()
    printed.append(out.out + out.err)
    return code


def _subprocess(args: list[str], env: dict[str, str], cwd: Path, printed: list[str]) -> int:
    done = subprocess.run([sys.executable, "-m", "rageval_core", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    printed.append(done.stdout + done.stderr)
    return done.returncode


def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in (("RAGEVAL_HOME", str(tmp_path / "home")), ("OPENAI_API_KEY", OPENAI_KEY),
                        ("GEMINI_API_KEY", GEMINI_KEY), ("MY_RAG_TOKEN", RAG_TOKEN)):
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("case", ["openai-userinfo", "openai-key", "gemini-query"])
def test_planted_key_and_credentialed_url_reach_no_file_and_no_output(case, tmp_path, monkeypatch, capsys):
    env = _env(tmp_path, monkeypatch)
    rows = save_dataset(load_dataset(ROOT / "sample_data" / "ml_qa_en.json").samples[:3], tmp_path / "rows.json")
    printed: list[str] = []
    with FakeLLMServer() as server:
        server.echo_secrets_in_answers = True  # every 200 answer quotes the key, the Authorization header and the URL
        provider = "gemini" if case.startswith("gemini") else "openai-compatible"
        root = f"http://alice:{URL_PASSWORD}@127.0.0.1:{server.port}"
        base_url = {"openai-userinfo": f"{root}/v1", "openai-key": f"http://127.0.0.1:{server.port}/v1",
                    "gemini-query": f"{root}/?key={QUERY_KEY}"}[case]
        if case != "openai-userinfo":  # (httpx sends URL userinfo as Basic auth in place of the Bearer key)
            server.api_key = GEMINI_KEY if provider == "gemini" else OPENAI_KEY  # the planted key really is sent
        server.fault("echo_key", status=401, times=1, path="generateContent" if provider == "gemini" else "chat")
        args = [
            "evaluate", str(rows), "--provider", provider, "--base-url", base_url, "--model", "fake-judge",
            "--embedding-model", "fake-embed", "--metrics", "faithfulness,answer_relevancy", "--judge", "rubric5",
            "--concurrency", "1", "--max-retries", "0", "--details", "--record-log", "record.jsonl",
        ]
        code = _subprocess([*args, "--out", "out.json", "--calls-out", "calls.jsonl"], env, tmp_path, printed)
        assert code == 0, printed[-1]
        assert _main([*args, "--out", "again.csv", "--calls-out", "calls2.jsonl"], capsys, printed) == 0, printed[-1]
        answered = [r for r in server.requests if r.status == 200 and "embed" not in r.path.lower()]
        assert answered, "the server answered chat requests, so the echo reached the client"
    export = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    run_id = export["run_id"]
    for extra in (["runs", "export", run_id, "--out", "x.json", "--details"], ["runs", "export", run_id, "--out", "x.csv"],
                  ["runs", "calls", run_id, "--out", "x.jsonl"], ["runs", "list"]):
        assert _main(extra, capsys, printed) == 0, printed[-1]
    assert not _leaks(tmp_path, printed)

    # The echo arrived and was redacted, not dropped: answers and the 401 reason show *** in its place.
    calls = (tmp_path / "calls.jsonl").read_text(encoding="utf-8")
    seen = re.findall(r"\[seen: [^\]]*\]", calls)
    assert seen and all("***" in echo for echo in seen), seen[:3]
    reasons = [r["reason"] or "" for row in export["rows"] for r in row["results"] if r["unscored_reason"] == "provider_error"]
    assert reasons and all("***" in r for r in reasons), reasons
    # The run keeps the host without credentials; the second run was answered by the cache.
    assert export["base_url"].startswith("http://***@127.0.0.1:" if "@" in base_url else "http://127.0.0.1:")
    assert "cache hits" in printed[1], printed[1]


@pytest.fixture()
def rag_server() -> Iterator[RagServer]:
    srv = RagServer()
    yield srv
    srv.close()


def test_rag_endpoint_header_token_and_url_credentials_reach_no_file_and_no_output(rag_server, tmp_path, monkeypatch, capsys):
    env = _env(tmp_path, monkeypatch)
    testset = tmp_path / "testset.json"
    testset.write_text(json.dumps([{"question": "What is RAG?", "answer": "x"}, {"question": "DENY this", "answer": "y"}]),
                       encoding="utf-8")
    endpoint = f"http://127.0.0.1:{rag_server.port}/rag?token={QUERY_KEY}"
    printed: list[str] = []
    args = ["rag", str(testset), "--endpoint", endpoint, "--header", "Authorization: Bearer $MY_RAG_TOKEN",
            "--max-retries", "0", "--record-log", "rag-record.jsonl"]
    assert _subprocess([*args, "--out", "answered.json"], env, tmp_path, printed) == 0, printed[-1]
    assert rag_server.requests[0]["auth"] == f"Bearer {RAG_TOKEN}"  # the token was read at call time and sent
    assert _main([*args, "--out", "answered.csv"], capsys, printed) == 0, printed[-1]
    literal = ["rag", str(testset), "--endpoint", f"http://alice:{URL_PASSWORD}@127.0.0.1:{rag_server.port}/rag",
               "--header", f"X-Api-Token: {RAG_TOKEN}", "--max-retries", "0", "--out", "literal.jsonl"]
    assert _main(literal, capsys, printed) == 0, printed[-1]
    assert _main(["evaluate", "answered.json", "--provider", "offline", "--metrics", "faithfulness", "--out", "res.json"],
                 capsys, printed) in (0, 2)
    assert not _leaks(tmp_path, printed)
    rows = json.loads((tmp_path / "answered.json").read_text(encoding="utf-8"))
    rows = rows if isinstance(rows, list) else rows["rows"]
    assert "(auth: Bearer ***; url /rag?token=***)" in rows[0]["answer"]  # redacted in place, the rest kept
    assert "HTTP 401" in rows[1]["rag_error"] and "token Bearer *** is not allowed (/rag?token=***)" in rows[1]["rag_error"]


def test_the_crash_log_of_an_internal_error_holds_no_secret(tmp_path, monkeypatch, capsys):
    _env(tmp_path, monkeypatch)
    rows = save_dataset(load_dataset(ROOT / "sample_data" / "ml_qa_en.json").samples[:1], tmp_path / "rows.json")
    base_url = f"http://alice:{URL_PASSWORD}@127.0.0.1:9/v1?key={QUERY_KEY}"

    def broken(*args, **kwargs):
        raise RuntimeError(f"export failed for {base_url} with {OPENAI_KEY} and Bearer {RAG_TOKEN}")

    monkeypatch.setattr("rageval_core.analysis.export.export_json", broken)
    printed: list[str] = []
    code = _main(["evaluate", str(rows), "--provider", "offline", "--metrics", "faithfulness", "--out", "out.json",
                  "--base-url", base_url], capsys, printed)
    logs = list((tmp_path / "home" / "logs").glob("internal-error-*.log"))
    if code != 3:  # offline ignores --base-url only if the CLI accepts it; the contract is exit 3 either way
        pytest.fail(f"expected exit 3, got {code}: {printed[-1]}")
    assert len(logs) == 1 and "RuntimeError" in logs[0].read_text(encoding="utf-8")
    assert not _leaks(tmp_path, printed)


def test_an_unreachable_credentialed_url_is_reported_without_its_credentials(tmp_path, monkeypatch, capsys):
    _env(tmp_path, monkeypatch)
    rows = save_dataset(load_dataset(ROOT / "sample_data" / "ml_qa_en.json").samples[:1], tmp_path / "rows.json")
    printed: list[str] = []
    code = _main(["evaluate", str(rows), "--provider", "openai-compatible", "--model", "m", "--metrics", "faithfulness",
                  "--base-url", f"http://alice:{URL_PASSWORD}@127.0.0.1:9/v1", "--max-retries", "0", "--timeout", "5",
                  "--out", "out.json"], capsys, printed)
    assert code != 0
    export = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    reasons = [r["reason"] for row in export["rows"] for r in row["results"]]
    assert any("http://***@127.0.0.1:9/v1" in (r or "") for r in reasons), reasons
    assert "http://***@127.0.0.1:9/v1" in printed[-1]  # the failure summary names the cause, redacted
    assert not _leaks(tmp_path, printed)
