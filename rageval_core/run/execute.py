"""Executing tasks: the wrappers the runner puts around the LLM and embedder for one run.

A slot gate (bounded model concurrency, longest remaining chain first), the cancel check, live counters, and the
call log, labelled with the run / row / scorer of the task the current thread works for. A call-log
write that fails is a counted warning (``db.warn``), never an error: it must not turn a good answer into
``provider_error``.
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import json
import threading
import time
from collections import Counter
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from rageval_core.llm.base import LLM, Completion, Embedder, LLMRequest, ProviderError
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.run.calllog import writer_for
from rageval_core.run.plan import RunError
from rageval_core.store.call_log import CallEntry
from rageval_core.store.runs import Store
from rageval_core.core.types import MetricResult, Sample, Unscored, Usage

if TYPE_CHECKING:  # numpy is imported with the first vectors, not with the runner
    import numpy as np


def log_safely(store: Store, entry: CallEntry) -> None:
    """Append to the call log by group commit (``run.calllog``); a database locked past the retries (or
    failing) becomes a ``call_log`` warning."""
    writer_for(store).add(entry)


# ---- task context: which run / row / scorer the current thread works for ---------------------------------
@dataclass
class TaskTag:
    """Set in a contextvar for the duration of one task; the call hook reads it to label the call log."""

    run_id: str
    sample_id: str
    scorer: str
    method: str
    priority: int = 0
    cancelled: bool = False
    chain: int = 1  # the scorer's declared chain of dependent calls
    steps: int = 0  # calls this task has been given a slot for so far
    # Call records of the call in progress. The providers' hook fires inside the stack, before the
    # response cache stores the answer; holding the records until the stack returns means a logged
    # call is always a cached call, so a process killed in between can never repeat a logged call.
    pending: list[tuple[Store, CallEntry]] | None = None


def slot_priority(tag: TaskTag | None) -> tuple[int, int]:
    """The gate's order for the next call of a task: the most dependent calls still ahead first, then the
    oldest task (longest-remaining-chain-first list scheduling, so no long chain is left to start at the end
    of a run), and one more step counted."""
    if tag is None:
        return (0, 0)
    ahead = max(1, tag.chain - tag.steps)
    tag.steps += 1
    return (-ahead, tag.priority)


_CURRENT: contextvars.ContextVar[TaskTag | None] = contextvars.ContextVar("rageval_task", default=None)


def make_call_hook(store: Store) -> Callable[[Any], None]:
    """A ``call_hook`` for ``build_llm``: writes each provider call or cache hit to the store's call log.

    The record's run / row / scorer come from the task contextvar the runner sets, so one LLM object
    built once can serve many runs. Calls made outside a run are not logged.
    """

    def hook(record: Any) -> None:
        tag = _CURRENT.get() or _INFLIGHT.find(_record_key(record))
        if tag is None:
            return
        entry = _entry_from_record(tag, record)
        if tag.pending is not None:
            tag.pending.append((store, entry))  # written once the whole stack (cache included) returned
        else:
            log_safely(store, entry)

    return hook


class _InflightRegistry:
    """Request key → tasks with that request in flight.

    The contextvar does not follow a call into a thread a provider wrapper starts for itself (a per-call
    timeout runs the SDK call on its own thread), so the hook falls back to the request key, which every
    call record carries.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, list[TaskTag]] = {}

    def add(self, key: str, tag: TaskTag) -> None:
        with self._lock:
            self._by_key.setdefault(key, []).append(tag)

    def remove(self, key: str, tag: TaskTag) -> None:
        with self._lock:
            tags = self._by_key.get(key, [])
            if tag in tags:
                tags.remove(tag)
            if not tags:
                self._by_key.pop(key, None)

    def find(self, key: str | None) -> TaskTag | None:
        if not key:
            return None
        with self._lock:
            tags = self._by_key.get(key)
            return tags[0] if tags else None


_INFLIGHT = _InflightRegistry()


def _record_key(record: Any) -> str | None:
    if isinstance(record, Mapping):
        return record.get("request_key") or record.get("key")
    return getattr(record, "request_key", None)


def structured_output_of(completion: Completion | None, error: BaseException | None) -> str | None:
    """The structured-output level a provider reported for a call (``raw`` of its completion, or its error)."""
    if completion is not None:
        raw = completion.raw
        return raw.get("structured_output") if isinstance(raw, Mapping) else None
    return getattr(error, "structured_output", None)


