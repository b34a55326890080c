"""Azure OpenAI, Anthropic and Vertex AI through their official SDKs (openai's ``AzureOpenAI``, ``anthropic``,
google-genai with ``vertexai=True``) against the local fake server speaking each wire format: the path, query and
credential each sends, structured output and its fallback when the schema is rejected, 429 + Retry-After (the
wait asserted on the fake clock), a 5xx retried, a deadline, embeddings, and the configuration messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.llm.structured import FormatLadder
from rageval_core.core.clock import FakeClock
from rageval_core.providers.config import ProviderConfig, check_config, embedding_choice
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.vertex_creds import LOCATION, PROJECT, service_account_file

AZURE_KEY = "azure-key-CLOUDTEST-5f1c9e"
AZURE_TOKEN = "eyJ0eXAi.entra-token-CLOUDTEST-77a1"
CLAUDE_KEY = "sk-ant-api03-CLOUDTEST-0b3f"
PROVIDERS = ("azure-openai", "anthropic", "vertex")
MODEL_PATH = {"azure-openai": "/chat/completions", "anthropic": "/v1/messages", "vertex": ":generateContent"}


def claims(text: str = "The Eiffel Tower is in Paris.") -> LLMRequest:
    return LLMRequest(task=EXTRACT_CLAIMS, messages=(Message("system", "Extract claims as JSON."), Message("user", text)),
                      schema=schema_for(EXTRACT_CLAIMS))


@pytest.fixture()
def cloud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The fake server plus each provider's environment: Vertex's service account pointing at its /token."""
    for name in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION", "ANTHROPIC_API_KEY",
                 "ANTHROPIC_BASE_URL", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "RAGEVAL_EXTRA_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    with FakeLLMServer() as server:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account_file(tmp_path, server.url)))
        yield server


def config(provider: str, server: FakeLLMServer, **extra) -> ProviderConfig:
    base = {"cache": False, "timeout_s": 5.0, **extra}
    if provider == "azure-openai":
        return ProviderConfig(provider=provider, api_key=AZURE_KEY, base_url=server.url, model="judge-gpt4o-mini",
                              embedding_model="embed-3-small", **base)
    if provider == "anthropic":
        return ProviderConfig(provider=provider, api_key=CLAUDE_KEY, base_url=server.url, **base)
    return ProviderConfig(provider=provider, project=PROJECT, location=LOCATION, base_url=server.url, **base)


def test_azure_sends_the_deployment_path_api_version_and_api_key_header(cloud):
    cloud.api_key = AZURE_KEY  # the server refuses any other credential
    stack = build_llm(config("azure-openai", cloud, api_version="2025-04-01-preview"))
    done = stack.complete(claims())
    assert json.loads(done.text) == {"claims": ["The Eiffel Tower is in Paris."]} or json.loads(done.text)["claims"]
    sent = cloud.requests[-1]
    assert sent.path == "/openai/deployments/judge-gpt4o-mini/chat/completions" and sent.query == "api-version=2025-04-01-preview"
    assert sent.headers["api-key"] == "<redacted>" and "authorization" not in sent.headers
    fmt = sent.body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert done.provider == "azure-openai" and done.raw["structured_output"] == "json_schema"
    vectors = build_embedder(config("azure-openai", cloud)).embed(["一つ目", "二つ目"])
    assert vectors.shape == (2, cloud.embed_dim)
    assert cloud.requests[-1].path == "/openai/deployments/embed-3-small/embeddings"


