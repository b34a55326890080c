"""OpenAI and OpenAI-compatible chat completions (Ollama, vLLM, llama.cpp server, LM Studio).

Structured output is sent as ``response_format`` type ``json_schema`` (strict). A server that rejects the
format (``structured.is_format_rejection``: a 400 naming it, or llama.cpp's 500 "Unsupported
response_format type: json_schema") gets the same call one level down — the openai provider relaxes
``strict`` first, openai-compatible servers get ``{"type": "json_object", "schema": ...}`` and then plain
``json_object`` — and the drop is remembered per provider + endpoint + model (``structured.LADDER``) and
tried upward again later. A bare 500, a timeout or a 429 never lowers the level. Every HTTP request (the
first, each fallback, each refill of missing choices) passes the ``RequestGuard``: its own rate-limit slot,
the host breaker and the per-call deadline. The SDK's own retries are off (``max_retries=0``); retrying is
the retry wrapper's job, so nothing retries twice.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from typing import Any

import openai
from openai import RequestOptions
from openai.types.chat import ChatCompletion

from rageval_core.llm.api_provider import APIProvider
from rageval_core.llm.base import Completion, LLMRequest, ProviderError
from rageval_core.llm.transport import warm
from rageval_core.llm.transport.guard import RequestGuard
from rageval_core.llm.transport.sdk_clients import openai_client
from rageval_core.llm.transport.http_errors import (
    kind_for_status,
    parse_retry_after,
    provider_error,
    transport_kind,
)
from rageval_core.llm.transport.ratelimit import estimate_tokens
from rageval_core.llm.structured import FormatLadder
from rageval_core.core.types import Usage

# What ``chat.completions.create`` passes as request options (``_send``).
_CHAT_OPTIONS: RequestOptions = {"security": {"bearer_auth": True}}

# Structured-output levels, best first.
JSON_SCHEMA = "json_schema"
JSON_SCHEMA_LOOSE = "json_schema (strict off)"
JSON_OBJECT_WITH_SCHEMA = "json_object+schema"
JSON_OBJECT = "json_object"
# OpenAI itself may refuse a schema keyword in strict mode: relax strictness before giving up the schema.
# Local servers (llama.cpp) refuse json_schema altogether but enforce a schema given with json_object.
FORMAT_LEVELS: dict[str, tuple[str, ...]] = {
    "openai": (JSON_SCHEMA, JSON_SCHEMA_LOOSE, JSON_OBJECT),
    "azure-openai": (JSON_SCHEMA, JSON_SCHEMA_LOOSE, JSON_OBJECT),
    "openai-compatible": (JSON_SCHEMA, JSON_OBJECT_WITH_SCHEMA, JSON_OBJECT),
}


def response_format(level: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` body for one structured-output level."""
    if level in (JSON_SCHEMA, JSON_SCHEMA_LOOSE):
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "answer"
        return {"type": "json_schema", "json_schema": {"name": safe, "schema": schema, "strict": level == JSON_SCHEMA}}
    if level == JSON_OBJECT_WITH_SCHEMA:
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


