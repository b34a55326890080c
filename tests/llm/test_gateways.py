"""Gateways in front of the providers, through ``openai-compatible`` and the real openai SDK against the local
server: a LiteLLM-proxy-shaped and an OpenRouter-shaped endpoint — a path prefix before ``/chat/completions``,
headers from ``RAGEVAL_EXTRA_HEADERS`` sent on every request (chat and embeddings) and never written anywhere,
provider-prefixed model names kept as they are, priced only where the user priced them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset, save_dataset
from rageval_core.llm.base import LLMRequest, Message
from rageval_core.llm.transport.sdk_clients import extra_headers
from rageval_core.providers.config import ProviderConfig, check_config
from rageval_core.providers.registry import build_embedder, build_llm
from tests.support.store_bytes import readable

ROOT = Path(__file__).resolve().parents[2]
LITELLM_KEY = "sk-litellm-virtual-LEAKCHECK-91ab"
OPENROUTER_KEY = "sk-or-v1-LEAKCHECK-3c4d5e6f7a8b"
SUBSCRIPTION = "apim-subscription-LEAKCHECK-77e1"
SHAPES = {
    # LiteLLM proxy behind a company reverse proxy: a prefix, a tag header and an API-management key header
    "litellm": ("/llm-gateway/v1", "anthropic/claude-haiku-4-5", LITELLM_KEY,
                f'{{"x-litellm-tags": "rag-eval", "Ocp-Apim-Subscription-Key": "{SUBSCRIPTION}"}}'),
    # OpenRouter: /api/v1, its attribution headers in the Name=value form, vendor/model names
    "openrouter": ("/api/v1", "google/gemini-2.5-flash", OPENROUTER_KEY, "HTTP-Referer=https://example.com/rag-eval, X-Title=RAG Eval Workbench"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_gateway_prefix_headers_and_prefixed_model_names(shape, server, monkeypatch):
    prefix, model, key, headers = SHAPES[shape]
    monkeypatch.setenv("RAGEVAL_EXTRA_HEADERS", headers)
    server.api_key = key
    cfg = ProviderConfig(provider="openai-compatible", base_url=f"{server.url}{prefix}", model=model, api_key=key,
                         embedding_model="openai/text-embedding-3-small", cache=False)
    assert check_config(cfg) == []
    done = build_llm(cfg).complete(LLMRequest(task="plain", messages=(Message("user", "hi"),)))
    build_embedder(cfg).embed(["one"])
    chat, embed = server.requests[-2], server.requests[-1]
    assert (chat.path, embed.path) == (f"{prefix}/chat/completions", f"{prefix}/embeddings")
    assert chat.body["model"] == model and embed.body["model"] == "openai/text-embedding-3-small" and done.model == model
    for sent in (chat, embed):
        if shape == "litellm":
            assert sent.headers["x-litellm-tags"] == "rag-eval" and sent.headers["ocp-apim-subscription-key"] == SUBSCRIPTION
        else:
            assert sent.headers["http-referer"] == "https://example.com/rag-eval" and sent.headers["x-title"] == "RAG Eval Workbench"
    assert done.cost_usd == 0.0  # a gateway's model is unpriced until the user prices it


def test_a_priced_gateway_model_is_billed_and_no_header_reaches_disk(server, tmp_path, monkeypatch, capsys):
    prefix, model, key, headers = SHAPES["litellm"]
    home = tmp_path / "home"
    home.mkdir()
    (home / "prices.json").write_text(json.dumps({"models": {f"openai-compatible:{model}": {"input": 1.0, "output": 5.0}}}), encoding="utf-8")
    for name, value in (("RAGEVAL_HOME", str(home)), ("RAGEVAL_EXTRA_HEADERS", headers), ("OPENAI_API_KEY", key)):
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    server.api_key = key
    rows = save_dataset(load_dataset(ROOT / "sample_data" / "ml_qa_ja.json").samples[:2], tmp_path / "rows.json")
    code = cli.main(["evaluate", str(rows), "--provider", "openai-compatible", "--base-url", f"{server.url}{prefix}", "--model", model,
                     "--judge", "rubric5", "--metrics", "faithfulness", "--out", "out.json", "--calls-out", "calls.jsonl", "--details"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    export = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert export["model"] == model and export["summary"]
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert calls and all(c["cost_usd"] > 0 for c in calls if not c.get("error"))
    assert all(r.headers.get("ocp-apim-subscription-key") == SUBSCRIPTION for r in server.requests if r.path.endswith("/chat/completions"))
    blobs = [readable(p) for p in tmp_path.rglob("*") if p.is_file()] + [(printed.out + printed.err).encode()]
    assert not [b for b in blobs if SUBSCRIPTION[-12:].encode() in b or key[-12:].encode() in b]


@pytest.mark.parametrize("value", ["{not json", '{"X-A": 1}', "X-A", "Bad Name=1"])
def test_unreadable_extra_headers_are_a_configuration_problem_that_never_quotes_a_value(value, monkeypatch):
    monkeypatch.setenv("RAGEVAL_EXTRA_HEADERS", value)
    problems = check_config(ProviderConfig(provider="openai-compatible", base_url="http://127.0.0.1:9/v1", model="m"))
    assert len(problems) == 1 and "RAGEVAL_EXTRA_HEADERS" in problems[0]
    assert extra_headers({}) == {}