def test_azure_reads_the_sdks_variables_and_an_entra_id_token(cloud, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", cloud.url)
    monkeypatch.setenv("AZURE_OPENAI_AD_TOKEN", AZURE_TOKEN)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    cloud.api_key = AZURE_TOKEN
    cfg = ProviderConfig(provider="azure-openai", model="dep", cache=False)
    assert check_config(cfg) == []
    build_llm(cfg).complete(claims())
    sent = cloud.requests[-1]
    assert sent.headers["authorization"] == "<redacted>" and "api-key" not in sent.headers and sent.query == "api-version=2024-10-21"


def test_azure_configuration_names_what_is_missing(monkeypatch):
    for name in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    problems = " ".join(check_config(ProviderConfig(provider="azure-openai"), environ={}))
    assert "AZURE_OPENAI_API_KEY or AZURE_OPENAI_AD_TOKEN" in problems and "AZURE_OPENAI_ENDPOINT" in problems
    assert "deployment" in problems
    # no embedding deployment: the bundled encoder stands in, said as a fallback
    choice = embedding_choice(ProviderConfig(provider="azure-openai", model="d"))
    assert choice.source == "offline" and choice.fallback


def test_anthropic_json_schema_output_then_tool_use_when_the_model_rejects_it(cloud):
    cloud.api_key = CLAUDE_KEY
    clock = FakeClock()
    stack = build_llm(config("anthropic", cloud), clock=clock, ladder=FormatLadder(clock=clock))
    first = stack.complete(claims())
    body = cloud.requests[-1].body
    assert cloud.requests[-1].path == "/v1/messages" and body["output_config"]["format"]["type"] == "json_schema"
    assert body["system"][0]["text"] == "Extract claims as JSON." and "cache_control" not in body["system"][0]  # too short to cache
    assert json.loads(first.text)["claims"] and first.raw["structured_output"] == "output_config json_schema"
    cloud.reject_output_format = True
    second = stack.complete(claims("Mount Fuji is 3,776 m high."))
    assert [r.status for r in cloud.requests[-2:]] == [400, 200]
    assert cloud.requests[-1].body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert json.loads(second.text)["claims"] and second.raw["structured_output"] == "tool_use input_schema"
    stack.complete(claims("Kyoto was the capital."))  # the drop is remembered: no second 400
    assert cloud.requests[-1].status == 200 and "tools" in cloud.requests[-1].body


def test_anthropic_caches_a_long_system_prompt_and_bills_writes_and_reads(cloud):
    stack = build_llm(config("anthropic", cloud, model="claude-sonnet-4-5"))  # 1,024-token minimum
    long = LLMRequest(task=EXTRACT_CLAIMS, messages=(Message("system", "Rules. " * 800), Message("user", "row 1")), schema=schema_for(EXTRACT_CLAIMS))
    written = stack.complete(long)
    read = stack.complete(LLMRequest(task=EXTRACT_CLAIMS, messages=(long.messages[0], Message("user", "row 2")), schema=long.schema))
    assert cloud.requests[-1].body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert written.usage.cache_write_tokens > 0 and written.usage.cached_input_tokens == 0
    assert read.usage.cached_input_tokens == written.usage.cache_write_tokens and read.usage.cache_write_tokens == 0
    # Sonnet 4.5: input $3, cache write $3.75, cache read $0.30 per 1M tokens
    assert written.cost_usd > read.cost_usd * 5
    assert stack.base.count_tokens(long) == written.usage.input_tokens  # /v1/messages/count_tokens
    assert cloud.requests[-1].path == "/v1/messages/count_tokens"


def test_vertex_uses_project_paths_and_application_default_credentials(cloud):
    cloud.api_key = cloud.oauth_token  # only the access token from /token is accepted
    stack = build_llm(config("vertex", cloud))
    done = stack.complete(claims())
    assert json.loads(done.text)["claims"] and done.provider == "vertex"
    assert cloud.requests[-1].path == (f"/v1beta1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/"
                                       "gemini-2.5-flash:generateContent")
    assert cloud.requests[-1].body["generationConfig"]["responseJsonSchema"] == schema_for(EXTRACT_CLAIMS)
    assert cloud.token_requests >= 1  # the service account's JWT was exchanged at its token_uri
    vectors = build_embedder(config("vertex", cloud)).embed(["a", "b", "c"])
    predicts = [r for r in cloud.requests if r.path.endswith("gemini-embedding-001:predict")]
    assert vectors.shape == (3, cloud.embed_dim) and len(predicts) == 3  # one text a request for gemini-embedding on Vertex
    assert done.cost_usd > 0  # vertex:gemini-2.5-flash is priced


def test_vertex_without_a_project_or_key_says_how_to_authenticate(monkeypatch):
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    problems = check_config(ProviderConfig(provider="vertex"), environ={})
    assert len(problems) == 1 and "GOOGLE_CLOUD_PROJECT" in problems[0] and "application-default" in problems[0]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_with_retry_after_is_waited_exactly_then_retried(provider, cloud):
    clock = FakeClock()
    stack = build_llm(config(provider, cloud, max_retries=2), clock=clock)
    cloud.fault("rate_limit", retry_after=7, status=429, path=MODEL_PATH[provider])
    assert json.loads(stack.complete(claims()).text)["claims"]
    assert 7.0 in clock.sleeps
    assert [r.status for r in cloud.requests if r.path.endswith(MODEL_PATH[provider])] == [429, 200]
    assert stack.stats()["retries"] == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_5xx_is_retried_and_never_lowers_the_structured_output_level(provider, cloud):
    clock = FakeClock()
    stack = build_llm(config(provider, cloud, max_retries=3), clock=clock, ladder=FormatLadder(clock=clock))
    cloud.fault("server_error", times=2, path=MODEL_PATH[provider])
    done = stack.complete(claims())
    assert [r.status for r in cloud.requests if r.path.endswith(MODEL_PATH[provider])] == [500, 500, 200]
    assert done.raw["structured_output"] == stack.base.structured_output == stack.base._levels[0]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_call_past_its_deadline_is_a_timeout(provider, cloud):
    stack = build_llm(config(provider, cloud, timeout_s=1.0, max_retries=0))
    cloud.fault("hang", seconds=5, path=MODEL_PATH[provider])
    with pytest.raises(ProviderError) as info:
        stack.complete(claims())
    assert info.value.kind == "timeout" and info.value.unscored_reason == "timeout"


def test_azure_strict_schema_rejection_relaxes_strict_first(cloud):
    cloud.reject_strict_schema = True
    clock = FakeClock()
    stack = build_llm(config("azure-openai", cloud), clock=clock, ladder=FormatLadder(clock=clock))
    done = stack.complete(claims())
    assert [r.status for r in cloud.requests] == [400, 200]
    assert cloud.requests[-1].body["response_format"]["json_schema"]["strict"] is False
    assert done.raw["structured_output"] == "json_schema (strict off)"


def test_anthropic_has_no_embeddings_and_says_so():
    cfg = ProviderConfig(provider="anthropic", api_key=CLAUDE_KEY)
    choice = embedding_choice(cfg)
    assert choice.source == "offline" and choice.fallback == "the provider has no embedding model"
    problems = check_config(ProviderConfig(provider="anthropic", api_key=CLAUDE_KEY, embeddings="provider"))
    assert any("no embedding model" in p for p in problems)
