"""Scorers bound to a judge configuration: the runner gives each its own provider stack.

A ``BoundScorer`` wraps an ordinary scorer (a decomposed metric or a ``JudgeScorer``) and adds the judge:
its name becomes ``<scorer>@<judge id>`` (unique in the run), its method stays the contract's, and each
result records the judge id in ``details["judge"]`` plus the provider and model that answered.
``judge_config`` (a ``ProviderConfig``) lets the runner build the stack with its own rate limits, key and
cache; ``judge_llm`` passes a ready ``LLM`` instead (tests, scripted providers).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from rageval_core.scoring.judges.config import JudgeConfig
from rageval_core.core.method_labels import SEPARATOR
from rageval_core.llm.base import LLM, Completion, LLMRequest
from rageval_core.scoring.metrics.base import CallEstimate, EvalContext
from rageval_core.core.types import MetricResult, Sample


class SamplingLLM:
    """Sends every request with the judge's sampling settings (temperature, seed, output cap), which are
    part of the request key, so the cache and the replay log tell the settings apart."""

    def __init__(self, inner: LLM, sampling: dict[str, Any]) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.sampling = dict(sampling)

    def complete(self, request: LLMRequest) -> Completion:
        return self.inner.complete(replace(request, **self.sampling) if self.sampling else request)


class BoundScorer:
    """``inner`` scored by one judge configuration (see the module docstring)."""

    def __init__(self, inner: Any, judge: JudgeConfig, *, judge_config: Any = None, judge_llm: LLM | None = None) -> None:
        self.inner = inner
        self.judge = judge
        self.name = f"{inner.name}{SEPARATOR}{judge.id}"
        self.method = inner.method
        self.metrics: tuple[str, ...] = tuple(inner.metrics)
        self.group = judge.id
        self.judge_config = judge_config
        self.judge_llm = judge_llm

    def score(self, sample: Sample, ctx: EvalContext) -> list[MetricResult]:
        results = list(self.inner.score(sample, ctx))
        for r in results:
            r.details["judge"] = self.judge.id
        return results

    def estimate(self, sample: Sample, provider: str | None = None) -> CallEstimate:
        import inspect

        est = self.inner.estimate
        if "provider" in inspect.signature(est).parameters:
            return est(sample, provider=self.judge.provider)
        return est(sample)

    def describe(self) -> dict[str, Any]:
        describe = getattr(self.inner, "describe", None)
        base = describe() if callable(describe) else {}
        return {**(base if isinstance(base, dict) else {}), "judge": self.judge.to_dict()}

    def __getattr__(self, name: str) -> Any:  # rubric_id, per_criterion, ... of the wrapped scorer
        if name in ("inner", "judge"):
            raise AttributeError(name)
        return getattr(self.inner, name)


def judge_scorers(judges: Sequence[JudgeConfig], base_config: Any = None, *, economy: bool = False,
                  llms: dict[str, LLM] | None = None) -> list[BoundScorer]:
    """One bound scorer per (judge, scorer the judge's method needs). ``llms`` maps judge ids to ready LLMs
    (used instead of building the judge's provider stack)."""
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers

    out: list[BoundScorer] = []
    for j in judges:
        inner: list[Any]
        if j.decomposed:
            inner = list(build_scorers(j.metrics, {"economy": True} if economy else {}))
        else:
            kwargs: dict[str, Any] = {k: v for k, v in (("temperature", j.temperature), ("max_output_tokens", j.max_output_tokens)) if v is not None}
            inner = [JudgeScorer(j.rubric, **kwargs)]
        ready = (llms or {}).get(j.id)
        cfg = None if ready is not None else j.provider_config(base_config)
        out.extend(BoundScorer(s, j, judge_config=cfg, judge_llm=ready) for s in inner)
    return out


def judge_group(scorer: object) -> str:
    """The judge id the runner groups a scorer's tasks by ("" for the run's own provider)."""
    return str(getattr(scorer, "group", "") or "")


def judge_settings(scorers: Sequence[Any]) -> dict[str, Any]:
    """``{"judge_configs": [...]}`` for a run with bound scorers (recorded with the run, no keys), else ``{}``."""
    seen: dict[str, dict[str, Any]] = {}
    for s in scorers:
        judge = getattr(s, "judge", None)
        if isinstance(judge, JudgeConfig) and judge.id not in seen:
            llm = getattr(s, "judge_llm", None)
            entry = judge.to_dict()
            if not judge.model:  # the provider's default model, as the stack resolves it
                from rageval_core.providers.config import PROVIDERS

                info = PROVIDERS.get(judge.provider)
                if info is not None and info.default_model:
                    entry["model"] = info.default_model
            if llm is not None:  # a ready LLM names its own provider and model
                entry.update(provider=llm.provider, model=llm.model)
            seen[judge.id] = entry
    return {"judge_configs": list(seen.values())} if seen else {}
