"""The estimate's tokens are counted where a tokenizer is at hand (issue 39 item 7), and still match the calls made:
OpenAI's o200k_base offline against what the openai SDK sent; Claude's, Gemini's and Vertex AI's token-counting
endpoints through the local server against the usage that server reports for the run; approximate, and said so,
where none applies (offline, a local server) or the endpoint fails."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from rageval_core.core.tokens import bpe_counter
from rageval_core.core.types import METRIC_IDS
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.tokens import token_counter
from rageval_core.run import estimate
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.apptest import ROOT
from tests.support.runs import run_rows
from tests.support.vertex_creds import LOCATION, PROJECT, service_account_file

KEY = "sk-test-tokens-0123456789abcdef"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as srv:
        yield srv


def rows(lang: str, n: int = 12):
    return load_dataset(ROOT / "sample_data" / f"ml_qa_{lang}.json").samples[:n]


def scorers():
    return [*build_scorers(list(METRIC_IDS)), JudgeScorer("rubric5")]


def sent_o200k(server: FakeLLMServer) -> tuple[int, int]:
    """Calls and prompt tokens of every chat request the server received, by o200k_base with OpenAI's chat framing
    (3 tokens a message, 3 for the reply's priming)."""
    o200k = bpe_counter("o200k_base")
    chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
    return len(chat), sum(sum(3 + o200k.count(m["content"]) for m in r.body["messages"]) + 3 for r in chat)


@pytest.mark.parametrize(("lang", "n"), [("ja", 12), ("en", 3)])
def test_openai_tokens_counted_by_o200k_match_what_the_sdk_sent(lang, n, server, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    samples, used = rows(lang, n), scorers()
    cfg = ProviderConfig(provider="openai", api_key=KEY, base_url=server.openai_base_url, cache=False, max_retries=1)
    est = estimate(samples, used, provider="openai", counter=token_counter(cfg))
    assert est.tokens_by == ("o200k_base",) and est.tokens_exact
    assert est.tokens_note() == "tokens counted by o200k_base"
    server.reset_log()
    run_rows(samples, used, config=cfg, concurrency=4)
    calls, tokens = sent_o200k(server)
    assert calls == est.llm_calls
    # The estimate counts each prompt's pieces (template, row values), not the rendered prompt: measured 0.979 (ja,
    # 12 rows) and 0.967 (en): the claims the model extracts and the delimiters around row values are not known
    # before the run.
    assert 0.94 <= est.input_tokens / tokens <= 1.02, (est.input_tokens, tokens)


def _cfg(provider: str, server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ProviderConfig:
    if provider == "anthropic":
        return ProviderConfig(provider="anthropic", api_key=KEY, base_url=server.url, cache=False, max_retries=1)
    if provider == "gemini":
        return ProviderConfig(provider="gemini", api_key=KEY, base_url=server.url, cache=False, max_retries=1)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account_file(tmp_path, server.url)))
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    return ProviderConfig(provider="vertex", project=PROJECT, location=LOCATION, base_url=server.url, cache=False, max_retries=1)


@pytest.mark.parametrize("provider", ["anthropic", "gemini", "vertex"])
def test_claude_and_gemini_count_through_their_endpoints_and_match_the_run(provider, server, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    samples, used = rows("ja", 4), scorers()
    cfg = _cfg(provider, server, tmp_path, monkeypatch)
    server.reset_log()
    counter = token_counter(cfg)
    est = estimate(samples, used, provider=provider, counter=counter)
    counted = [r for r in server.requests if r.path.endswith(("/v1/messages/count_tokens", ":countTokens"))]
    assert len(counted) == counter.state["counted"] + 1 > 20  # every distinct text once, and the "." probe
    assert not [r for r in server.requests if r.path.endswith(("/v1/messages", ":generateContent"))]  # no model call
    assert est.tokens_by == (f"{provider} count_tokens ({cfg.resolved_model()})",) and est.tokens_exact
    if provider == "vertex":
        assert all(f"/projects/{PROJECT}/locations/{LOCATION}/" in r.path for r in counted)
    assert est.input_tokens != estimate(samples, used, provider=provider).input_tokens  # not the guess
    done = run_rows(samples, used, config=cfg, concurrency=4)
    calls = [c for c in Store().iter_calls(done.run_id) if c.task != "embed" and not c.cached]
    by_step = Counter((c.scorer, c.task, c.reask, c.error is not None) for c in calls)
    assert len(calls) == est.llm_calls, (sorted(by_step.items()), [r.scorer for r in est.rows])
    used_tokens = sum(c.usage.input_tokens for c in calls)
    # The local server counts ~4 characters a token for both the endpoint and the usage it reports, so the two
    # meet as a real endpoint and real usage would (within the pieces-vs-prompt gap measured for OpenAI).
    assert 0.9 <= est.input_tokens / used_tokens <= 1.1, (est.input_tokens, used_tokens)


def test_a_failing_endpoint_leaves_the_estimate_approximate_and_says_why(server, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    samples, used = rows("ja", 2), scorers()
    cfg = ProviderConfig(provider="anthropic", api_key=KEY, base_url="http://127.0.0.1:9", timeout_s=2, max_retries=0)
    est = estimate(samples, used, provider="anthropic", counter=token_counter(cfg))
    assert not est.tokens_exact and est.tokens_by[0].startswith("approximate (anthropic count_tokens (claude-haiku-4-5) failed:")
    assert est.tokens_note().startswith("tokens approximate: ~4 ASCII characters or ~1 kana / kanji a token (anthropic")
    assert est.input_tokens == estimate(samples, used, provider="anthropic").input_tokens


@pytest.mark.parametrize("provider", ["offline", "openai-compatible", "replay"])
def test_where_no_tokenizer_applies_the_estimate_says_approximate(provider):
    est = estimate(rows("ja", 2), scorers(), provider=provider, model="qwen2.5:7b")
    assert est.tokens_by == ("approximate",) and not est.tokens_exact
    assert est.tokens_note() == ("tokens approximate: ~4 ASCII characters or ~1 kana / kanji a token "
                                 "(no tokenizer for this provider)")


def test_a_judge_on_another_provider_counts_with_its_own(monkeypatch, tmp_path):
    """An offline run with an OpenAI judge: the judge's tokens by o200k_base, the rest approximate."""
    from rageval_core.scoring.judges.config import JudgeConfig

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    from rageval_core.scoring.judges.bound import judge_scorers

    bound = judge_scorers([JudgeConfig(id="gpt", provider="openai", model="gpt-4o-mini", method="rubric5")], llms={"gpt": None})
    est = estimate(rows("ja", 2), [*build_scorers(["faithfulness"]), *bound], provider="offline")
    assert est.tokens_by == ("approximate", "o200k_base")
    assert est.tokens_note() == "tokens counted by o200k_base; the rest approximate"