class OpenAILLM(APIProvider):
    """Synchronous, thread-safe chat completions through the ``openai`` SDK."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        provider: str = "openai",
        guard: RequestGuard | None = None,
        ladder: FormatLadder | None = None,
        client: openai.OpenAI | None = None,
    ) -> None:
        """``client`` replaces the plain ``openai.OpenAI`` one (the Azure adapter passes its ``AzureOpenAI``)."""
        super().__init__(provider=provider, api_key=api_key, model=model, base_url=base_url, timeout_s=timeout_s,
                         levels=FORMAT_LEVELS.get(provider, FORMAT_LEVELS["openai-compatible"]), guard=guard, ladder=ladder)
        self._client = client if client is not None else openai_client(api_key, base_url, timeout_s)
        warm.start("chat")  # the SDK's first-call work, done once off the request path (llm/warm.py)

    def _structured_label(self, request: LLMRequest | None, level: int | None) -> str | None:
        if request is not None and request.schema is None:
            return None
        return self._levels[self._ladder.level(self._key) if level is None else level]

    def __repr__(self) -> str:
        return f"OpenAILLM(provider={self.provider!r}, model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, request: LLMRequest) -> Completion:
        started = time.perf_counter()
        response, level, fallbacks = self._send_with_fallback(request, self._create)
        completion = self._completion(response, request, time.perf_counter() - started, level)
        if fallbacks:
            completion.raw["format_rejections"] = fallbacks
        if len(completion.texts) < request.n:
            self._fill_choices(completion, request, level)
            completion.latency_s = time.perf_counter() - started
        return completion

    def _fill_choices(self, completion: Completion, request: LLMRequest, level: int) -> None:
        """Servers that ignore ``n`` (llama.cpp, Ollama) answer one choice: ask again for the rest."""
        single = dataclasses.replace(request, n=1)
        missing = request.n - len(completion.texts)
        for _ in range(missing):
            extra = self._completion(self._create(single, level), single, 0.0, level)
            completion.texts.append(extra.text)
            completion.usage = completion.usage + extra.usage
        if isinstance(completion.raw, dict):
            completion.raw["n_filled_by_extra_calls"] = missing

    def request_body(self, request: LLMRequest, level: int | None = None) -> dict[str, Any]:
        """The chat-completions body for ``request`` at a structured-output level (default: the current one);
        the synchronous call and a Batch API request line send the same body."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
        }
        if request.n != 1:
            kwargs["n"] = request.n
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.max_output_tokens is not None:
            # Official OpenAI deprecates max_tokens; local servers mostly only know max_tokens.
            key = "max_completion_tokens" if self.provider in ("openai", "azure-openai") else "max_tokens"
            kwargs[key] = request.max_output_tokens
        if request.schema is not None:
            chosen = self._ladder.level(self._key) if level is None else level
            kwargs["response_format"] = response_format(self._levels[chosen], request.task, dict(request.schema))
        return kwargs

    def completion_from_body(self, body: dict[str, Any], request: LLMRequest | None = None) -> Completion:
        """A Completion from a chat-completion JSON body (a Batch API output line's ``response.body``)."""
        try:
            response = openai.types.chat.ChatCompletion.model_validate(body)
        except ValueError as exc:
            raise provider_error(f"{self.provider} ({self.model})", f"malformed batch answer ({type(exc).__name__})", kind="malformed_response", secrets=self._secrets) from None
        return self._completion(response, request, 0.0, None)

    @property
    def client(self) -> openai.OpenAI:
        """The SDK client (the batch engine uploads files and creates jobs with it)."""
        return self._client

    def map_error(self, exc: BaseException) -> ProviderError:
        """An SDK exception as a scrubbed ProviderError (public for the batch engine)."""
        return self._map_error(exc)

    def error_for(self, status: int, message: str) -> ProviderError:
        """A scrubbed ProviderError for one failed request inside a batch job."""
        kind, retryable = kind_for_status(status)
        return provider_error(f"{self.provider} ({self.model})", f"HTTP {status}: {message}", kind=kind, status=status, retryable=retryable, secrets=self._secrets)

    def _create(self, request: LLMRequest, level: int) -> Any:
        kwargs = self.request_body(request, level)
        return self.guard.send(
            f"{self.provider} ({self.model})", lambda: self._send(kwargs), tokens=lambda: estimate_tokens(request), used=_total_tokens
        )

    def _send(self, kwargs: dict[str, Any]) -> Any:
        """One SDK call; every failure becomes a ``ProviderError`` without the key.

        Sent through the client's documented ``post`` with the options ``chat.completions.create`` uses (bearer
        auth; Azure routes it to its deployment the same way): ``create`` first walks the body through the
        params' TypedDict annotations, 0.34–0.41 ms of CPU a call measured (3.2 ms a row of 7 calls, a tenth of
        a run's CPU), to return the same plain JSON this body already is. The answer is parsed into the SDK's
        ``ChatCompletion`` and errors are the SDK's own, as before."""
        error: ProviderError | None = None
        try:
            return self._client.post("/chat/completions", body=kwargs, cast_to=ChatCompletion, options=_CHAT_OPTIONS)
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a ProviderError without the key
            error = self._map_error(exc)
        raise error  # outside the except block: the SDK exception (which may quote the key) is not chained

    def _map_error(self, exc: BaseException) -> ProviderError:
        label = f"{self.provider} ({self.model})"
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            kind, retryable = kind_for_status(status)
            retry_after = parse_retry_after(dict(exc.response.headers)) if exc.response is not None else None
            detail = _error_detail(exc)
            if kind == "rate_limit" and "insufficient_quota" in detail:
                retryable = False  # out of credit: waiting will not help
            return provider_error(label, f"HTTP {status}: {detail}", kind=kind, status=status, retry_after=retry_after, retryable=retryable, secrets=self._secrets)
        transport = transport_kind(exc)
        if transport == "timeout":
            return provider_error(label, f"no answer within {self.timeout_s:g} s", kind="timeout", retryable=True, secrets=self._secrets)
        if transport == "connection":
            return provider_error(label, f"cannot reach {self.base_url or 'api.openai.com'} ({type(exc).__name__})", kind="connection", retryable=True, secrets=self._secrets)
        if isinstance(exc, (ValueError, openai.APIResponseValidationError)):
            return provider_error(label, f"malformed response body ({type(exc).__name__}: {exc})", kind="malformed_response", secrets=self._secrets)
        return provider_error(label, f"{type(exc).__name__}: {exc}", kind="bad_request", secrets=self._secrets)

    def _completion(self, response: Any, request: LLMRequest | None, latency: float, level: int | None) -> Completion:
        """``level`` is the structured-output level the request was sent with (None: the remembered one)."""
        choices = getattr(response, "choices", None)
        if not choices:
            raise provider_error(f"{self.provider} ({self.model})", "response has no choices", kind="malformed_response", secrets=self._secrets)
        texts = [(c.message.content or "") if c.message is not None else "" for c in sorted(choices, key=lambda c: c.index or 0)]
        usage = Usage()
        if response.usage is not None:
            details = getattr(response.usage, "prompt_tokens_details", None)
            usage = Usage(
                int(response.usage.prompt_tokens or 0),
                int(response.usage.completion_tokens or 0),
                int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0,
            )
        raw = {"id": getattr(response, "id", None), "model": getattr(response, "model", None), "structured_output": self._structured_label(request, level)}
        return Completion(texts=texts, provider=self.provider, model=self.model, usage=usage, latency_s=latency, raw=raw)


def _total_tokens(response: Any) -> int:
    """Tokens a chat response used (what the tokens-per-minute limit settles on)."""
    usage = getattr(response, "usage", None)
    return int(getattr(usage, "total_tokens", 0) or 0) if usage is not None else 0


def _error_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            code = error.get("code") or error.get("type")
            return f"{error['message']}" + (f" ({code})" if code else "")
        return json.dumps(body, ensure_ascii=False)[:300]
    return str(getattr(exc, "message", "") or exc)
