"""The LLM and embedding seams: one request type, one completion type, one error type.

Every provider (offline, gemini, openai, openai-compatible, replay) and every wrapper (retry, rate
limit, cache, usage accounting, call log) implements the same ``LLM`` protocol, so wrappers stack in
any order and metrics never know which provider they talk to.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Mapping, Protocol, Sequence, runtime_checkable

from rageval_core.core.types import Usage
from rageval_core.core.errors import ProviderError  # noqa: F401  (re-exported: the provider branch of core.errors, where it is defined)

if TYPE_CHECKING:
    import numpy as np

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


def canonical_json(value: Any) -> str:
    """Stable JSON used for hashing: sorted keys, no whitespace, unicode kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class LLMRequest:
    """One step of an evaluation sent to a model.

    ``task`` names the step (see ``rageval_core.core.tasks``), ``messages`` is the rendered prompt and
    ``schema`` the JSON schema of the expected answer. ``inputs`` carries the same step's structured
    inputs so the offline provider can compute it without reading the prompt; it is not part of the
    request key because API providers only ever see the messages.
    """

    task: str
    messages: tuple[Message, ...]
    schema: Mapping[str, Any] | None = None
    inputs: Mapping[str, Any] = field(default_factory=dict)
    language: str = "en"
    temperature: float = 0.0
    n: int = 1
    seed: int | None = None
    max_output_tokens: int | None = None
    # Run repeats ask again on purpose: the response cache neither answers nor stores such a request. Not
    # part of the key (the provider sees the same request either way).
    bypass_cache: bool = field(default=False, compare=False)
    # 0 for a first request; k for the k-th re-ask after an unusable answer. Not part of the key (the
    # re-ask's messages already differ); carried so the call log can mark re-ask calls.
    reask: int = 0

    def key_payload(self) -> dict[str, Any]:
        """What identifies the request independently of the provider (replay-log key, cache key part)."""
        return {
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "schema": self.schema,
            "temperature": self.temperature,
            "n": self.n,
            "seed": self.seed,
            "max_output_tokens": self.max_output_tokens,
        }

    def key(self) -> str:
        """SHA-256 of ``key_payload``; computed once per request (the runner, the call record, the cache and
        the call log each ask for it, and hashing a few kB of prompt is not free at 16 calls in flight)."""
        cached = self.__dict__.get("_key")
        if cached is None:
            cached = hashlib.sha256(canonical_json(self.key_payload()).encode("utf-8")).hexdigest()
            object.__setattr__(self, "_key", cached)  # a frozen dataclass: a memo, not a field
        return cached

    @property
    def prompt_text(self) -> str:
        """The messages joined for display and token estimates (joined once per request)."""
        cached = self.__dict__.get("_prompt_text")
        if cached is None:
            cached = "\n\n".join(f"[{m.role}]\n{m.content}" for m in self.messages)
            object.__setattr__(self, "_prompt_text", cached)
        return cached


@dataclass
class Completion:
    """What a provider answered: one text per choice (``n``), usage, latency and whether it was cached."""

    texts: list[str]
    provider: str
    model: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    cost_usd: float = 0.0
    raw: Any = None

    @property
    def text(self) -> str:
        return self.texts[0] if self.texts else ""

    @property
    def parsed(self) -> dict[str, Any] | None:
        """The first choice's JSON object (code fences and surrounding prose tolerated); None when it holds
        none, so a caller decides between ``parse_error`` and plain text instead of catching here."""
        return self.parsed_choices[0] if self.texts else None

    @property
    def parsed_choices(self) -> list[dict[str, Any] | None]:
        """Each choice's JSON object, or None where a choice holds none (n > 1: answer relevancy questions)."""
        from rageval_core.core.jsonparse import ParseError, parse_json_object

        out: list[dict[str, Any] | None] = []
        for text in self.texts:
            try:
                out.append(parse_json_object(text))
            except ParseError:
                out.append(None)
        return out


@runtime_checkable
class LLM(Protocol):
    """Anything that answers an ``LLMRequest``. Implementations are thread-safe."""

    provider: str
    model: str

    def complete(self, request: LLMRequest) -> Completion: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors, one row per text."""

    provider: str
    model: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...
