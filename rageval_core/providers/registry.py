"""Provider registry: how the call stack of a ``ProviderConfig`` (``providers.config``) and its embedder are built.

The one place that builds providers and embedders: ``llm`` (the adapters and their transport) and
``embeddings`` sit below it and never import it, nor each other's builders.

``build_llm`` assembles, outermost first::

    record log → response cache → concurrency limit → retry → usage/cost + call log → provider → request guard

Why this order (PLAN.md lists the same layers): a cache hit should cost nothing — no rate-limit slot,
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

from pathlib import Path
from typing import Any

from rageval_core.core import redact
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

__all__ = ["ProviderStack", "build_embedder", "build_llm", "new_guard"]


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


def _base_llm(cfg: ProviderConfig, key: str | None, guard: RequestGuard | None = None, ladder: FormatLadder | None = None) -> LLM:
    model = cfg.resolved_model()
    if cfg.provider == "offline":
        from rageval_core.offline.provider import (
            OfflineLLM,  # lazy: loads the heuristics only when chosen
        )

        return OfflineLLM()
    if cfg.provider == "replay":
        return ReplayLLM(str(cfg.replay_log), model=cfg.model)
    assert key is not None and model is not None
    if cfg.provider == "gemini":
        from rageval_core.llm.gemini_provider import GeminiLLM

        return GeminiLLM(api_key=key, model=model, base_url=cfg.base_url, timeout_s=cfg.timeout_s, guard=guard, ladder=ladder)
    from rageval_core.llm.openai_provider import OpenAILLM

    return OpenAILLM(
        api_key=key, model=model, base_url=cfg.base_url, timeout_s=cfg.timeout_s, provider=cfg.provider, guard=guard, ladder=ladder
    )


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
    price_table = None if local or cfg.provider not in ("gemini", "openai") else (prices or load_prices())
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
    if cfg.provider == "openai-compatible" and not cfg.embedding_model:
        problems.append(
            "provider embeddings were asked for (--embeddings provider), but no embedding model is set: give the "
            "model your server serves (CLI --embedding-model, workbench field 'Embedding model'), e.g. "
            "nomic-embed-text, or let the bundled offline encoder stand in (--embeddings auto or offline)."
        )
    if problems:
        raise _config_error(cfg, problems)
    key = resolve_api_key(cfg.provider, cfg.api_key)
    assert key is not None
    redact.remember_url(cfg.base_url)
    model = cfg.resolved_embedding_model()
    assert model is not None
    guard = guard or new_guard(cfg, clock)
    if cfg.embedding_rpm is not None or cfg.embedding_tpm is not None:
        guard = guard.with_limiter(RateLimiter(cfg.embedding_rpm, cfg.embedding_tpm, clock=clock))
    inner: Any
    if cfg.provider == "gemini":
        from rageval_core.embeddings.gemini import GeminiEmbedder

        inner = GeminiEmbedder(api_key=key, model=model, base_url=cfg.base_url, timeout_s=cfg.timeout_s, guard=guard)
    else:
        from rageval_core.embeddings.openai_embed import OpenAIEmbedder

        inner = OpenAIEmbedder(
            api_key=key, model=model, base_url=cfg.base_url, timeout_s=cfg.timeout_s, provider=cfg.provider, guard=guard
        )
    from rageval_core.embeddings.cache import BatchedEmbedder, CachedEmbedder

    retrier = Retrier(RetryPolicy(max_retries=cfg.max_retries), clock=clock)
    if not cfg.cache:
        return BatchedEmbedder(inner, retrier=retrier)
    return CachedEmbedder(inner, db_path=db_path, base_url=cfg.base_url, retrier=retrier)