def _entry_from_record(tag: TaskTag, record: Any) -> CallEntry:
    get = record.get if isinstance(record, Mapping) else (lambda k, d=None: getattr(record, k, d))
    usage = get("usage") or Usage()
    if isinstance(usage, Mapping):
        usage = Usage(**{k: int(v) for k, v in usage.items() if k in ("input_tokens", "output_tokens", "cached_input_tokens")})
    error = get("error")
    return CallEntry(
        run_id=tag.run_id,
        sample_id=tag.sample_id,
        scorer=tag.scorer,
        method=tag.method,
        task=get("task"),
        request_key=get("request_key") or get("key"),
        provider=get("provider"),
        model=get("model"),
        prompt=get("prompt"),
        response=get("response"),
        usage=usage,
        cost_usd=float(get("cost_usd", None) or get("cost", None) or 0.0),
        latency_s=float(get("latency_s", None) or get("latency", None) or 0.0),
        cached=bool(get("cached")),
        error=None if error is None else str(error),
        ts=float(get("timestamp", None) or get("ts", None) or time.time()),
        reask=int(get("reask", None) or 0),
        structured_output=get("structured_output", None),
    )


# ---- slot gate: bounded model concurrency, longest remaining chain first ---------------------------------
class PriorityGate:
    """At most ``limit`` calls at once; the waiting call with the smallest priority goes first (the runner
    passes ``slot_priority``: most dependent calls still ahead, then the oldest task).

    A released slot is handed to the best waiter alone (each waits on its own event): a shared condition
    woke all 30-odd waiting workers on every release, and their fight for the interpreter cost the run
    more CPU than the requests did."""

    def __init__(self, limit: int, cancel: threading.Event) -> None:
        self._lock = threading.Lock()
        self._free = max(1, int(limit))
        self._heap: list[tuple[tuple[int, int], int, _Waiter]] = []
        self._seq = itertools.count()
        self._cancel = cancel

    def acquire(self, priority: tuple[int, int]) -> None:
        with self._lock:
            if self._free > 0 and not self._heap:
                self._free -= 1
                return
            waiter = _Waiter()
            heapq.heappush(self._heap, (priority, next(self._seq), waiter))
        while True:
            waiter.event.wait(0.5)
            with self._lock:
                if waiter.granted:
                    if not self._cancel.is_set():
                        return
                    self._release_locked()  # granted just as the run was cancelled: pass the slot on
                    raise ProviderError("run cancelled", kind="cancelled")
                if self._cancel.is_set():
                    self._heap = [entry for entry in self._heap if entry[2] is not waiter]
                    heapq.heapify(self._heap)
                    raise ProviderError("run cancelled", kind="cancelled")
                waiter.event.clear()

    def release(self) -> None:
        with self._lock:
            self._release_locked()

    def _release_locked(self) -> None:
        if self._heap:
            waiter = heapq.heappop(self._heap)[2]
            waiter.granted = True
            waiter.event.set()
        else:
            self._free += 1

    def wake(self) -> None:
        """Let every waiter look at the cancel flag now rather than at its next half-second check."""
        with self._lock:
            for _, _, waiter in self._heap:
                waiter.event.set()


class _Waiter:
    __slots__ = ("event", "granted")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.granted = False


@dataclass
class Counters:
    """Live totals for the progress callback (this invocation only): one ``Usage`` (provider calls with their
    tokens and cost, cache hits, errors, embedding requests) and the store writes that were lost."""

    usage: Usage = Usage()
    warnings: Counter[str] = field(default_factory=Counter)  # lost call-log / cache writes by kind
    lock: threading.Lock = field(default_factory=threading.Lock)

    def warn(self, kind: str) -> None:
        with self.lock:
            self.warnings[kind] += 1

    def add(self, completion: Completion | None, error: bool = False) -> None:
        """Count one call: an error, a response-cache hit, or a provider call with its tokens and cost."""
        if error or completion is None:
            one = _ONE_ERROR
        elif completion.cached:
            one = _ONE_CACHE_HIT
        else:
            one = dataclasses.replace(completion.usage, calls=1, cost_usd=completion.cost_usd)
        with self.lock:
            self.usage = self.usage + one

    def add_embedding(self) -> None:
        with self.lock:
            self.usage = self.usage + _ONE_EMBEDDING


_ONE_ERROR, _ONE_CACHE_HIT, _ONE_EMBEDDING = Usage(errors=1), Usage(cached_calls=1), Usage(embedding_calls=1)


