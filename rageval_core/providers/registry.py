"""Provider registry: how the call stack of a ``ProviderConfig`` (``providers.config``) and its embedder are built.

The one place that builds providers and embedders: ``llm`` (the adapters and their transport) and
``embeddings`` sit below it and never import it, nor each other's builders.

``build_llm`` assembles, outermost first::

    record log → response cache → concurrency limit → retry → usage/cost + call log → provider → request guard

Why this order (docs/providers.md shows the same stack): a cache hit should cost nothing — no rate-limit slot,
no concurrency slot — so the cache sits outside; the call log sees every provider attempt (failures
included) and every cache hit exactly once. The rate limit, the per-call deadline and the host's
fail-fast breaker sit below the provider, in the ``RequestGuard`` every HTTP request passes: a retry, a
structured-output fallback, a refill of missing choices and an embedding batch each take their own slot
(``guard.py`` says why). ``build_embedder(..., guard=stack.guard)`` shares the chat stack's guard, so
embeddings count against the same per-host limits unless ``embedding_rpm`` / ``embedding_tpm`` are set.
A ``base`` LLM (your own RAG system) makes one request a call and keeps the call-level timeout and rate
limit wrappers inside the retry instead. The record log is outermost so a replay log is complete even
when answers came from the cache.

The API key lives only in ``ProviderConfig.api_key`` (kept out of its repr and ``to_dict``) and in the
SDK client; it is never part of a cache key, a call record, a replay line or an error message. Directly
around the provider sits ``RedactingLLM`` (``rageval_core.core.redact``): whatever a server echoes — the key, a
header token, the base URL's credentials — is redacted in answers and errors before any layer sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rageval_core.core import redact
from rageval_core.core.messages import say
from rageval_core.llm.base import LLM, Completion, Embedder, LLMRequest, ProviderError
from rageval_core.llm.keys import resolve_api_key
from rageval_core.llm.pricing import PriceTable, load_prices
from rageval_core.llm.redacting import RedactingLLM
from rageval_core.llm.replay import RecordingLLM, ReplayLLM
from rageval_core.llm.structured import FormatLadder
from rageval_core.llm.transport.cache import CachedLLM, ResponseCache
from rageval_core.core.clock import Clock
from rageval_core.llm.transport.guard import HostBreaker, RequestGuard
from rageval_core.llm.transport.ratelimit import RateLimitedLLM, RateLimiter
from rageval_core.llm.transport.retry import Retrier, RetryLLM, RetryPolicy
from rageval_core.llm.wrappers import (
    AccountingLLM,
    CallHook,
    ConcurrencyLimitedLLM,
    TimeoutLLM,
    UsageMeter,
    CallRecorder,
)
from rageval_core.providers.config import EMBEDDING_MODES, PROVIDERS, ProviderConfig, check_config, embedding_choice

__all__ = ["EMBEDDER_BUILDERS", "LLM_BUILDERS", "ProviderStack", "build_embedder", "build_llm", "new_guard", "price_table_for"]


class ProviderStack:
    """The outermost ``LLM`` that ``build_llm`` returns, with handles on its layers for the UI and tests."""

    def __init__(
        self,
        top: LLM,
        *,
        base: LLM,
        meter: UsageMeter,
        config: ProviderConfig,
        limiter: RateLimiter | None = None,
        cache: ResponseCache | None = None,
        retrier: Retrier | None = None,
        guard: RequestGuard | None = None,
    ) -> None:
        self.top = top
        self.base = base
        self.provider = base.provider
        self.model = base.model
        self.meter = meter
        self.limiter = limiter
        self.cache = cache
        self.retrier = retrier
        self.guard = guard  # the API providers' per-host request guard (None for offline, replay, a base LLM)
        self._config = config

    def __repr__(self) -> str:
        return f"ProviderStack(provider={self.provider!r}, model={self.model!r}, base_url={redact.redact_url(self._config.base_url)!r})"

    def complete(self, request: LLMRequest) -> Completion:
        return self.top.complete(request)

    def stats(self) -> dict[str, Any]:
        """Calls, cache hits, errors, tokens, cost and retries so far."""
        out = self.meter.snapshot()
        out["retries"] = self.retrier.retries if self.retrier else 0
        out["rate_limit_wait_s"] = round(self.limiter.total_wait, 3) if self.limiter else 0.0
        return out


def _config_error(cfg: ProviderConfig, problems: list[str]) -> ProviderError:
    info = PROVIDERS.get(cfg.provider)
    missing_key = bool(info and info.needs_key and any("API key" in p for p in problems))
    return ProviderError(" ".join(problems), kind="missing_key" if missing_key else "bad_request")


def new_guard(cfg: ProviderConfig, clock: Clock | None = None) -> RequestGuard:
    """The request guard of one host: rpm / tpm limiter, fail-fast breaker, connections, deadline."""
    return RequestGuard(
        timeout_s=cfg.timeout_s,
        limiter=RateLimiter(cfg.rpm, cfg.tpm, clock=clock),
        breaker=HostBreaker(cfg.fail_fast, clock=clock),
        max_connections=cfg.concurrency,
        clock=clock,
    )


def _gemini(cfg: ProviderConfig, key: str | None, guard: RequestGuard | None, ladder: FormatLadder | None) -> LLM:
    from rageval_core.llm.gemini_provider import GeminiLLM

    assert key is not None
    return GeminiLLM(api_key=key, model=str(cfg.resolved_model()), base_url=cfg.base_url, timeout_s=cfg.timeout_s, guard=guard, ladder=ladder)


def _openai(cfg: ProviderConfig, key: str | None, guard: RequestGuard | None, ladder: FormatLadder | None) -> LLM:
    from rageval_core.llm.openai_provider import OpenAILLM

    assert key is not None
    return OpenAILLM(api_key=key, model=str(cfg.resolved_model()), base_url=cfg.base_url, timeout_s=cfg.timeout_s,
                     provider=cfg.provider, guard=guard, ladder=ladder)


def _azure(cfg: ProviderConfig, key: str | None, guard: RequestGuard | None, ladder: FormatLadder | None) -> LLM:
    from rageval_core.llm.azure_provider import AzureOpenAILLM
    from rageval_core.llm.transport.sdk_clients import azure_credentials, azure_endpoint

    api_key, token = azure_credentials(cfg.api_key)
    endpoint = azure_endpoint(cfg.base_url)
    assert endpoint is not None
    return AzureOpenAILLM(api_key=api_key, ad_token=token, model=str(cfg.resolved_model()), endpoint=endpoint,
                          api_version=cfg.api_version, timeout_s=cfg.timeout_s, guard=guard, ladder=ladder)


def _anthropic(cfg: ProviderConfig, key: str | None, guard: RequestGuard | None, ladder: FormatLadder | None) -> LLM:
    from rageval_core.llm.anthropic_provider import AnthropicLLM

    assert key is not None
    return AnthropicLLM(api_key=key, model=str(cfg.resolved_model()), base_url=cfg.base_url, timeout_s=cfg.timeout_s, guard=guard, ladder=ladder)


def _vertex(cfg: ProviderConfig, key: str | None, guard: RequestGuard | None, ladder: FormatLadder | None) -> LLM:
    from rageval_core.llm.vertex_provider import VertexLLM

    return VertexLLM(model=str(cfg.resolved_model()), project=cfg.project, location=cfg.location, api_key=cfg.api_key,
                     base_url=cfg.base_url, timeout_s=cfg.timeout_s, guard=guard, ladder=ladder)


Builder = Callable[[ProviderConfig, "str | None", "RequestGuard | None", "FormatLadder | None"], LLM]
# The API providers by id: each builds its adapter from a checked configuration and its key (imports are lazy,
# so a run loads one SDK only). offline and replay need no key, guard or ladder and are built in ``_base_llm``.
LLM_BUILDERS: dict[str, Builder] = {
    "gemini": _gemini, "openai": _openai, "openai-compatible": _openai, "azure-openai": _azure,
    "anthropic": _anthropic, "vertex": _vertex,
}


def _base_llm(cfg: ProviderConfig, key: str | None, guard: RequestGuard | None = None, ladder: FormatLadder | None = None) -> LLM:
    if cfg.provider == "offline":
        from rageval_core.offline.provider import (
            OfflineLLM,  # lazy: loads the heuristics only when chosen
        )

        return OfflineLLM()
    if cfg.provider == "replay":
        return ReplayLLM(str(cfg.replay_log), model=cfg.model)
    return LLM_BUILDERS[cfg.provider](cfg, key, guard, ladder)


def build_llm(
    cfg: ProviderConfig,
    *,
    db_path: str | Path | None = None,
    clock: Clock | None = None,
    call_hook: CallHook | None = None,
    prices: PriceTable | None = None,
    base: LLM | None = None,
    ladder: FormatLadder | None = None,
) -> ProviderStack:
    """The full wrapper stack for ``cfg``; raises ``ProviderError`` (missing_key / bad_request) with the
    ``check_config`` messages when the configuration cannot work. ``base`` puts another ``LLM`` (the user's
    own RAG system) under the same stack: ``cfg`` then only sets the limits, cache and logs. ``ladder``
    replaces the process-wide structured-output memory (tests)."""
    local = cfg.provider in ("offline", "replay")
    guard = None
    if base is None:
        problems = check_config(cfg)
        if problems:
            raise _config_error(cfg, problems)
        guard = None if local else new_guard(cfg, clock)
        base = _base_llm(cfg, resolve_api_key(cfg.provider, cfg.api_key), guard, ladder)
    redact.remember_url(cfg.base_url)
    recorder = CallRecorder(call_hook, UsageMeter())
    price_table = None if local else price_table_for(cfg.provider, prices)
    # Answers and errors leave the adapter redacted: an echoed key never reaches a layer above.
    llm: LLM = AccountingLLM(RedactingLLM(base), prices=price_table, recorder=recorder)
    if local:
        if cfg.record_log and cfg.provider == "offline":
            llm = RecordingLLM(llm, cfg.record_log)
        return ProviderStack(llm, base=base, meter=recorder.meter, config=cfg)
    if guard is not None:
        limiter = guard.limiter
    else:
        limiter = RateLimiter(cfg.rpm, cfg.tpm, clock=clock)
        llm = RateLimitedLLM(TimeoutLLM(llm, cfg.timeout_s), limiter)
    retry = RetryLLM(llm, RetryPolicy(max_retries=cfg.max_retries), clock=clock)
    llm = ConcurrencyLimitedLLM(retry, cfg.concurrency)
    cache = None
    if cfg.cache:
        cache = ResponseCache(db_path)
        llm = CachedLLM(llm, cache, base_url=cfg.base_url, recorder=recorder, credentials=getattr(base, "credentials", ()))
    if cfg.record_log:
        llm = RecordingLLM(llm, cfg.record_log)
    return ProviderStack(
        llm, base=base, meter=recorder.meter, config=cfg, limiter=limiter, cache=cache, retrier=retry.retrier, guard=guard
    )


def price_table_for(provider: str, prices: PriceTable | None = None) -> PriceTable | None:
    """The prices a provider's calls are billed at: the table as that provider bills (``<provider>:<model>``
    entries over the plain names); local OpenAI-compatible servers only what the user priced for them (a
    gateway's models), so a local model costs nothing unless priced."""
    table = prices or load_prices()
    if provider == "openai-compatible":
        scoped = table.scoped_only(provider)
        return scoped if scoped.models else None
    return table.for_provider(provider)


def _gemini_embedder(cfg: ProviderConfig, key: str | None, model: str, guard: RequestGuard) -> Any:
    from rageval_core.embeddings.gemini import GeminiEmbedder

    assert key is not None
    return GeminiEmbedder(api_key=key, model=model, base_url=cfg.base_url, timeout_s=cfg.timeout_s, guard=guard)


def _openai_embedder(cfg: ProviderConfig, key: str | None, model: str, guard: RequestGuard) -> Any:
    from rageval_core.embeddings.openai_embed import OpenAIEmbedder

    assert key is not None
    return OpenAIEmbedder(api_key=key, model=model, base_url=cfg.base_url, timeout_s=cfg.timeout_s, provider=cfg.provider, guard=guard)


def _azure_embedder(cfg: ProviderConfig, key: str | None, model: str, guard: RequestGuard) -> Any:
    from rageval_core.embeddings.openai_embed import OpenAIEmbedder
    from rageval_core.llm.transport.sdk_clients import azure_client, azure_credentials, azure_endpoint

    api_key, token = azure_credentials(cfg.api_key)
    endpoint = azure_endpoint(cfg.base_url)
    assert endpoint is not None
    client = azure_client(api_key=api_key, ad_token=token, endpoint=endpoint, api_version=cfg.api_version, timeout_s=cfg.timeout_s)
    return OpenAIEmbedder(api_key=api_key or token or "", model=model, base_url=endpoint, timeout_s=cfg.timeout_s,
                          provider="azure-openai", guard=guard, client=client)


def _vertex_embedder(cfg: ProviderConfig, key: str | None, model: str, guard: RequestGuard) -> Any:
    from rageval_core.embeddings.gemini import GeminiEmbedder
    from rageval_core.llm.transport.vertex_auth import vertex_client

    client = vertex_client(project=cfg.project, location=cfg.location, api_key=cfg.api_key, base_url=cfg.base_url, timeout_s=cfg.timeout_s)
    return GeminiEmbedder(api_key=client.secret, model=model, base_url=cfg.base_url, timeout_s=cfg.timeout_s, guard=guard,
                          client=client.client, provider="vertex")


# The embedders by provider id (anthropic has none: ``embedding_choice`` gives it the bundled encoder).
EMBEDDER_BUILDERS: dict[str, Callable[[ProviderConfig, "str | None", str, RequestGuard], Any]] = {
    "gemini": _gemini_embedder, "openai": _openai_embedder, "openai-compatible": _openai_embedder,
    "azure-openai": _azure_embedder, "vertex": _vertex_embedder,
}


def build_embedder(
    cfg: ProviderConfig, *, db_path: str | Path | None = None, clock: Clock | None = None, guard: RequestGuard | None = None
) -> Embedder:
    """A batched, retried embedder for ``cfg``, cached in SQLite unless ``cfg.cache`` is False. Offline and
    replay use the bundled offline encoder (a replay log records LLM calls only), and so does ``auto`` with
    no embedding model (``embedding_choice``); ``provider`` without one is refused. ``guard`` (the chat
    stack's) makes embedding requests share the host's limits and breaker; ``embedding_rpm`` /
    ``embedding_tpm`` give them a limiter of their own."""
    if cfg.embeddings not in EMBEDDING_MODES:
        raise _config_error(cfg, [f"embeddings must be one of {', '.join(EMBEDDING_MODES)} (got {cfg.embeddings!r})."])
    choice = embedding_choice(cfg)
    if choice.source == "offline":
        from rageval_core.offline.encoder import OfflineEmbedder

        return OfflineEmbedder(choice.model)
    problems = [p for p in check_config(cfg) if "model name your server" not in p]
    if cfg.provider in ("openai-compatible", "azure-openai") and not cfg.embedding_model:
        problems.append(
            "provider embeddings were asked for (--embeddings provider), but no embedding model is set: give the "
            "model your server serves (CLI --embedding-model, workbench field 'Embedding model'), e.g. "
            "nomic-embed-text, or let the bundled offline encoder stand in (--embeddings auto or offline)."
        )
    if problems:
        raise _config_error(cfg, problems)
    key = resolve_api_key(cfg.provider, cfg.api_key)
    if cfg.provider not in EMBEDDER_BUILDERS:
        raise _config_error(cfg, [say("config.no_claude_embeddings")])
    redact.remember_url(cfg.base_url)
    model = cfg.resolved_embedding_model()
    assert model is not None
    guard = guard or new_guard(cfg, clock)
    if cfg.embedding_rpm is not None or cfg.embedding_tpm is not None:
        guard = guard.with_limiter(RateLimiter(cfg.embedding_rpm, cfg.embedding_tpm, clock=clock))
    inner = EMBEDDER_BUILDERS[cfg.provider](cfg, key, model, guard)
    from rageval_core.embeddings.cache import BatchedEmbedder, CachedEmbedder

    retrier = Retrier(RetryPolicy(max_retries=cfg.max_retries), clock=clock)
    if not cfg.cache:
        return BatchedEmbedder(inner, retrier=retrier)
    return CachedEmbedder(inner, db_path=db_path, base_url=cfg.base_url, retrier=retrier)
