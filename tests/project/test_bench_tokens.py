"""The side-by-side benches count every system's requests the same way: prompts by o200k_base with OpenAI's chat
framing (string or content-part messages alike), embedding inputs by cl100k_base, and the peak of requests in flight
from the server's arrival times (bench/request_tokens.py)."""

from __future__ import annotations

import openai

from bench.deepeval_side_by_side import deepeval_responder
from bench.request_tokens import peak_in_flight, tally
from rageval_core.core.tokens import bpe_counter
from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest, LoggedRequest

JA = "過学習とは、モデルが訓練データに過度に適合する現象です。"


def test_tally_counts_string_and_part_messages_and_embedding_inputs() -> None:
    o200k, cl100k = bpe_counter("o200k_base"), bpe_counter("cl100k_base")
    with FakeLLMServer() as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="sk-bench-tokens", max_retries=0)
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "system", "content": "Judge."},
                                                                      {"role": "user", "content": JA}])
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": [{"type": "text", "text": JA}]}])
        client.embeddings.create(model="text-embedding-3-small", input=[JA, "overfitting"])
        t = tally(server.requests)
    assert (t.chat, t.embed, t.requests) == (2, 1, 3)
    assert t.prompt_tokens == (3 + o200k.count("Judge.") + 3 + o200k.count(JA) + 3) + (3 + o200k.count(JA) + 3)
    assert t.embed_tokens == cl100k.count(JA) + cl100k.count("overfitting")
    assert t.chars4 == len("Judge." + JA) // 4 + len(JA) // 4 + len(JA + "overfitting") // 4
    assert t.prompt_tokens > t.chars4 - t.chars4 // 2  # Japanese: characters ÷ 4 undercounts


def test_peak_in_flight_counts_requests_within_one_latency() -> None:
    log = [LoggedRequest("/v1/chat/completions", {}, {}, at) for at in (0.0, 0.05, 0.1, 0.25, 0.26, 0.27, 0.28, 0.9)]
    assert peak_in_flight(log, 0.2) == 5  # at 0.28: 0.1 (answered at 0.3) and 0.25–0.28
    assert peak_in_flight(log, 0.01) == 1 and peak_in_flight([], 0.2) == 0


def test_the_deepeval_responder_answers_gevals_score_request() -> None:
    geval = FakeRequest("openai", "/v1/chat/completions", "gpt-4o-mini",
                        (("user", 'Return JSON with the "score" and "reason" keys.'),), None, 1, {}, {})
    answer = deepeval_responder(geval)
    assert isinstance(answer, dict) and set(answer) == {"score", "reason"}
