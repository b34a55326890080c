"""Tokens of the requests a fake server received, by a real tokenizer (issue 39 item 7): the side-by-side benches
count every system's prompts the same way, as gpt-4o-mini would bill them.

Chat prompts: o200k_base (the gpt-4o family's encoding) of each message's text, with OpenAI's chat framing (3 tokens
a message, 3 to prime the reply: ``core.tokens.CHAT_FRAMING``'s rule). Embedding inputs: cl100k_base (the
text-embedding-3 models' encoding). ``chars4`` is the measure these benches printed before (characters ÷ 4), kept
beside them to show how far it was off on Japanese prompts. Both encodings ship in the bpe-openai wheel (offline).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rageval_core.core.tokens import bpe_counter
from rageval_core.testing.fake_llm import LoggedRequest

CHAT_PATHS = ("/chat/completions",)
EMBED_PATHS = ("/embeddings",)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts (DeepEval sends [{"type": "text", "text": ...}])
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def chat_texts(entry: LoggedRequest) -> list[str]:
    body = entry.body if isinstance(entry.body, dict) else {}
    return [_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]


def embed_texts(entry: LoggedRequest) -> list[str]:
    body = entry.body if isinstance(entry.body, dict) else {}
    items = body.get("input")
    return [str(i) for i in items] if isinstance(items, list) else [str(items or "")]


@dataclass
class Tally:
    """What one system sent: chat and embedding requests, their tokens by the real tokenizers, and chars ÷ 4."""

    chat: int = 0
    embed: int = 0
    prompt_tokens: int = 0  # chat prompts, o200k_base with the chat framing
    embed_tokens: int = 0  # embedding inputs, cl100k_base
    chars4: int = 0  # the old measure: characters ÷ 4 of every request's text

    @property
    def requests(self) -> int:
        return self.chat + self.embed


def tally(log: Iterable[LoggedRequest]) -> Tally:
    """Count the successful chat and embedding requests of a server log."""
    o200k, cl100k = bpe_counter("o200k_base"), bpe_counter("cl100k_base")
    out = Tally()
    for entry in log:
        if entry.status != 200:
            continue
        if entry.path.endswith(CHAT_PATHS):
            texts = chat_texts(entry)
            out.chat += 1
            out.prompt_tokens += sum(3 + o200k.count(t) for t in texts) + 3
        elif entry.path.endswith(EMBED_PATHS):
            texts = embed_texts(entry)
            out.embed += 1
            out.embed_tokens += sum(cl100k.count(t) for t in texts)
        else:
            continue
        out.chars4 += max(1, len("".join(texts)) // 4)
    return out


def peak_in_flight(log: Iterable[LoggedRequest], latency: float) -> int:
    """The most requests the server held at once: each is answered ``latency`` after it arrived, so at any moment
    the requests in flight are those that arrived within the last ``latency`` seconds (server-side clock)."""
    times = sorted(e.received_at for e in log)
    peak, start = 0, 0
    for end, t in enumerate(times):
        while times[start] <= t - latency:
            start += 1
        peak = max(peak, end - start + 1)
    return peak
