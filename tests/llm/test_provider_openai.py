"""The real openai SDK against the local fake server: success, structured output, json_schema fallback,
429 with Retry-After (wait asserted through the fake clock), 500, malformed body, timeout, auth, embeddings."""

from __future__ import annotations

import json

import pytest

from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.core.clock import FakeClock
from rageval_core.llm.openai_provider import (
    JSON_OBJECT,
    JSON_OBJECT_WITH_SCHEMA,
    JSON_SCHEMA,
    JSON_SCHEMA_LOOSE,
    OpenAILLM,
)
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer

KEY = "sk-test-openai-0123456789abcdef"


def claims_request(text: str = "The Eiffel Tower is in Paris. Answer in JSON.") -> LLMRequest:
    return LLMRequest(
        task=EXTRACT_CLAIMS,
        messages=(Message("system", "Extract claims as JSON."), Message("user", text)),
        schema=schema_for(EXTRACT_CLAIMS),
    )


def plain_request(text: str = "Say hi", n: int = 1) -> LLMRequest:
    return LLMRequest(task="rag_answer", messages=(Message("user", text),), n=n)


def direct(server: FakeLLMServer, provider: str = "openai", timeout_s: float = 5.0) -> OpenAILLM:
    return OpenAILLM(api_key=KEY, model="gpt-4o-mini", base_url=server.openai_base_url, timeout_s=timeout_s, provider=provider)


def stack(server: FakeLLMServer, tmp_path, clock: FakeClock, **overrides) -> object:
    cfg = ProviderConfig(provider="openai", api_key=KEY, base_url=server.openai_base_url, cache=False, **overrides)
    return build_llm(cfg, db_path=tmp_path / "db.sqlite", clock=clock)


def test_success_returns_text_usage_and_n_choices(server):
    server.responder = lambda req: [f"answer {i}" for i in range(req.n)]
    done = direct(server).complete(plain_request(n=3))
    assert done.texts == ["answer 0", "answer 1", "answer 2"]
    assert done.provider == "openai" and done.model == "gpt-4o-mini"
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    body = server.requests[-1].body
    assert body["n"] == 3 and body["model"] == "gpt-4o-mini" and body["messages"][0]["content"] == "Say hi"



@pytest.mark.parametrize("request_of", [plain_request, claims_request])
def test_a_call_sends_what_the_sdks_create_sends(server, request_of):
    """The provider posts its body through the client's ``post`` (skipping ``create``'s params walk, 3.2 ms of CPU
    a row): path, body and every header are what ``chat.completions.create`` sends for the same body."""
    llm = direct(server)
    request = request_of()
    llm.complete(request)
    llm.client.chat.completions.create(**llm.request_body(request))
    ours, theirs = server.requests[-2], server.requests[-1]
    assert (ours.path, ours.body) == (theirs.path, theirs.body)
    assert dict(ours.headers) == dict(theirs.headers)

def test_server_that_ignores_n_gets_extra_calls_for_the_missing_choices(server):
    server.ignore_n = True
    answers = iter(["q1", "q2", "q3"])
    server.responder = lambda req: next(answers)
    done = direct(server, provider="openai-compatible").complete(plain_request(n=3))
    assert done.texts == ["q1", "q2", "q3"] and server.count() == 3
    assert [r.body.get("n", 1) for r in server.requests] == [3, 1, 1]
    assert done.raw["n_filled_by_extra_calls"] == 2 and done.usage.output_tokens >= 3


def test_structured_output_sends_strict_json_schema(server):
    server.responder = lambda req: {"claims": ["The Eiffel Tower is in Paris."]}
    llm = direct(server)
    done = llm.complete(claims_request())
    assert json.loads(done.text) == {"claims": ["The Eiffel Tower is in Paris."]}
    fmt = server.requests[-1].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True and fmt["json_schema"]["name"] == EXTRACT_CLAIMS
    assert fmt["json_schema"]["schema"] == schema_for(EXTRACT_CLAIMS)
    assert llm.structured_output == JSON_SCHEMA


