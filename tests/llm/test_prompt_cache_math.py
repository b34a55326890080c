"""What a provider's prompt cache could serve, by hand: OpenAI's 1,024-token minimum and 128-token blocks, Gemini
2.5's 2,048-token minimum (any length above it), and the saving at the cached rate."""

from __future__ import annotations

import pytest

from rageval_core.llm.prompt_cache import (
    GEMINI_2_5,
    GEMINI_3,
    OPENAI,
    cache_rule,
    cached_tokens,
    cached_tokens_of,
    saving_usd,
)


@pytest.mark.parametrize(
    ("prompt", "prefix", "cached"),
    [
        (2000, 1500, 1408),  # 1500 // 128 = 11 blocks
        (2000, 2000, 1920),  # 15 blocks: the last 80 tokens are not a whole block
        (2000, 1024, 1024),  # exactly the minimum
        (2000, 1023, 0),  # a prefix under the minimum is never cached, however long the prompt
        (900, 900, 0),  # a prompt under the minimum
        (1100, 5000, 1024),  # the prefix cannot be longer than the prompt
        (5000, 0, 0),
    ],
)
def test_openai_caches_whole_128_token_blocks_of_a_prefix_from_1024_tokens(prompt, prefix, cached):
    assert cached_tokens(prompt, prefix, OPENAI) == cached


@pytest.mark.parametrize(("prompt", "prefix", "cached"), [(3000, 2047, 0), (3000, 2048, 2048), (3000, 2500, 2500)])
def test_gemini_2_5_caches_any_prefix_from_2048_tokens(prompt, prefix, cached):
    assert cached_tokens(prompt, prefix, GEMINI_2_5) == cached


def test_the_rule_follows_the_provider_and_the_model():
    assert cache_rule("openai", "gpt-4o-mini") is OPENAI and cache_rule("openai", None) is OPENAI
    assert cache_rule("gemini", "gemini-2.5-flash") is GEMINI_2_5
    assert cache_rule("gemini", "models/gemini-2.5-pro") is GEMINI_2_5
    assert cache_rule("gemini", "gemini-3-pro-preview") is GEMINI_3
    assert cache_rule("gemini", "gemini-2.0-flash") is None  # implicit caching is 2.5 and newer
    for provider in ("openai-compatible", "offline", "replay", None):
        assert cache_rule(provider, "gpt-4o-mini") is None  # nothing billed, or no such cache


def test_calls_are_summed_one_by_one_and_the_saving_is_the_rate_difference():
    assert cached_tokens_of([(2000, 1500), (2000, 2000), (900, 900)], OPENAI) == 1408 + 1920
    assert cached_tokens_of([(2000, 1500)], None) == 0
    # gpt-4o-mini: $0.15 input, $0.075 cached per million
    assert saving_usd(1408, 0.15, 0.075) == pytest.approx(1408 * 0.075 / 1e6)
    assert saving_usd(1408, 0.15, 0.075, discount=0.5) == pytest.approx(1408 * 0.075 / 2e6)
    assert saving_usd(1408, 0.15, None) == 0.0  # no cached rate: billed as input
