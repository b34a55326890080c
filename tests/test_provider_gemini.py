"""The real google-genai SDK against the local fake server: success, structured output, n via candidate
count, 429 with RetryInfo (wait asserted through the fake clock), 500, malformed body, timeout, bad key,
embeddings via batchEmbedContents."""

from __future__ import annotations

import json

import pytest

from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.llm.clock import FakeClock
from rageval_core.llm.gemini_provider import GeminiLLM
from rageval_core.llm.registry import ProviderConfig, build_embedder, build_llm
from rageval_core.tasks import JUDGE, judge_schema
from tests.support.fake_server import FakeLLMServer

KEY = "AIzaFakeGeminiKey0123456789abcdefgh"


@pytest.fixture()
def server():
    with FakeLLMServer() as srv:
        yield srv


def judge_request() -> LLMRequest:
    return LLMRequest(
        task=JUDGE,
        messages=(Message("system", "You are a strict judge."), Message("user", "質問: 東京は日本の首都ですか？")),
        schema=judge_schema(["faithfulness"], min_score=1, max_score=5),
        temperature=0.0,
        seed=7,
        max_output_tokens=256,
    )


def direct(server: FakeLLMServer, timeout_s: float = 5.0) -> GeminiLLM:
    return GeminiLLM(api_key=KEY, model="gemini-2.5-flash", base_url=server.gemini_base_url, timeout_s=timeout_s)


def stack(server: FakeLLMServer, tmp_path, clock: FakeClock, **overrides):
    cfg = ProviderConfig(provider="gemini", api_key=KEY, base_url=server.gemini_base_url, cache=False, **overrides)
    return build_llm(cfg, db_path=tmp_path / "db.sqlite", clock=clock)


def test_success_with_structured_output_and_generation_config(server):
    server.responder = lambda req: {"faithfulness_score": 5, "faithfulness_reason": "はい、東京です。"}
    done = direct(server).complete(judge_request())
    assert json.loads(done.text) == {"faithfulness_score": 5, "faithfulness_reason": "はい、東京です。"}
    assert done.provider == "gemini" and done.model == "gemini-2.5-flash"
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    logged = server.requests[-1]
    assert logged.path.endswith("/models/gemini-2.5-flash:generateContent")
    assert logged.headers["x-goog-api-key"] == "<redacted>"
    config = logged.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == judge_schema(["faithfulness"], min_score=1, max_score=5)
    assert config["seed"] == 7 and config["maxOutputTokens"] == 256 and config["temperature"] == 0.0
    assert logged.body["systemInstruction"]["parts"][0]["text"] == "You are a strict judge."
    assert logged.body["contents"][0]["parts"][0]["text"].startswith("質問")


def test_n_choices_use_candidate_count(server):
    server.responder = lambda req: ["q1", "q2", "q3"]
    req = LLMRequest(task="generate_questions", messages=(Message("user", "questions please"),), n=3)
    done = direct(server).complete(req)
    assert done.texts == ["q1", "q2", "q3"]
    assert server.requests[-1].body["generationConfig"]["candidateCount"] == 3


def test_429_retry_info_delay_is_honoured_through_the_clock(server, tmp_path):
    clock = FakeClock()
    server.fault("rate_limit", retry_after=12)
    llm = stack(server, tmp_path, clock)
    assert llm.complete(judge_request()).text
    assert clock.sleeps == [12.0]
    assert server.count(":generateContent") == 2


def test_429_maps_to_rate_limit_with_retry_info(server):
    server.fault("rate_limit", retry_after=1.5)
    with pytest.raises(ProviderError) as info:
        direct(server).complete(judge_request())
    assert (info.value.kind, info.value.status, info.value.retry_after, info.value.retryable) == ("rate_limit", 429, 1.5, True)


def test_500_is_retryable_server_error_without_sdk_retries(server):
    server.fault("server_error")
    with pytest.raises(ProviderError) as info:
        direct(server).complete(judge_request())
    assert info.value.kind == "server" and info.value.retryable
    assert server.count() == 1


def test_malformed_body_is_a_malformed_response(server, tmp_path):
    clock = FakeClock()
    server.fault("malformed")
    with pytest.raises(ProviderError) as info:
        stack(server, tmp_path, clock).complete(judge_request())
    assert info.value.kind == "malformed_response"
    assert server.count() == 1 and clock.sleeps == []


def test_timeout(server):
    server.fault("hang", seconds=5)
    with pytest.raises(ProviderError) as info:
        direct(server, timeout_s=0.5).complete(judge_request())
    assert info.value.kind == "timeout" and info.value.retryable


def test_invalid_key_is_auth(server):
    server.api_key = "AIzaTheRightKey000000000000000000000"
    with pytest.raises(ProviderError) as info:
        direct(server).complete(judge_request())
    assert info.value.kind == "auth" and not info.value.retryable


def test_embeddings_batch_and_cache(server, tmp_path):
    embedder = build_embedder(ProviderConfig(provider="gemini", api_key=KEY, base_url=server.gemini_base_url), db_path=tmp_path / "db.sqlite")
    vectors = embedder.embed(["東京", "大阪", "東京"])
    assert vectors.shape == (3, server.embed_dim) and (vectors[0] == vectors[2]).all()
    assert server.count(":batchEmbedContents") == 1
    assert "gemini-embedding-001" in server.requests[-1].path
    embedder.embed(["大阪"])
    assert server.count(":batchEmbedContents") == 1