class RunLLM:
    """The runner's outer LLM wrapper: slot gate, cancel check, live counters, optional call logging."""

    def __init__(self, inner: LLM, gate: PriorityGate, cancel: threading.Event, counters: Counters, store: Store | None):
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self._gate, self._cancel, self._counters, self._store = gate, cancel, counters, store

    def complete(self, request: LLMRequest) -> Completion:
        tag = _CURRENT.get()
        if self._cancel.is_set():
            if tag is not None:
                tag.cancelled = True
            raise ProviderError("run cancelled", kind="cancelled")
        try:
            self._gate.acquire(slot_priority(tag))
        except ProviderError:
            if tag is not None:
                tag.cancelled = True
            raise
        started = time.perf_counter()
        key = request.key()
        if tag is not None:
            tag.pending = []
            _INFLIGHT.add(key, tag)
        try:
            completion = self.inner.complete(request)
        except ProviderError as exc:
            if exc.kind == "cancelled":  # a wait ended by the cancel: nothing was sent
                if tag is not None:
                    tag.cancelled = True
                raise
            self._counters.add(None, error=True)
            self._log(tag, request, None, exc, time.perf_counter() - started)
            raise
        finally:
            self._gate.release()
            if tag is not None:
                _INFLIGHT.remove(key, tag)
                pending, tag.pending = tag.pending or [], None
                for store, entry in pending:
                    log_safely(store, entry)
        self._counters.add(completion)
        self._log(tag, request, completion, None, time.perf_counter() - started)
        return completion

    def _log(self, tag: TaskTag | None, request: LLMRequest, completion: Completion | None, error: Exception | None, took: float) -> None:
        if self._store is None or tag is None:
            return
        texts = completion.texts if completion else []
        log_safely(
            self._store,
            CallEntry(
                run_id=tag.run_id,
                sample_id=tag.sample_id,
                scorer=tag.scorer,
                method=tag.method,
                task=request.task,
                request_key=request.key(),
                provider=completion.provider if completion else self.provider,
                model=completion.model if completion else self.model,
                prompt=request.prompt_text,
                response=(texts[0] if len(texts) == 1 else json.dumps(texts, ensure_ascii=False)) if completion else None,
                usage=completion.usage if completion else Usage(),
                cost_usd=completion.cost_usd if completion else 0.0,
                latency_s=completion.latency_s if completion and completion.latency_s else took,
                cached=bool(completion and completion.cached),
                error=None if error is None else str(error),
                reask=request.reask,
                structured_output=structured_output_of(completion, error),
            ),
        )


class RunEmbedder:
    """Counts embedding requests and shares the model slots (a remote embedder is a call like any other)."""

    def __init__(self, inner: Embedder, gate: PriorityGate, counters: Counters, gated: bool) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self._gate, self._counters, self._gated = gate, counters, gated

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        tag = _CURRENT.get()
        if self._gated:
            self._gate.acquire(slot_priority(tag))
        try:
            return self.inner.embed(texts)
        finally:
            if self._gated:
                self._gate.release()
            self._counters.add_embedding()


def failed_results(sample: Sample, scorer: Scorer, exc: BaseException, llm: LLM) -> list[MetricResult]:
    reason = exc.unscored_reason if isinstance(exc, ProviderError) else Unscored.PROVIDER_ERROR
    message = f"{type(exc).__name__}: {exc}"
    return [
        MetricResult(
            sample.id, metric, scorer.method, None, unscored_reason=reason, reason=message,
            provider=llm.provider, model=llm.model, details={"error": message},
        )
        for metric in scorer.metrics
    ]


def judge_stacks(
    scorers: Sequence[Scorer], llm: LLM, runner_logs: bool, judges: Mapping[str, LLM]
) -> dict[str, tuple[LLM, bool]]:
    """The LLM each judge group answers with, and whether the runner logs its calls itself.

    Group "" is the run's own provider. A scorer bound to a judge configuration (``judges.BoundScorer``)
    answers with that judge's stack from ``judges`` (built by ``session.for_run``, logging through its own
    hook); a ready ``judge_llm`` is used as given (the runner then logs its calls). Each is sent with the
    judge's sampling settings."""
    from rageval_core.scoring.judges.bound import SamplingLLM, judge_group

    stacks: dict[str, tuple[LLM, bool]] = {"": (llm, runner_logs)}
    for scorer in scorers:
        group = judge_group(scorer)
        if not group or group in stacks:
            continue
        sampling = scorer.judge.sampling  # type: ignore[attr-defined]
        ready = getattr(scorer, "judge_llm", None)
        if ready is not None:
            stacks[group] = (SamplingLLM(ready, sampling), True)
        elif group in judges:
            stacks[group] = (SamplingLLM(judges[group], sampling), False)
        else:
            raise RunError(f"judge {group!r} has no provider: build the run's providers with session.for_run")
    return stacks


def embedding_settings(embedder: Embedder) -> dict[str, Any]:
    """What embeds this run, as the embedder names itself (when no configuration's choice was recorded)."""
    source, model = getattr(embedder, "provider", None), getattr(embedder, "model", None)
    return {"source": source, "model": model, "fallback": None, "summary": f"{source} {model}"}


class UnavailableEmbedder:
    """Stands in for an embedder the configuration cannot build, in a run whose scorers need none."""

    provider = "unavailable"

    def __init__(self, error: ProviderError) -> None:
        self.model = "none"
        self._error = error

    def embed(self, texts: Sequence[str]) -> Any:
        raise ProviderError(str(self._error), kind=self._error.kind)


def default_embedder() -> Embedder:
    from rageval_core.offline.encoder import OfflineEmbedder

    return OfflineEmbedder()
