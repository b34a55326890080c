"""The estimate's prompt-cache figure: each call's shared prefix priced at the cached rate where the provider
would cache it, by hand, and the shared prefix of the shipped steps (their fixed lead, and a judge's repeats)."""

from __future__ import annotations

import pytest

from rageval_core.cli.evaluate_output import prompt_cache_line
from rageval_core.core.tokens import CHAT_FRAMING
from rageval_core.core.types import Sample
from rageval_core.run import estimate
from rageval_core.scoring.metrics.base import CallEstimate
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.prefix import lead_text, lead_tokens, repeated
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.scoring.metrics.steps import template_tokens
from rageval_core.scoring.prompts import load_template

ROWS = [Sample(str(i), "q", ("c",), "a") for i in range(3)]


class TwoCalls:
    """A scorer whose every row sends two prompts of 2,000 tokens sharing 1,500 and 2,000 of them."""

    name = "two_calls"
    method = "decomposed"
    metrics = ("two_calls",)

    def score(self, sample, ctx):  # pragma: no cover - never run: only estimated
        raise AssertionError

    def estimate(self, sample: Sample) -> CallEstimate:
        return CallEstimate(llm_calls=2, input_tokens=4000, output_tokens=100, prompts=((2000, 1500), (2000, 2000)))


def test_openai_up_to_saving_by_hand(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))  # the shipped price table, no user override
    est = estimate(ROWS, [TwoCalls()], provider="openai", model="gpt-4o-mini")
    # per row 1,408 (11 blocks of 1,500) + 1,920 (15 blocks of 2,000); 3 rows
    assert est.cached_input_tokens == 3 * (1408 + 1920) == 9984
    # counted by o200k_base: each of the 6 calls also pays OpenAI's chat framing (9 tokens for system + user)
    assert est.tokens_by == ("o200k_base",) and est.input_tokens == 12000 + 6 * CHAT_FRAMING == 12054
    # gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output per million
    assert est.cost_usd == pytest.approx((12054 * 0.15 + 300 * 0.60) / 1e6)
    assert est.cache_saving_usd == pytest.approx(9984 * 0.075 / 1e6)
    batch = estimate(ROWS, [TwoCalls()], provider="openai", model="gpt-4o-mini", discount=0.5)
    assert batch.cache_saving_usd == pytest.approx(9984 * 0.075 / 2e6)
    line = prompt_cache_line(est)
    assert line == ("prompt cache (OpenAI, shared prefixes from 1,024 tokens): up to 9,984 of 12,054 input tokens (83%) "
                    f"at the cached rate, up to $0.0007 less: ${est.cost_usd - est.cache_saving_usd:.4f} instead of "
                    f"${est.cost_usd:.4f} (not guaranteed)")


def test_gemini_2_5_caches_nothing_under_2048_tokens_and_local_servers_have_no_figure(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    est = estimate(ROWS, [TwoCalls()], provider="gemini", model="gemini-2.5-flash")
    assert est.cached_input_tokens == 0 and est.cache_saving_usd == 0.0
    assert prompt_cache_line(est) == ("prompt cache (Gemini 2.5, shared prefixes from 2,048 tokens): no call's shared "
                                      "prefix is that long, so nothing is expected from it")
    local = estimate(ROWS, [TwoCalls()], provider="openai-compatible", model="m")
    assert local.cache_rule is None and prompt_cache_line(local) is None


def test_an_unpriced_model_says_the_saving_is_unknown(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    est = estimate(ROWS, [TwoCalls()], provider="openai", model="not-in-the-table")
    assert est.cached_input_tokens == 9984 and est.cache_saving_usd is None
    assert prompt_cache_line(est).endswith("saving unknown (model not in the price table)")


def test_a_step_shares_its_lead_the_text_before_the_first_row_value():
    template = load_template("verify_claims", "en")
    lead = lead_text(template)
    for contexts in (["one"], ["one", "two", "three"]):  # any row's prompt starts with it, up to its contexts
        prompt = template.render(contexts=contexts, claims=["a claim"])
        assert prompt.startswith(lead) and prompt[len(lead):].startswith("<contexts count=")
    assert 0 < lead_tokens("verify_claims", "en") < template_tokens("verify_claims", "en")
    assert repeated(700, 361) == ((700, 361),)
    assert repeated(700, 361, 3) == ((700, 361), (700, 700), (700, 700))  # the same prompt again: all of it
    assert repeated(300, 361) == ((300, 300),)


def test_each_shipped_step_counts_one_prompt_per_call():
    row = Sample("r", "What is X?", ("X is a thing. " * 40, "Y is another. " * 40), "X is a thing.", "X is a thing.")
    scorers = list(build_scorers(["faithfulness", "answer_correctness", "context_precision", "context_recall",
                                  "context_relevance", "answer_relevancy"], {})) + [JudgeScorer("rubric5", repeats=3)]
    for scorer in scorers:
        e = scorer.estimate(row)
        assert len(e.prompts) == e.llm_calls, scorer.name
        assert sum(p for p, _ in e.prompts) == e.input_tokens, scorer.name
        assert all(0 < shared <= p for p, shared in e.prompts), scorer.name
    judge = scorers[-1].estimate(row)
    (first, first_shared), *later = judge.prompts
    assert first_shared < first and later == [(first, first)] * 2  # the repeats resend the whole prompt
