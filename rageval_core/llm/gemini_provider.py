"""Gemini through ``google-genai``: structured output with ``response_json_schema``, n via candidate_count.

Structured output levels, best first: ``response_json_schema`` (full JSON Schema), ``response_schema``
(the OpenAPI subset the SDK converts our JSON Schema into) and plain ``response_mime_type``
``application/json``. An endpoint or proxy that does not know a field answers 400 INVALID_ARGUMENT
("Unknown name \"responseJsonSchema\" at 'generation_config'"); the provider then sends that call one
level down and remembers the level per endpoint + model (``structured.LADDER``, tried upward again later),
so only the first call pays for the rejection. A 500, a timeout or a 429 never lowers it. Every HTTP
request passes the ``RequestGuard`` (rate-limit slot, host breaker, deadline).

The SDK's retries stay off (``HttpOptions.retry_options`` unset means one attempt); the retry wrapper
honours Gemini's ``RetryInfo.retryDelay`` from the 429 body instead.
"""

from __future__ import annotations

import time
from typing import Any

from google import genai
from google.genai import types

from rageval_core.llm.api_provider import APIProvider
from rageval_core.llm.base import Completion, LLMRequest, ProviderError
from rageval_core.llm.transport.guard import RequestGuard
from rageval_core.llm.transport.http_errors import (
    kind_for_status,
    provider_error,
)
from rageval_core.llm.transport.ratelimit import estimate_tokens
from rageval_core.llm.structured import FormatLadder
from rageval_core.llm.transport.gemini_http import http_options, map_gemini_error
from rageval_core.core.types import Usage

RESPONSE_JSON_SCHEMA = "response_json_schema"
RESPONSE_SCHEMA = "response_schema"
JSON_MIME = "response_mime_type"
FORMAT_LEVELS: tuple[str, ...] = (RESPONSE_JSON_SCHEMA, RESPONSE_SCHEMA, JSON_MIME)


