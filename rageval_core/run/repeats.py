"""Run repeats: the same rows scored K times so a score's spread can be measured (``RunSpec(repeats=K)``).

Repeat 0 is the ordinary run (its requests unchanged, so it shares the response cache with a run without
repeats). Every request of repeat r ≥ 1 carries ``seed = (its own seed or 0) + r × SEED_STRIDE`` and
bypasses the response cache, so it reaches the provider even when an identical request was answered
before; a judge's own repeats use seeds 1 .. SEED_STRIDE − 1 and never collide with a run repeat. A
``temperature`` given for the repeats is set on every repeat, 0 included (the spread is then a sampling
spread). What each provider does with that is in ``repeat_note``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rageval_core.llm.base import LLM, Completion, LLMRequest
from rageval_core.core.messages import say

SEED_STRIDE = 1000

# Providers whose answers cannot change between repeats: the spread is 0 by construction.
DETERMINISTIC_PROVIDERS = frozenset({"offline"})


def repeat_request(request: LLMRequest, repeat: int, temperature: float | None = None) -> LLMRequest:
    """``request`` as repeat ``repeat`` sends it (repeat 0 without a temperature: unchanged)."""
    if repeat < 0:
        raise ValueError("repeat must be 0 or more")
    changes: dict[str, Any] = {}
    if temperature is not None:
        changes["temperature"] = float(temperature)
    if repeat > 0:
        changes["seed"] = (request.seed or 0) + repeat * SEED_STRIDE
        changes["bypass_cache"] = True
    return replace(request, **changes) if changes else request


class RepeatLLM:
    """Sends every request as repeat ``repeat`` would (see ``repeat_request``)."""

    def __init__(self, inner: LLM, repeat: int, temperature: float | None = None) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.repeat = repeat
        self.temperature = temperature

    def complete(self, request: LLMRequest) -> Completion:
        return self.inner.complete(repeat_request(request, self.repeat, self.temperature))


def repeat_note(provider: str | None, temperature: float | None = None) -> str:
    """What repeats mean on this provider, printed with every stability report (honesty over a bare 0)."""
    if provider in DETERMINISTIC_PROVIDERS:
        return say("repeats.offline")
    if provider == "replay":
        return say("repeats.replay")
    temp = say("repeats.temperature", temperature=f"{temperature:g}") if temperature is not None else say("repeats.own_temperature")
    return say("repeats.seeds", stride=SEED_STRIDE, temperature=temp)
