"""The response-cache key separates every part DESIGN.md names (provider, model, base_url, messages, schema,
sampling parameters) and nothing else: not the structured inputs API providers never see, never a key."""

from __future__ import annotations

import dataclasses

import pytest

from rageval_core.llm.base import LLMRequest, Message
from rageval_core.llm.transport.cache import cache_key

BASE = LLMRequest(
    task="extract_claims",
    messages=(Message("system", "Extract claims."), Message("user", "Paris is in France.")),
    schema={"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}}},
    inputs={"answer": "Paris is in France."},
    temperature=0.0,
    n=1,
    seed=None,
    max_output_tokens=256,
)
KEY = cache_key("openai", "gpt-4o-mini", "https://api.openai.com/v1", BASE)


@pytest.mark.parametrize(
    "provider, model, base_url",
    [("gemini", "gpt-4o-mini", "https://api.openai.com/v1"), ("openai", "gpt-4o", "https://api.openai.com/v1"), ("openai", "gpt-4o-mini", "http://localhost:11434/v1")],
)
def test_provider_model_and_base_url_are_part_of_the_key(provider, model, base_url):
    assert cache_key(provider, model, base_url, BASE) != KEY


@pytest.mark.parametrize(
    "change",
    [
        {"messages": (Message("system", "Extract claims!"), Message("user", "Paris is in France."))},
        {"messages": (Message("user", "Extract claims."), Message("user", "Paris is in France."))},
        {"schema": {"type": "object"}},
        {"schema": None},
        {"temperature": 0.7},
        {"n": 3},
        {"seed": 1},
        {"max_output_tokens": 512},
    ],
)
def test_messages_schema_and_sampling_parameters_are_part_of_the_key(change):
    assert cache_key("openai", "gpt-4o-mini", "https://api.openai.com/v1", dataclasses.replace(BASE, **change)) != KEY


def test_structured_inputs_task_and_language_do_not_split_the_cache():
    """API providers only see the messages: the same prompt is the same request."""
    same = dataclasses.replace(BASE, inputs={"answer": "other"}, task="renamed", language="ja")
    assert cache_key("openai", "gpt-4o-mini", "https://api.openai.com/v1", same) == KEY