class GeminiLLM(APIProvider):
    """Synchronous, thread-safe ``generate_content`` calls."""

    provider = "gemini"

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "gemini-2.5-flash",
        base_url: str | None = None,
        timeout_s: float = 60.0,
        thinking_budget: int | None = None,
        guard: RequestGuard | None = None,
        ladder: FormatLadder | None = None,
        client: genai.Client | None = None,
        provider: str = "gemini",
    ) -> None:
        """``client`` and ``provider`` replace the Gemini API's (the Vertex adapter passes its ``vertexai`` client)."""
        super().__init__(provider=provider, api_key=api_key, model=model, base_url=base_url, timeout_s=timeout_s,
                         levels=FORMAT_LEVELS, guard=guard, ladder=ladder)
        self.thinking_budget = thinking_budget
        self._client = client if client is not None else genai.Client(api_key=api_key, vertexai=False, http_options=http_options(base_url, timeout_s))

    def __repr__(self) -> str:
        return f"GeminiLLM(model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, request: LLMRequest) -> Completion:
        started = time.perf_counter()
        response, level, fallbacks = self._send_with_fallback(request, self._generate)
        completion = self._completion(response, time.perf_counter() - started)
        completion.raw["structured_output"] = FORMAT_LEVELS[level] if request.schema is not None else None
        if fallbacks:
            completion.raw["format_rejections"] = fallbacks
        return completion

    def request_parts(self, request: LLMRequest, level: int | None = None) -> tuple[list[types.Content], types.GenerateContentConfig]:
        """The contents and generation config for ``request`` at a structured-output level (default: the
        current one); the synchronous call and a batch-mode inlined request send the same. Raises a 400
        ``ProviderError`` when the SDK cannot express the schema at that level."""
        chosen = self._ladder.level(self._key) if level is None else level
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        contents = [
            types.Content(role="model" if m.role == "assistant" else "user", parts=[types.Part(text=m.content)])
            for m in request.messages
            if m.role != "system"
        ]
        config: dict[str, Any] = {"temperature": request.temperature}
        if system:
            config["system_instruction"] = system
        if request.n != 1:
            config["candidate_count"] = request.n
        if request.seed is not None:
            config["seed"] = request.seed
        if request.max_output_tokens is not None:
            config["max_output_tokens"] = request.max_output_tokens
        if request.schema is not None:
            config["response_mime_type"] = "application/json"
            if FORMAT_LEVELS[chosen] == RESPONSE_JSON_SCHEMA:
                config["response_json_schema"] = dict(request.schema)
            elif FORMAT_LEVELS[chosen] == RESPONSE_SCHEMA:
                config["response_schema"] = openapi_schema(request.schema)
        if self.thinking_budget is not None:
            config["thinking_config"] = types.ThinkingConfig(thinking_budget=self.thinking_budget)
        error: ProviderError | None = None
        try:
            return contents, types.GenerateContentConfig(**config)
        except Exception as exc:  # noqa: BLE001 - the SDK could not express the schema at this level
            error = provider_error(f"{self.provider} ({self.model})", f"schema not accepted by the SDK ({type(exc).__name__}: {exc})", kind="bad_request", status=400, secrets=self._secrets)
        raise error

    def count_tokens(self, request: LLMRequest) -> int:
        """Input tokens of ``request``'s messages by Gemini's own tokenizer (``models.count_tokens``: free; Vertex
        AI's ``:countTokens`` too). The messages are sent as contents (the Gemini API counts no system instruction).
        Raises a scrubbed ``ProviderError``."""
        label = f"{self.provider} ({self.model})"
        contents = [types.Content(role="model" if m.role == "assistant" else "user", parts=[types.Part(text=m.content)])
                    for m in request.messages]

        def send() -> Any:
            error: ProviderError | None = None
            try:
                return self._client.models.count_tokens(model=self.model, contents=contents)
            except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
                error = map_gemini_error(exc, label, self.timeout_s, self._secrets)
            raise error

        return int(self.guard.send(label, send, tokens=lambda: 0).total_tokens or 0)

    def completion_from_response(self, response: Any) -> Completion:
        """A Completion from a ``GenerateContentResponse`` (a batch job's inlined response)."""
        return self._completion(response, 0.0)

    @property
    def client(self) -> genai.Client:
        """The SDK client (the batch engine creates and polls batch jobs with it)."""
        return self._client

    def map_error(self, exc: BaseException) -> ProviderError:
        """An SDK exception as a scrubbed ProviderError (for the batch engine's job calls)."""
        return map_gemini_error(exc, f"{self.provider} ({self.model})", self.timeout_s, self._secrets)

    def error_for(self, status: int, message: str) -> ProviderError:
        """A scrubbed ProviderError for one failed request inside a batch job."""
        kind, retryable = kind_for_status(status)
        return provider_error(f"{self.provider} ({self.model})", f"HTTP {status}: {message}", kind=kind, status=status, retryable=retryable, secrets=self._secrets)

    def _generate(self, request: LLMRequest, level: int) -> Any:
        """One ``generate_content`` call with the structured output of ``level``; errors as ``ProviderError``."""
        label = f"{self.provider} ({self.model})"
        contents, generation_config = self.request_parts(request, level)

        def send() -> Any:
            error: ProviderError | None = None
            try:
                return self._client.models.generate_content(model=self.model, contents=contents, config=generation_config)
            except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
                if FORMAT_LEVELS[level] == RESPONSE_SCHEMA and type(exc).__name__ == "ValidationError":
                    # The SDK could not turn our schema into its Schema type: not expressible at this level.
                    error = provider_error(label, f"response_schema not expressible ({type(exc).__name__})", kind="bad_request", status=400, secrets=self._secrets)
                else:
                    error = map_gemini_error(exc, label, self.timeout_s, self._secrets)
            raise error  # outside the except block: the SDK exception (which may quote the key) is not chained

        return self.guard.send(label, send, tokens=lambda: estimate_tokens(request), used=total_tokens)

    def _completion(self, response: Any, latency: float) -> Completion:
        candidates = list(response.candidates or [])
        if not candidates:
            feedback = getattr(response, "prompt_feedback", None)
            reason = getattr(feedback, "block_reason", None)
            if reason:
                raise provider_error(f"{self.provider} ({self.model})", f"prompt blocked ({reason})", kind="bad_request", secrets=self._secrets)
            raise provider_error(f"{self.provider} ({self.model})", "response has no candidates", kind="malformed_response", secrets=self._secrets)
        candidates.sort(key=lambda c: c.index or 0)
        texts = []
        for cand in candidates:
            parts = (cand.content.parts if cand.content is not None else None) or []
            texts.append("".join(p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False)))
        meta = response.usage_metadata
        usage = Usage()
        if meta is not None:
            # Thinking tokens are billed as output tokens.
            usage = Usage(
                int(meta.prompt_token_count or 0),
                int(meta.candidates_token_count or 0) + int(meta.thoughts_token_count or 0),
                int(meta.cached_content_token_count or 0),
            )
        raw = {"model_version": getattr(response, "model_version", None), "finish_reasons": [str(c.finish_reason) for c in candidates]}
        return Completion(texts=texts, provider=self.provider, model=self.model, usage=usage, latency_s=latency, raw=raw)


def openapi_schema(schema: Any) -> Any:
    """Our JSON schema in the OpenAPI subset ``response_schema`` accepts: a ``["integer", "null"]`` type
    becomes ``integer`` + ``nullable``, and integer enums (``[0, 1]``) become ``minimum`` / ``maximum``
    (its enums are strings only)."""
    if isinstance(schema, list):
        return [openapi_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, list):
            kinds = [k for k in value if k != "null"]
            out["type"] = kinds[0] if kinds else "null"
            if "null" in value and kinds:
                out["nullable"] = True
        elif key == "enum" and not all(isinstance(v, str) for v in value):
            numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if numbers and len(numbers) == len(value):
                out.setdefault("minimum", min(numbers))
                out.setdefault("maximum", max(numbers))
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: openapi_schema(sub) for name, sub in value.items()}
        else:
            out[key] = openapi_schema(value)
    return out


def total_tokens(response: Any) -> int:
    """Tokens a Gemini answer used (what the tokens-per-minute limit settles on)."""
    meta = getattr(response, "usage_metadata", None)
    return int(getattr(meta, "total_token_count", 0) or 0) if meta is not None else 0