def test_llamacpp_style_json_schema_rejection_falls_back_once_and_is_remembered(server):
    server.reject_json_schema = True  # HTTP 500 on response_format json_schema, like llama.cpp's server
    llm = direct(server, provider="openai-compatible")
    first = llm.complete(claims_request())
    assert json.loads(first.text) == {"claims": ["ok"]}
    sent = [r.body["response_format"] for r in server.requests]
    assert [f["type"] for f in sent] == ["json_schema", "json_object"]
    assert sent[1]["schema"] == schema_for(EXTRACT_CLAIMS)
    assert llm.structured_output == JSON_OBJECT_WITH_SCHEMA
    server.reset_log()
    llm.complete(claims_request("another text"))
    assert server.count() == 1  # the rejection is not paid again
    assert server.requests[0].body["response_format"]["type"] == "json_object"


def test_a_bare_500_is_a_server_error_never_a_format_fallback(server):
    """A 500 that does not name the format is a server failure: no re-send at a lower level, the level stays
    (issue 11: transient 500s pushed a whole run down to schema-less json_object)."""
    llm = direct(server, provider="openai-compatible")
    for _ in range(3):
        server.fault("status", status=500, message="Internal Server Error")
        with pytest.raises(ProviderError) as info:
            llm.complete(claims_request())
        assert info.value.kind == "server" and info.value.retryable
    assert [r.body["response_format"]["type"] for r in server.requests] == ["json_schema"] * 3
    assert llm.structured_output == JSON_SCHEMA
    server.reset_log()
    llm.complete(claims_request("after"))
    assert [r.body["response_format"]["type"] for r in server.requests] == ["json_schema"]


def test_fallback_reaches_plain_json_object_when_schema_key_is_rejected_too(server):
    server.reject_json_schema = True
    server.reject_json_object_schema = True
    llm = direct(server, provider="openai-compatible")
    llm.complete(claims_request())
    assert server.requests[-1].body["response_format"] == {"type": "json_object"}
    assert llm.structured_output == JSON_OBJECT


def test_openai_strict_schema_refusal_relaxes_strictness_first(server):
    server.fault("status", status=400, message="Invalid schema for response_format 'judge': 'minimum' is not permitted.")
    llm = direct(server)
    llm.complete(claims_request())
    sent = [r.body["response_format"] for r in server.requests]
    assert [(f["type"], f["json_schema"]["strict"]) for f in sent] == [("json_schema", True), ("json_schema", False)]
    assert llm.structured_output == JSON_SCHEMA_LOOSE


def test_generic_500_on_official_openai_is_a_server_error_not_a_fallback(server):
    server.fault("server_error")
    llm = direct(server)
    with pytest.raises(ProviderError) as info:
        llm.complete(claims_request())
    assert info.value.kind == "server" and info.value.status == 500 and info.value.retryable
    assert server.count() == 1  # the SDK did not retry (max_retries=0) and no fallback was tried
    assert llm.structured_output == JSON_SCHEMA


def test_429_retry_after_is_honoured_through_the_clock(server, tmp_path):
    clock = FakeClock()
    server.fault("rate_limit", retry_after=7)
    llm = stack(server, tmp_path, clock)
    done = llm.complete(plain_request())
    assert done.text == "ok"
    assert clock.sleeps == [7.0]
    assert server.count("/chat/completions") == 2
    assert llm.stats()["retries"] == 1


def test_429_maps_to_rate_limit_with_retry_after(server):
    server.fault("rate_limit", retry_after=2.5)
    with pytest.raises(ProviderError) as info:
        direct(server).complete(plain_request())
    assert (info.value.kind, info.value.status, info.value.retry_after, info.value.retryable) == ("rate_limit", 429, 2.5, True)


def test_500_is_retried_with_backoff_then_reported(server, tmp_path):
    clock = FakeClock()
    server.fault("server_error", times=10)
    llm = stack(server, tmp_path, clock, max_retries=2)
    with pytest.raises(ProviderError) as info:
        llm.complete(plain_request())
    assert info.value.kind == "server" and "gave up after 3 attempts" in str(info.value)
    assert server.count() == 3
    assert len(clock.sleeps) == 2
    assert 0.5 <= clock.sleeps[0] <= 1.0 and 1.0 <= clock.sleeps[1] <= 2.0  # equal jitter on 1 s, 2 s


def test_408_is_a_retryable_timeout(server, tmp_path):
    clock = FakeClock()
    server.fault("request_timeout")
    assert stack(server, tmp_path, clock).complete(plain_request()).text == "ok"
    assert server.count() == 2 and len(clock.sleeps) == 1


