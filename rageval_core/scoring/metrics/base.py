"""The scorer seam: what every decomposed metric and every one-call judge implements.

A scorer receives its LLM and embedder through ``EvalContext`` (no globals, no environment reads) and
returns ``MetricResult`` objects: one for a decomposed metric, one per criterion for a judge. Every call
goes through ``EvalContext.call`` so the prompt, response, usage and cache flag land in the result's
details for the sample inspector, and a provider failure becomes an unscored result, never a crash.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from rageval_core.llm.base import LLM, Completion, Embedder, LLMRequest, ProviderError
from rageval_core.core.types import MetricResult, Sample, Usage, UsageAlias


@dataclass
class CallTrace:
    """One call as the inspector shows it."""

    task: str
    prompt: str
    response: str | None
    cached: bool = False
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None
    reask: int = 0  # k for the k-th re-ask of a step after an unusable answer
    recovered: bool = False  # this re-ask's answer was usable

    def to_dict(self) -> dict[str, Any]:
        extra = {"reask": self.reask, "recovered": self.recovered} if self.reask else {}
        return {
            "task": self.task,
            "prompt": self.prompt,
            "response": self.response,
            "cached": self.cached,
            "usage": self.usage.to_dict(),
            "cost_usd": self.cost_usd,
            "latency_s": round(self.latency_s, 4),
            "error": self.error,
            **extra,
        }


@dataclass(frozen=True, init=False)
class CallEstimate:
    """Expected work of one scorer on one sample, shown before a run starts: a ``Usage`` (expected LLM calls,
    embedding calls, input and output tokens) and the prompts' cacheable prefixes.

    Built with keywords, ``CallEstimate(llm_calls=1, input_tokens=900, output_tokens=60)`` (or from a ``Usage``);
    estimates add up with ``+``. ``prompts``: per call, (input tokens, tokens of its prefix an earlier call of the
    run sends too), for what a provider's prompt cache could serve (``llm.prompt_cache``); a scorer that leaves it
    empty is counted as uncached.
    """

    usage: Usage
    prompts: tuple[tuple[int, int], ...]

    llm_calls = UsageAlias("calls")
    embedding_calls = UsageAlias("embedding_calls")
    input_tokens = UsageAlias("input_tokens")
    output_tokens = UsageAlias("output_tokens")

    def __init__(
        self, usage: Usage | None = None, prompts: Sequence[tuple[int, int]] = (), *, llm_calls: int = 0,
        embedding_calls: int = 0, input_tokens: int = 0, output_tokens: int = 0,
    ) -> None:
        counted = Usage(input_tokens, output_tokens, calls=llm_calls, embedding_calls=embedding_calls)
        object.__setattr__(self, "usage", counted if usage is None else usage + counted)
        object.__setattr__(self, "prompts", tuple(prompts))

    def __add__(self, other: "CallEstimate") -> "CallEstimate":
        return CallEstimate(self.usage + other.usage, self.prompts + other.prompts)


class Memo:
    """Per-run memo shared by scorers, computing each key once even under concurrency.

    Used so that an answer's claims are extracted once and shared by faithfulness and answer
    correctness. A failure is memoised too, so both metrics report the same reason.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Any, "_MemoEntry"] = {}

    def get_or_compute(self, key: Any, compute: Callable[[], Any]) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            owner = entry is None
            if owner:
                entry = self._entries[key] = _MemoEntry()
        assert entry is not None
        if owner:
            try:
                entry.value = compute()
            except BaseException as exc:  # re-raised to every waiter
                entry.error = exc
            finally:
                entry.done.set()
        entry.done.wait()
        if entry.error is not None:
            raise entry.error
        return entry.value


@dataclass
class _MemoEntry:
    done: threading.Event = field(default_factory=threading.Event)
    value: Any = None
    error: BaseException | None = None


@dataclass
class EvalContext:
    """What a scorer may use. ``options`` holds metric settings (e.g. ``answer_relevancy_n``)."""

    llm: LLM
    embedder: Embedder
    options: dict[str, Any] = field(default_factory=dict)
    memo: Memo = field(default_factory=Memo)

    def call(self, request: LLMRequest, trace: list[CallTrace]) -> Completion:
        """Send ``request`` and append what happened to ``trace``. ProviderError propagates after tracing."""
        started = time.perf_counter()
        try:
            completion = self.llm.complete(request)
        except ProviderError as exc:
            trace.append(
                CallTrace(request.task, request.prompt_text, None, latency_s=time.perf_counter() - started, error=str(exc),
                          reask=request.reask)
            )
            raise
        trace.append(
            CallTrace(
                task=request.task,
                prompt=request.prompt_text,
                response=completion.text if completion.texts and len(completion.texts) == 1 else "\n---\n".join(completion.texts),
                cached=completion.cached,
                usage=completion.usage,
                cost_usd=completion.cost_usd,
                latency_s=completion.latency_s,
                reask=request.reask,
            )
        )
        return completion


def summarize_traces(result: MetricResult, trace: Sequence[CallTrace]) -> MetricResult:
    """Fill a result's call counts, usage, cost and latency from its traces, and keep the traces in details."""
    result.calls = sum(1 for t in trace if t.error is None)
    result.cached_calls = sum(1 for t in trace if t.cached)
    usage = Usage()
    for t in trace:
        usage = usage + t.usage
    result.usage = usage
    result.cost_usd = sum(t.cost_usd for t in trace)
    result.latency_s = sum(t.latency_s for t in trace)
    result.details.setdefault("calls", [t.to_dict() for t in trace])
    asked = sum(1 for t in trace if t.reask)
    if asked:
        result.details.setdefault("reask", {"asked": asked, "recovered": sum(1 for t in trace if t.recovered)})
    return result


@runtime_checkable
class Scorer(Protocol):
    """A decomposed metric or a one-call judge.

    ``name`` identifies the scorer in a run (``faithfulness``, ``judge:rubric5``); ``method`` is the
    method string of its results; ``metrics`` lists the metric / criterion ids it produces.
    """

    # read-only to the runner: a decomposed metric derives its name and metrics, a judge sets them
    @property
    def name(self) -> str: ...

    @property
    def method(self) -> str: ...

    @property
    def metrics(self) -> tuple[str, ...]: ...

    def score(self, sample: Sample, ctx: EvalContext) -> list[MetricResult]: ...

    def estimate(self, sample: Sample) -> CallEstimate: ...
