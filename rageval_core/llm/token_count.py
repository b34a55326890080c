"""Token counts from a provider's own counting endpoint (Claude's ``/v1/messages/count_tokens``, Gemini's and Vertex
AI's ``:countTokens``), as a ``core.tokens.TokenCounter`` an estimate counts its texts with.

The estimate counts the pieces of each prompt (a template's fixed text, each row value), so the counter is asked
about single texts. Each is sent as one user message, and what the endpoint adds around any message (Claude counts
its message framing) is measured once on "." and taken off. The estimate hands every text over first
(``prepare``): up to ``max_texts`` distinct texts are counted, ``workers`` at a time; the rest (a 100,000-row file)
are scaled from the counted ones (endpoint tokens per approximate token). A failed count (no network, a key the
endpoint refuses) leaves the counter approximate, and says why in its ``state["note"]``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from rageval_core.core.tokens import TokenCounter, approx_tokens
from rageval_core.llm.base import LLMRequest, Message

__all__ = ["COUNT_TASK", "DEFAULT_MAX_TEXTS", "TokenCountingLLM", "endpoint_counter"]

COUNT_TASK = "count_tokens"
DEFAULT_MAX_TEXTS = 400  # count requests per estimate: ~40 texts a row, so ~10 rows' worth before scaling
PROBE = "."  # one token in every tokenizer: what the endpoint counts for it beyond 1 is its framing


class TokenCountingLLM(Protocol):
    provider: str
    model: str

    def count_tokens(self, request: LLMRequest) -> int: ...


def endpoint_counter(llm: TokenCountingLLM, *, max_texts: int = DEFAULT_MAX_TEXTS, workers: int = 4) -> TokenCounter:
    """A counter asking ``llm.count_tokens`` (AnthropicLLM, GeminiLLM, VertexLLM) about each text."""
    state: dict[str, Any] = {"counted": 0, "scaled": 0, "ratio": None, "framing": 0, "note": None}
    memo: dict[str, int] = {}
    lock = threading.Lock()

    def ask(text: str) -> int:
        return int(llm.count_tokens(LLMRequest(task=COUNT_TASK, messages=(Message("user", text),))))

    def prepare(texts: list[str]) -> None:
        distinct = list(dict.fromkeys(t for t in texts if t and t not in memo))
        chosen = distinct[:max_texts]
        try:
            state["framing"] = max(0, ask(PROBE) - 1)
            with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
                counts = list(pool.map(ask, chosen))
        except Exception as exc:  # noqa: BLE001 - the estimate stays approximate, never fails
            state["note"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            return
        with lock:
            for text, n in zip(chosen, counts, strict=True):
                memo[text] = max(0, n - state["framing"])
            state["counted"] += len(chosen)
            approx = sum(approx_tokens(t) for t in memo)
            state["ratio"] = sum(memo.values()) / approx if approx else 1.0

    def count(text: str) -> int:
        if not text:
            return 0
        with lock:
            found = memo.get(text)
            if found is not None:
                return found
            if state["ratio"] is None:
                return approx_tokens(text)  # not prepared, or the endpoint failed: approximate
            state["scaled"] += 1
            return round(approx_tokens(text) * state["ratio"])

    return TokenCounter(f"{llm.provider} count_tokens ({llm.model})", count, prepare=prepare, state=state)