def test_malformed_body_is_not_retried(server, tmp_path):
    clock = FakeClock()
    server.fault("malformed")
    with pytest.raises(ProviderError) as info:
        stack(server, tmp_path, clock).complete(plain_request())
    assert info.value.kind == "malformed_response" and not info.value.retryable
    assert server.count() == 1 and clock.sleeps == []


def test_timeout_is_reported_as_timeout(server):
    server.fault("hang", seconds=5)
    with pytest.raises(ProviderError) as info:
        direct(server, timeout_s=0.5).complete(plain_request())
    assert info.value.kind == "timeout" and info.value.retryable


def test_timeout_through_stack_is_retried_and_then_succeeds(server, tmp_path):
    clock = FakeClock()
    server.fault("hang", seconds=5)
    llm = stack(server, tmp_path, clock, timeout_s=0.5)
    assert llm.complete(plain_request()).text == "ok"
    assert len(clock.sleeps) == 1


def test_wrong_key_is_auth_error_and_disconnect_is_connection_error(server):
    server.api_key = "sk-the-right-key-000000000"
    with pytest.raises(ProviderError) as info:
        direct(server).complete(plain_request())
    assert info.value.kind == "auth" and not info.value.retryable
    server.api_key = None
    server.fault("disconnect")
    with pytest.raises(ProviderError) as info:
        direct(server).complete(plain_request())
    assert info.value.kind == "connection" and info.value.retryable


def test_embeddings_batched_and_cached(server, tmp_path):
    cfg = ProviderConfig(provider="openai", api_key=KEY, base_url=server.openai_base_url)
    embedder = build_embedder(cfg, db_path=tmp_path / "db.sqlite")
    embedder.inner.batch_size = 2
    vectors = embedder.embed(["alpha", "beta", "gamma", "alpha"])
    assert vectors.shape == (4, server.embed_dim)
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-5 and (vectors[0] == vectors[3]).all()
    assert server.count("/embeddings") == 2  # 3 unique texts in batches of 2
    assert server.requests[0].body["model"] == "text-embedding-3-small"
    again = embedder.embed(["gamma", "beta"])
    assert server.count("/embeddings") == 2  # both from the SQLite cache
    assert (again[0] == vectors[2]).all()


def test_per_token_embeddings_are_a_clear_malformed_response(monkeypatch):
    # llama-cpp-python's server with --embedding on a chat GGUF (no pooling) answers a list of token
    # vectors per text: that must become a ProviderError the metric can report, not a numpy ValueError.
    from types import SimpleNamespace

    from rageval_core.embeddings.openai_embed import OpenAIEmbedder

    embedder = OpenAIEmbedder(api_key="none", model="qwen", base_url="http://127.0.0.1:9/v1", provider="openai-compatible")
    per_token = [[[0.1, 0.2], [0.3, 0.4]], [[0.5, 0.6]]]
    answer = SimpleNamespace(data=[SimpleNamespace(index=i, embedding=e) for i, e in enumerate(per_token)])
    monkeypatch.setattr(embedder._client.embeddings, "create", lambda **_: answer)
    with pytest.raises(ProviderError) as info:
        embedder.embed_batch(["hello", "過学習"])
    assert info.value.kind == "malformed_response" and "one flat vector per text" in str(info.value)
    answer.data = [SimpleNamespace(index=0, embedding=[0.6, 0.8]), SimpleNamespace(index=1, embedding=[1.0, 0.0])]
    assert embedder.embed_batch(["hello", "過学習"]).shape == (2, 2)


def test_embeddings_retry_429_and_skip_the_cache_when_asked(server, tmp_path):
    clock = FakeClock()
    cfg = ProviderConfig(provider="openai", api_key=KEY, base_url=server.openai_base_url, cache=False)
    embedder = build_embedder(cfg, db_path=tmp_path / "db.sqlite", clock=clock)
    server.fault("rate_limit", retry_after=4, path="/embeddings")
    assert embedder.embed(["alpha"]).shape == (1, server.embed_dim)
    embedder.embed(["alpha"])
    assert server.count("/embeddings") == 3 and clock.sleeps == [4.0]
