"""What a provider's prompt cache could take off a run's input bill: its rule per model, and the pure math.

OpenAI and Gemini serve a prompt's prefix that an earlier request sent from a cache and bill it at the cached
rate (``prices.json``'s ``cached_input``), but only for long prompts. The rules, from the providers' pages:

- OpenAI: prompts of 1,024 tokens or more, cache hits in increments of 128 tokens (the prompt-caching guide and
  cookbook, read 2026-12-02). Counted here for a shared prefix of at least 1,024 tokens (the fake server,
  ``rageval_core/testing/fake_llm/prefix_cache.py``, asks it of the whole prompt only, so it can report a shorter prefix).
- Gemini implicit caching: on Gemini 2.5 and newer; minimum input 2,048 tokens for 2.5 Flash and 2.5 Pro, 4,096
  for the 3.x models (ai.google.dev/gemini-api/docs/caching, "Last updated 2026-10-13 UTC"; earlier versions of
  that page said 1,024 for 2.5 Flash). No block size is documented, so any length counts. Gemini 2.0 has no
  implicit cache.

- Azure OpenAI: OpenAI's rule (the same models, the same 1,024-token minimum and 128-token blocks).
- Vertex AI: Gemini's (implicit caching on Gemini 2.5 and newer, billed at 10 % of the input rate there).
- Anthropic: explicit, at a ``cache_control`` breakpoint the request places (``anthropic_provider`` puts it on the
  system prompt, where the templates keep their fixed part); the prefix must reach the model's minimum
  (``ANTHROPIC_MIN_TOKENS``, from the prompt-caching page as quoted in 2026: 4,096 for Opus 4.5 / 4.6 and Haiku
  4.5, 2,048 for Opus 4.7, 1,024 for Sonnet 4.x / 5, Opus 4.8 and Opus 4 / 4.1, 512 for Opus 5; other models
  1,024). Writing the prefix costs 1.25x input once; each read 0.1x.

Caching is never guaranteed (a prefix may be evicted or sent to another server), so what comes out of here is
an upper bound, said "up to" wherever it is shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ANTHROPIC_MIN_TOKENS", "CacheRule", "GEMINI_2_5", "GEMINI_3", "OPENAI", "anthropic_min_tokens", "cache_rule", "cached_tokens",
           "cached_tokens_of", "saving_usd"]


@dataclass(frozen=True)
class CacheRule:
    """A provider's implicit prompt cache: prompts of at least ``min_tokens``; cached tokens in whole blocks."""

    min_tokens: int
    block_tokens: int = 1
    label: str = ""


OPENAI = CacheRule(1024, 128, "OpenAI")
GEMINI_2_5 = CacheRule(2048, 1, "Gemini 2.5")
GEMINI_3 = CacheRule(4096, 1, "Gemini 3")


# Claude's minimum cacheable prefix by model-name prefix (longest match wins); see the module docstring.
ANTHROPIC_MIN_TOKENS: dict[str, int] = {
    "claude-opus-4-5": 4096, "claude-opus-4-6": 4096, "claude-haiku-4-5": 4096, "claude-opus-4-7": 2048,
    "claude-opus-4-8": 1024, "claude-sonnet-4": 1024, "claude-sonnet-5": 1024, "claude-opus-4-1": 1024, "claude-opus-4-0": 1024,
    "claude-opus-5": 512, "claude-3-haiku": 2048, "claude-3-5-haiku": 2048,
}
ANTHROPIC_DEFAULT_MIN = 1024


def anthropic_min_tokens(model: str | None) -> int:
    """The shortest prefix Claude ``model`` caches (``ANTHROPIC_MIN_TOKENS``, else 1,024)."""
    name = (model or "").lower()
    best = max((k for k in ANTHROPIC_MIN_TOKENS if name.startswith(k)), key=len, default=None)
    return ANTHROPIC_MIN_TOKENS[best] if best else ANTHROPIC_DEFAULT_MIN


def cache_rule(provider: str | None, model: str | None) -> CacheRule | None:
    """The prompt cache ``model`` on ``provider`` has, or None (no such cache, or nothing billed: offline,
    replay and local OpenAI-compatible servers)."""
    name = (model or "").removeprefix("models/").lower()
    if provider in ("openai", "azure-openai"):
        return OPENAI
    if provider == "anthropic":
        return CacheRule(anthropic_min_tokens(name), 1, "Anthropic")
    if provider in ("gemini", "vertex"):
        if name.startswith("gemini-2.5"):
            return GEMINI_2_5
        major = re.match(r"gemini-(\d+)", name)
        if major and int(major.group(1)) >= 3:
            return GEMINI_3
    return None


def cached_tokens(prompt_tokens: int, prefix_tokens: int, rule: CacheRule) -> int:
    """Tokens of one prompt the provider could serve from its cache when its first ``prefix_tokens`` were sent
    before: the shared prefix in whole blocks, and none when that prefix is under the rule's minimum (OpenAI's
    cached counts are 0 or 1,024, 1,152, ...; a prefix the cache never stored cannot be read from it)."""
    prefix = min(prefix_tokens, prompt_tokens)
    if prefix < rule.min_tokens:
        return 0
    return prefix // rule.block_tokens * rule.block_tokens


def cached_tokens_of(prompts: Iterable[tuple[int, int]], rule: CacheRule | None) -> int:
    """``cached_tokens`` summed over (prompt tokens, shared-prefix tokens) pairs; 0 without a rule."""
    if rule is None:
        return 0
    return sum(cached_tokens(p, prefix, rule) for p, prefix in prompts)


def saving_usd(cached: int, input_per_million: float, cached_per_million: float | None, discount: float = 1.0) -> float:
    """What ``cached`` input tokens cost less at the cached rate than at the input rate (0 without a cached rate)."""
    if cached_per_million is None:
        return 0.0
    return cached * max(0.0, input_per_million - cached_per_million) * discount / 1_000_000
