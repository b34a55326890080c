"""Which token counter an estimate counts a configuration's prompts with: OpenAI's encodings offline (openai,
azure-openai), the provider's token-counting endpoint for Claude, Gemini and Vertex AI (built from the same
configuration the run uses, so the count goes where the run's calls go), approximate for the rest (offline, replay,
local servers and gateways, whose models' tokenizers are not known here)."""

from __future__ import annotations

from rageval_core.core.tokens import APPROXIMATE, TokenCounter, counter_for
from rageval_core.providers.config import ProviderConfig, check_config

__all__ = ["COUNTING_ENDPOINTS", "token_counter"]

COUNTING_ENDPOINTS = ("anthropic", "gemini", "vertex")


def token_counter(cfg: ProviderConfig | None, *, endpoint: bool = True) -> TokenCounter:
    """The counter for ``cfg``; ``endpoint=False`` keeps a Claude / Gemini estimate offline (approximate). A
    configuration that cannot be built (no key) counts approximately: the run will say what is missing."""
    if cfg is None:
        return APPROXIMATE
    if cfg.provider not in COUNTING_ENDPOINTS:
        return counter_for(cfg.provider, cfg.resolved_model())
    if not endpoint or check_config(cfg):
        return APPROXIMATE
    from rageval_core.core import redact
    from rageval_core.llm.keys import resolve_api_key
    from rageval_core.llm.token_count import endpoint_counter
    from rageval_core.providers.registry import LLM_BUILDERS, new_guard

    redact.remember_url(cfg.base_url)
    # The bare adapter with a guard of its own (deadline, connections): no response cache or call log is opened for
    # counting, and the run's rate limiter is not spent on it.
    adapter = LLM_BUILDERS[cfg.provider](cfg, resolve_api_key(cfg.provider, cfg.api_key), new_guard(cfg), None)
    return endpoint_counter(adapter, workers=min(4, max(1, cfg.concurrency)))  # type: ignore[arg-type]
