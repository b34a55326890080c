"""What the fake LLM server's parts share: the parsed request a responder sees (``FakeRequest``), the request log's
entries (``LoggedRequest``), queued faults (``Fault``), the default answers (``default_responder``: the workbench's
own steps item by item, else a schema-valid instance) and the text and token helpers of the wire formats.

Kept apart from ``server`` so the wire formats (``formats``, ``anthropic``, ``batch``) import these without
importing the server that imports them.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rageval_core.testing.fake_llm.steps import step_answer

SECRET_HEADERS = frozenset({"authorization", "x-goog-api-key", "api-key", "x-api-key", "proxy-authorization"})
FAULT_KINDS = frozenset(
    {"rate_limit", "server_error", "request_timeout", "malformed", "hang", "status", "disconnect", "echo_key", "trickle"}
)
GEMINI_PATH = re.compile(
    r"^/(v1beta1|v1beta|v1|v1alpha)/(projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/)?"
    r"models/(?P<model>[^:/]+):(?P<method>[A-Za-z]+)$"
)
# Azure OpenAI: the deployment is in the path, the API version in the query.
AZURE_PATH = re.compile(r"^/openai/deployments/(?P<deployment>[^/]+)/(?P<op>chat/completions|embeddings)$")


@dataclass(frozen=True)
class FakeRequest:
    """What a responder sees: the parsed request, independent of the wire format."""

    api: str  # "openai" or "gemini"
    path: str
    model: str
    messages: tuple[tuple[str, str], ...]  # (role, text); Gemini's "model" role is reported as "assistant"
    schema: Mapping[str, Any] | None
    n: int
    body: Mapping[str, Any]
    headers: Mapping[str, str]  # secrets removed

    @property
    def prompt(self) -> str:
        """All message texts joined, for responders that look for markers in the prompt."""
        return "\n".join(text for _, text in self.messages)


@dataclass
class LoggedRequest:
    """One entry of the request log (never holds a key)."""

    path: str
    headers: dict[str, str]
    body: Any
    received_at: float
    status: int = 0
    body_sha256: str = ""
    fault: str | None = None  # the injected fault this request got, if any
    bytes_sent: int = 0  # body bytes written by a trickled answer (it stops early when the client hangs up)
    body_size: int = 0
    finished: threading.Event = field(default_factory=threading.Event)  # set once the handler is done with it
    query: str = ""  # the URL's query string (Azure's api-version)


@dataclass
class Fault:
    """A queued failure: consumed by the next ``times`` requests whose path contains ``path``."""

    kind: str
    times: int = 1
    path: str | None = None
    retry_after: float | None = None
    status: int | None = None
    seconds: float = 30.0
    message: str | None = None
    remaining: int = field(init=False)

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; known: {', '.join(sorted(FAULT_KINDS))}")
        self.remaining = self.times


Responder = Callable[[FakeRequest], "str | dict | list"]


# Control flow, outside the RagevalError tree on purpose: the fake server catches it and answers the request with a
# 400, as the real API would; no caller of the workbench meets it. tests/core/test_error_tree.py lists it.
class BadRequest(ValueError):
    """A request the real API refuses with a 400 (answered as such, not as a responder failure)."""


def schema_instance(schema: Mapping[str, Any] | None, _defs: Mapping[str, Any] | None = None) -> Any:
    """A small value that satisfies ``schema`` (the default answer when no responder is set).

    Follows ``$ref`` into ``$defs`` / ``definitions`` and takes the first non-null ``anyOf`` / ``oneOf``
    branch, as pydantic writes them (ragas), and honours ``minItems``."""
    if not schema:
        return "ok"
    defs = {**(_defs or {}), **dict(schema.get("$defs") or {}), **dict(schema.get("definitions") or {})}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return schema_instance(defs.get(ref.rsplit("/", 1)[-1]) or {}, defs)
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if o.get("type") != "null"]
        if options:
            return schema_instance(options[0], defs)
    if schema.get("enum"):
        return schema["enum"][-1]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {name: schema_instance(sub, defs) for name, sub in dict(schema.get("properties", {})).items()}
    if kind == "array":
        item = schema_instance(schema.get("items") or {"type": "string"}, defs)
        return [item] * max(1, int(schema.get("minItems") or 1))
    if kind == "integer":
        return int(schema.get("maximum", schema.get("minimum", 1)))
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "ok"


def prompt_schema(prompt: str) -> Mapping[str, Any] | None:
    """The JSON schema written into a prompt after "JSON Schema:" (ragas sends no response_format), or None."""
    at = prompt.rfind("JSON Schema:")
    if at < 0:
        return None
    start = prompt.find("{", at)
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(prompt[start:])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def default_responder(request: FakeRequest) -> str | dict:
    """Answers the workbench's steps item by item (``fake_steps``), another schema request with a schema-valid
    JSON object, and a plain request with ``ok``."""
    if request.schema:
        return step_answer(request.prompt, request.schema) or schema_instance(request.schema)
    written = prompt_schema(request.prompt)
    if written is not None:
        return schema_instance(written)
    return "ok"


def append_to_strings(value: Any, suffix: str) -> Any:
    """``value`` with ``suffix`` appended to every string in it (answers stay schema-valid)."""
    if isinstance(value, str):
        return value + suffix
    if isinstance(value, dict):
        return {k: append_to_strings(v, suffix) for k, v in value.items()}
    if isinstance(value, list):
        return [append_to_strings(v, suffix) for v in value]
    return value


def fake_embedding(text: str, dim: int) -> list[float]:
    """A deterministic, L2-normalised bag of character bigrams (similar texts get similar vectors)."""
    vec = [0.0] * dim
    lowered = text.lower()
    for a, b in zip(lowered, lowered[1:] or lowered):
        vec[zlib.crc32((a + b).encode("utf-8")) % dim] += 1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


def gemini_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def openai_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
