"""The fake server reports cached input tokens as OpenAI and Gemini do, and the providers read and price them."""

from __future__ import annotations

from rageval_core.testing.fake_llm import PrefixCache


def test_blocks_seen_before_are_cached_above_the_minimum() -> None:
    cache = PrefixCache(min_tokens=1024, block_tokens=128)
    shared = "x" * (128 * 4 * 9)  # nine 128-token blocks
    assert cache.lookup_and_add("m", shared + "a" * 100, 9 * 128 + 25) == 0  # first sight: nothing cached
    assert cache.lookup_and_add("m", shared + "b" * 100, 9 * 128 + 25) == 9 * 128  # the nine shared blocks
    assert cache.lookup_and_add("other", shared + "b" * 100, 9 * 128 + 25) == 0  # per model
    short = "y" * (128 * 4 * 3)
    cache.lookup_and_add("m", short + "1", 3 * 128 + 1)
    assert cache.lookup_and_add("m", short + "2", 3 * 128 + 1) == 0  # under 1,024 tokens: never cached
    long_tail = "t" * (128 * 4 * 10)  # a 13-block prompt sharing only its first three blocks with the last one
    assert cache.lookup_and_add("m", short + long_tail, 13 * 128) == 0  # a 384-token shared prefix: under 1,024


def test_without_a_minimum_any_seen_prefix_counts() -> None:
    cache = PrefixCache(min_tokens=0, block_tokens=128)
    head = "z" * (128 * 4 * 2 + 10)
    cache.lookup_and_add("m", head + "first", 200)
    assert cache.lookup_and_add("m", head + "second", 200) == 200  # two blocks (256) capped at the prompt's 200
    assert cache.lookup_and_add("m", "q" + head, 200) == 0  # a changed first character shares nothing


def _request(tail: str):
    from rageval_core.llm.base import LLMRequest, Message

    instructions = "Judge the answer against the contexts. " * 120  # ~1,200 tokens of fixed instructions first
    return LLMRequest(task="rag_answer", messages=(Message("system", instructions), Message("user", tail)))


def test_openai_and_gemini_clients_read_the_cached_tokens_and_price_them_lower() -> None:
    from rageval_core.llm.gemini_provider import GeminiLLM
    from rageval_core.llm.openai_provider import OpenAILLM
    from rageval_core.llm.pricing import PriceTable
    from rageval_core.testing.fake_llm import FakeLLMServer

    prices = PriceTable.load(overrides=False)
    with FakeLLMServer() as server:
        clients = [OpenAILLM(api_key="sk-test-prefix-0123456789", model="gpt-4o-mini", base_url=server.openai_base_url),
                   GeminiLLM(api_key="AIzaFakePrefixKey0123456789abcdefgh", model="gemini-2.5-flash",
                             base_url=server.gemini_base_url)]
        for llm in clients:
            first = llm.complete(_request(f"{llm.provider} row one"))
            second = llm.complete(_request(f"{llm.provider} row two"))
            assert first.usage.cached_input_tokens == 0
            assert 1024 <= second.usage.cached_input_tokens < second.usage.input_tokens
            assert second.usage.cached_input_tokens % 128 == 0
            # the cached tokens at the cached rate (half or a quarter of the input rate): cheaper than the first
            assert prices.cost(llm.model, second.usage) < prices.cost(llm.model, first.usage) * 0.7
