"""The real google-genai SDK against the local fake server: success, structured output, n via candidate
count, an endpoint that rejects response_json_schema (fallback to response_schema, then JSON mode), 429
with RetryInfo or Retry-After (wait asserted through the fake clock), 500, malformed body, timeout, bad
key, embeddings via batchEmbedContents."""

from __future__ import annotations

import json

import pytest

from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.core.clock import FakeClock
from rageval_core.llm.gemini_provider import (
    JSON_MIME,
    RESPONSE_JSON_SCHEMA,
    RESPONSE_SCHEMA,
    GeminiLLM,
    openapi_schema,
)
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.core.tasks import JUDGE, SCHEMAS, judge_schema
from rageval_core.testing.fake_llm import FakeLLMServer

KEY = "AIzaFakeGeminiKey0123456789abcdefgh"


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


def test_endpoint_rejecting_response_json_schema_falls_back_once_and_is_remembered(server):
    server.reject_response_json_schema = True  # 400 INVALID_ARGUMENT "Unknown name responseJsonSchema"
    server.responder = lambda req: {"faithfulness_score": 4, "faithfulness_reason": "ok"}
    llm = direct(server)
    done = llm.complete(judge_request())
    assert json.loads(done.text)["faithfulness_score"] == 4
    configs = [r.body["generationConfig"] for r in server.requests]
    assert ["responseJsonSchema" in c for c in configs] == [True, False]
    assert configs[1]["responseMimeType"] == "application/json"
    assert configs[1]["responseSchema"]["type"] == "OBJECT"  # the SDK's OpenAPI form of our JSON schema
    assert set(configs[1]["responseSchema"]["required"]) == {"faithfulness_score", "faithfulness_reason"}
    assert llm.structured_output == RESPONSE_SCHEMA and done.raw["structured_output"] == RESPONSE_SCHEMA
    server.reset_log()
    llm.complete(judge_request())
    assert server.count() == 1 and "responseSchema" in server.requests[0].body["generationConfig"]


def test_fallback_reaches_json_mode_when_both_schema_fields_are_rejected(server):
    server.reject_response_json_schema = True
    server.reject_response_schema = True
    llm = direct(server)
    assert llm.complete(judge_request()).text
    config = server.requests[-1].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert "responseSchema" not in config and "responseJsonSchema" not in config
    assert server.count() == 3 and llm.structured_output == JSON_MIME


def test_a_400_that_is_not_about_the_schema_is_not_a_fallback(server):
    server.fault("status", status=400, message="Request contains an invalid argument: contents is empty.")
    llm = direct(server)
    with pytest.raises(ProviderError) as info:
        llm.complete(judge_request())
    assert info.value.kind == "bad_request" and not info.value.retryable
    assert server.count() == 1 and llm.structured_output == RESPONSE_JSON_SCHEMA


@pytest.mark.parametrize("task", sorted(SCHEMAS))
def test_every_task_schema_survives_the_response_schema_level(server, task):
    """The middle level relies on the SDK converting our JSON schemas; every task's schema must convert."""
    server.reject_response_json_schema = True
    req = LLMRequest(task=task, messages=(Message("user", "x"),), schema=SCHEMAS[task])
    assert direct(server).complete(req).text
    assert "responseSchema" in server.requests[-1].body["generationConfig"]


def test_openapi_schema_expresses_nullable_types_and_integer_enums():
    verdict = openapi_schema(SCHEMAS["verify_claims"])["properties"]["verdicts"]["items"]["properties"]
    assert verdict["verdict"] == {"type": "integer", "minimum": 0, "maximum": 1}
    assert verdict["context_index"] == {"type": "integer", "nullable": True}
    assert verdict["supporting_sentence"]["type"] == "string" and verdict["supporting_sentence"]["nullable"] is True
    assert openapi_schema({"type": "string", "enum": ["a", "b"]}) == {"type": "string", "enum": ["a", "b"]}


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


def test_429_with_a_retry_after_header_is_honoured_too(server, tmp_path):
    """A proxy in front of Gemini may send Retry-After instead of RetryInfo."""
    clock = FakeClock()
    server.fault("rate_limit", retry_after=9, status=429)
    llm = stack(server, tmp_path, clock)
    assert llm.complete(judge_request()).text
    assert clock.sleeps == [9.0] and server.count(":generateContent") == 2
    assert llm.stats()["retries"] == 1


def test_500_through_the_stack_is_retried_with_backoff(server, tmp_path):
    clock = FakeClock()
    server.fault("server_error", times=2)
    llm = stack(server, tmp_path, clock)
    assert llm.complete(judge_request()).text
    assert server.count() == 3 and len(clock.sleeps) == 2
    assert 0.5 <= clock.sleeps[0] <= 1.0 and 1.0 <= clock.sleeps[1] <= 2.0


def test_timeout_through_the_stack_is_retried(server, tmp_path):
    clock = FakeClock()
    server.fault("hang", seconds=5)
    llm = stack(server, tmp_path, clock, timeout_s=0.5)
    assert llm.complete(judge_request()).text
    assert len(clock.sleeps) == 1 and server.count() == 2


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
