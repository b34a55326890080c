"""Thin wrappers around any ``LLM``: per-call timeout, concurrency limit, usage/cost accounting and the call log.

Each wrapper does one job and exposes ``provider``, ``model`` and ``inner`` so they stack in any order
(``registry.build_llm`` assembles the standard stack).
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rageval_core.llm.base import LLM, Completion, LLMRequest, ProviderError
from rageval_core.llm.pricing import PriceTable
from rageval_core.core.types import Usage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallRecord:
    """One provider call or cache hit, as the runner stores it in the call log (never holds a key)."""

    task: str
    request_key: str
    provider: str
    model: str
    prompt: str
    response: str | None  # the first choice; all choices in ``responses``
    responses: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    error_kind: str | None = None
    timestamp: float = 0.0  # unix time the call started
    reask: int = 0  # k for the k-th re-ask of a step (the call log marks re-ask calls)
    structured_output: str | None = None  # the structured-output level sent (json_schema, response_schema, ...)

    @classmethod
    def for_request(cls, request: LLMRequest, provider: str, model: str, **fields: Any) -> CallRecord:
        """A record of ``request``: task, request key, prompt and re-ask count come from it, ``fields`` the rest."""
        return cls(
            task=request.task, request_key=request.key(), provider=provider, model=model, prompt=request.prompt_text,
            reask=request.reask, **fields
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "request_key": self.request_key,
            "provider": self.provider,
            "model": self.model,
            "prompt": self.prompt,
            "response": self.response,
            "responses": list(self.responses),
            "usage": self.usage.to_dict(),
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
            "cached": self.cached,
            "error": self.error,
            "error_kind": self.error_kind,
            "timestamp": self.timestamp,
            "reask": self.reask,
            "structured_output": self.structured_output,
        }


CallHook = Callable[[CallRecord], None]


class UsageMeter:
    """Running totals of a provider stack's calls (thread-safe): one ``Usage`` (provider calls with their tokens
    and cost, cache hits, errors) and how many calls had no price."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = Usage()
        self.unpriced_calls = 0  # calls whose model is not in the price table

    def add(self, record: CallRecord, *, priced: bool = True) -> None:
        if record.cached:
            one = Usage(cached_calls=1)
        elif record.error is not None:
            one = Usage(errors=1)
        else:
            one = dataclasses.replace(record.usage, calls=1, cost_usd=record.cost_usd)
        with self._lock:
            self.total = self.total + one
            if one.calls and not priced:
                self.unpriced_calls += 1

    def snapshot(self) -> dict[str, Any]:
        """``calls`` counts every provider attempt (errors included); ``usage`` the tokens."""
        with self._lock:
            u, unpriced = self.total, self.unpriced_calls
        return {
            "calls": u.calls + u.errors,
            "cache_hits": u.cached_calls,
            "errors": u.errors,
            "usage": Usage(u.input_tokens, u.output_tokens, u.cached_input_tokens, u.cache_write_tokens).to_dict(),
            "cost_usd": round(u.cost_usd, 8),
            "unpriced_calls": unpriced,
        }


class CallRecorder:
    """Sends each ``CallRecord`` to the meter and to the caller's hook; a failing hook is logged, not raised,
    so a full disk in the call log never turns a good answer into an error."""

    def __init__(self, hook: CallHook | None = None, meter: UsageMeter | None = None) -> None:
        self.hook = hook
        self.meter = meter or UsageMeter()

    def emit(self, record: CallRecord, *, priced: bool = True) -> None:
        self.meter.add(record, priced=priced)
        if self.hook is not None:
            try:
                self.hook(record)
            except Exception:
                log.exception("call_hook failed for task %s", record.task)


class AccountingLLM:
    """Measures latency, prices the usage and reports every provider call (success or error)."""

    def __init__(self, inner: LLM, *, prices: PriceTable | None = None, recorder: CallRecorder | None = None) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.prices = prices
        self.recorder = recorder or CallRecorder()

    def complete(self, request: LLMRequest) -> Completion:
        started_wall = time.time()
        started = time.perf_counter()
        try:
            completion = self.inner.complete(request)
        except ProviderError as err:
            if err.kind == "cancelled":
                raise  # never sent (a cancelled wait): not a call, so not in the call log
            self.recorder.emit(
                CallRecord.for_request(
                    request,
                    self.provider,
                    self.model,
                    response=None,
                    latency_s=time.perf_counter() - started,
                    error=str(err),
                    error_kind=err.kind,
                    timestamp=started_wall,
                    structured_output=getattr(err, "structured_output", None),
                )
            )
            raise
        latency = time.perf_counter() - started
        completion.latency_s = completion.latency_s or latency
        cost = self.prices.cost(completion.model, completion.usage) if self.prices is not None else None
        completion.cost_usd = cost or 0.0
        self.recorder.emit(
            CallRecord.for_request(
                request,
                completion.provider,
                completion.model,
                response=completion.text,
                responses=tuple(completion.texts),
                usage=completion.usage,
                cost_usd=completion.cost_usd,
                latency_s=latency,
                cached=completion.cached,
                timestamp=started_wall,
                structured_output=completion.raw.get("structured_output") if isinstance(completion.raw, dict) else None,
            ),
            priced=cost is not None,
        )
        return completion


class TimeoutLLM:
    """A hard per-call deadline. The SDKs' timeouts bound each socket read; this bounds the whole call
    (a server trickling bytes can outlast a read timeout). The late call finishes in the background and
    its answer is dropped."""

    def __init__(self, inner: LLM, timeout_s: float) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.timeout_s = timeout_s

    def complete(self, request: LLMRequest) -> Completion:
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = self.inner.complete(request)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                box["error"] = exc
            finally:
                done.set()

        # The worker sees the caller's context variables (the runner tags call-log records with them).
        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(run,), name=f"llm-call-{request.task}", daemon=True)
        worker.start()
        # A little grace so the SDK's own timeout (same value) normally fires first with its own message.
        if not done.wait(self.timeout_s + 0.25):
            raise ProviderError(
                f"{self.provider} ({self.model}): no answer within {self.timeout_s:g} s (per-call timeout)",
                kind="timeout",
                retryable=True,
            )
        if "error" in box:
            raise box["error"]
        return box["value"]


class ConcurrencyLimitedLLM:
    """At most ``limit`` calls in flight through this wrapper (a semaphore)."""

    def __init__(self, inner: LLM, limit: int) -> None:
        if limit < 1:
            raise ValueError("concurrency limit must be at least 1")
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.limit = limit
        self._sem = threading.BoundedSemaphore(limit)

    def complete(self, request: LLMRequest) -> Completion:
        with self._sem:
            return self.inner.complete(request)
