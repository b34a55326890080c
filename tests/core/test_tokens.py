"""Tokens counted, not guessed (issue 39 item 7): the o200k_base / cl100k_base encodings shipped in the bpe-openai
wheel give tiktoken's published counts offline, the OpenAI chat framing gives the count OpenAI's API reported, and
the model table picks the right encoding.

Known counts are those printed in openai/openai-cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb at commit
c81359cdc6744f001e40c08a192604c5113fdab3 (sections 4-6): token ids per encoding, and "124 prompt tokens counted by the
OpenAI API" for gpt-4o and gpt-4o-mini on its example messages.
"""

from __future__ import annotations

import pytest

from rageval_core.core.tokens import (
    APPROXIMATE,
    CHAT_FRAMING,
    bpe_counter,
    count_tokens,
    counter_for,
    counting,
    encoding_for_model,
)

COOKBOOK_IDS = {
    ("o200k_base", "tiktoken is great!"): [83, 8251, 2488, 382, 2212, 0],
    ("cl100k_base", "tiktoken is great!"): [83, 1609, 5963, 374, 2294, 0],
    ("o200k_base", "antidisestablishmentarianism"): [493, 129901, 376, 160388, 21203, 2367],
    ("cl100k_base", "antidisestablishmentarianism"): [519, 85342, 34500, 479, 8997, 2191],
    ("o200k_base", "2 + 2 = 4"): [17, 659, 220, 17, 314, 220, 19],
    ("o200k_base", "お誕生日おめでとう"): [8930, 9697, 243, 128225, 8930, 17693, 4344, 48669],
    ("cl100k_base", "お誕生日おめでとう"): [33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699],
}

# The cookbook's example conversation (section 6), whose prompt the API counted as 124 tokens on gpt-4o / gpt-4o-mini.
EXAMPLE_MESSAGES = [
    {"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
    {"role": "system", "name": "example_user", "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
    {"role": "system", "name": "example_assistant", "content": "Let's talk later when we're less busy about how to do better."},
    {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."},
]


@pytest.mark.parametrize(("encoding", "text"), list(COOKBOOK_IDS))
def test_the_shipped_encodings_give_tiktokens_published_tokens(encoding: str, text: str) -> None:
    from rageval_core.core.tokens import _encoding

    assert _encoding(encoding).encode_ordinary(text) == COOKBOOK_IDS[(encoding, text)]
    assert bpe_counter(encoding).count(text) == len(COOKBOOK_IDS[(encoding, text)])


def test_the_chat_framing_gives_the_count_openais_api_reported() -> None:
    """3 tokens a message, 1 a name, 3 to prime the reply: 124 for gpt-4o(-mini), as the API counted."""
    o200k = counter_for("openai", "gpt-4o-mini")
    total = sum(3 + sum(o200k.count(v) for v in m.values()) + ("name" in m) for m in EXAMPLE_MESSAGES) + 3
    assert total == 124
    assert CHAT_FRAMING == 3 * 2 + 3  # what an estimate adds per call: the workbench's prompts are system + user


@pytest.mark.parametrize(("model", "encoding"), [
    ("gpt-4o-mini", "o200k_base"), ("gpt-4o", "o200k_base"), ("gpt-4.1-nano", "o200k_base"), ("gpt-5-mini", "o200k_base"),
    ("o3-mini", "o200k_base"), ("gpt-4o-mini-eu", "o200k_base"), ("gpt-4", "cl100k_base"), ("gpt-4-turbo", "cl100k_base"),
    ("gpt-35-turbo", "cl100k_base"), ("openai/gpt-4o", "o200k_base"), ("my-judge-deployment", "o200k_base"), (None, "o200k_base"),
])
def test_the_encoding_of_a_model_or_deployment(model: str | None, encoding: str) -> None:
    assert encoding_for_model(model) == encoding


def test_which_providers_count_offline_and_which_guess() -> None:
    assert counter_for("openai", None).name == "o200k_base" and counter_for("openai", None).exact
    assert counter_for("azure-openai", "gpt-35-turbo-dep").name == "cl100k_base"
    for provider in ("offline", "openai-compatible", "replay", "anthropic", "gemini", "vertex", None):
        assert counter_for(provider, "x") is APPROXIMATE and not APPROXIMATE.exact


def test_counting_applies_inside_the_block_only() -> None:
    text = "過学習とは、モデルが訓練データに過剰に適合することです。"
    o200k = bpe_counter("o200k_base")
    with counting(o200k):
        inside = count_tokens(text)
    assert inside == o200k.count(text) == len(o200k_encoded(text))
    assert count_tokens(text) == APPROXIMATE.count(text) != inside  # outside: the guess again
    assert count_tokens(None) == 1 and o200k.count("") == 0


def o200k_encoded(text: str) -> list[int]:
    from rageval_core.core.tokens import _encoding

    return list(_encoding("o200k_base").encode_ordinary(text))


def test_special_token_text_is_counted_as_text() -> None:
    """A row holding "<|endoftext|>" is plain text to the API: counted, never refused."""
    assert bpe_counter("o200k_base").count("<|endoftext|>") > 1
