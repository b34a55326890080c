"""synth → rag over the OpenAI wire format (the real SDK against the local fake server): the rendered
templates reach the server, a refused section is marked and the rest goes on, embeddings come from the API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset
from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "sample_data" / "company_policy_ja.md"


def block(prompt: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.DOTALL)
    return m.group(1) if m else ""


def responder(request: FakeRequest) -> dict:
    props = set((request.schema or {}).get("properties") or {})
    if props == {"pairs"}:
        heading = block(request.prompt, "heading")
        first = block(request.prompt, "text").split("。")[0] + "。"
        return {"pairs": [{"question": f"{heading}では何が定められていますか？", "answer": first}]}
    if props == {"answer"}:
        first_context = re.search(r'<context index="1">\n(.*?)\n</context>', request.prompt, re.DOTALL)
        return {"answer": first_context.group(1).split("。")[0] + "。" if first_context else "記載がありません。"}
    raise AssertionError(f"unexpected schema {props}")


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_openai_compatible_synth_and_rag_with_one_refused_section(home, capsys):
    with FakeLLMServer(responder=responder) as server:
        api = ["--provider", "openai-compatible", "--base-url", server.openai_base_url, "--model", "fake-gen", "--max-retries", "0"]
        server.fault("rate_limit", retry_after=0, path="/chat/completions")  # no retries: section 0 fails
        assert cli.main(["synth", str(POLICY), *api, "--per-section", "1", "--out", "ts.json", "--quiet"]) == 0
        err = capsys.readouterr().err
        assert "section 0" in err and "failed: provider_error (rate_limit)" in err
        prompts = [json.dumps(r.body, ensure_ascii=False) for r in server.requests if "chat/completions" in r.path]
        assert len(prompts) == 8 and all("評価データ作成担当者" in p for p in prompts)  # the ja template on the wire
        testset = json.loads((home / "ts.json").read_text(encoding="utf-8"))
        assert testset["generator"]["offline"] is False and testset["generator"]["model"] == "fake-gen"
        assert [s["status"] for s in testset["sections"]] == ["failed"] + ["ok"] * 7
        assert len(testset["rows"]) == 7 and all(r["grounding"] == 1.0 for r in testset["rows"])

        server.reset_log()
        rag = ["rag", "ts.json", "--docs", str(POLICY), *api, "--embedding-model", "fake-embed", "--k", "2", "--out", "rag.json", "--quiet"]
        assert cli.main(rag) == 0
        assert server.count("/embeddings") >= 1 and server.count("/chat/completions") == 7
    rows = load_dataset(home / "rag.json").samples
    assert len(rows) == 7 and all(r.answer and len(r.contexts) == 2 for r in rows)
    assert all(r.metadata["rag_provider"] == "openai-compatible" and "rag_offline" not in r.metadata for r in rows)
    assert rows[0].metadata["rag_embedder"].endswith("fake-embed")
