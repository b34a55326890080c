"""Claude through the official ``anthropic`` SDK: structured output, explicit prompt caching, token counting.

Structured output levels, best first: Claude's JSON-schema output (``output_config.format`` of type
``json_schema``, the schema passed through the SDK's ``transform_schema``, which moves the keywords Claude does
not enforce, such as ``minimum``, into descriptions; the parser still checks them), then tool use with the
schema as the tool's ``input_schema`` and ``tool_choice`` forcing that tool (models or endpoints without
JSON-schema output), then the plain prompt (every template already asks for JSON). A 400 that names the
format lowers the level, remembered per endpoint + model (``structured.LADDER``) as for the other providers.
Claude has no OpenAI-style ``response_format``, which is why its OpenAI-compatible endpoint loses it.

Prompt caching is explicit on Claude: a ``cache_control`` breakpoint marks where the cached prefix ends. Every
step template puts its fixed instructions (and a judge its rubric) in the system message and the row's texts
after it, so the breakpoint goes on the system prompt, when it is at least the model's minimum cacheable length
(``prompt_cache.anthropic_min_tokens``; a shorter prefix is never cached, and marking it would change
nothing). Usage reports ``cache_read_input_tokens`` (billed at the cached rate) and
``cache_creation_input_tokens`` (billed at ``cache_write``, 1.25x input), both counted in the input tokens here.

Claude answers one choice a request: ``n`` > 1 is sent as n requests (the workbench's steps ask for n = 1). The
Messages API of this SDK takes no ``temperature`` or ``seed``: a judge's repeats at a temperature are sent as
they are, and differ only by Claude's own sampling.
The SDK's retries are off (``max_retries=0``); the retry wrapper honours ``Retry-After`` of a 429 or 529.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

import anthropic

from rageval_core.llm.api_provider import APIProvider
from rageval_core.llm.base import Completion, LLMRequest, ProviderError
from rageval_core.llm.prompt_cache import anthropic_min_tokens
from rageval_core.llm.structured import FormatLadder
from rageval_core.llm.transport.guard import RequestGuard, http_client
from rageval_core.llm.transport.http_errors import kind_for_status, parse_retry_after, provider_error, transport_kind
from rageval_core.llm.transport.ratelimit import estimate_tokens
from rageval_core.llm.transport.sdk_clients import extra_headers
from rageval_core.core.types import Usage

__all__ = ["AnthropicLLM", "DEFAULT_MAX_TOKENS", "FORMAT_LEVELS", "JSON_SCHEMA_OUTPUT", "PROMPT_ONLY", "TOOL_USE"]

JSON_SCHEMA_OUTPUT = "output_config json_schema"
TOOL_USE = "tool_use input_schema"
PROMPT_ONLY = "prompt only"
FORMAT_LEVELS: tuple[str, ...] = (JSON_SCHEMA_OUTPUT, TOOL_USE, PROMPT_ONLY)
DEFAULT_MAX_TOKENS = 4096  # Claude requires max_tokens; the steps' answers are far shorter
TOOL_NAME = "answer"


def anthropic_base_url(base_url: str | None) -> str | None:
    """``--base-url``, else ``ANTHROPIC_BASE_URL`` (as the SDK reads it), else None (api.anthropic.com)."""
    return base_url or (os.environ.get("ANTHROPIC_BASE_URL") or "").strip() or None


class AnthropicLLM(APIProvider):
    """Synchronous, thread-safe ``messages.create`` calls."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str = "claude-haiku-4-5",
        base_url: str | None = None,
        timeout_s: float = 60.0,
        guard: RequestGuard | None = None,
        ladder: FormatLadder | None = None,
    ) -> None:
        url = anthropic_base_url(base_url)
        super().__init__(provider="anthropic", api_key=api_key, model=model, base_url=url, timeout_s=timeout_s,
                         levels=FORMAT_LEVELS, guard=guard, ladder=ladder)
        self.cache_min_tokens = anthropic_min_tokens(model)
        self._client = anthropic.Anthropic(api_key=api_key, base_url=url, timeout=timeout_s, max_retries=0,
                                           default_headers=extra_headers() or None, http_client=http_client(timeout_s, url))

    def __repr__(self) -> str:
        return f"AnthropicLLM(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def client(self) -> anthropic.Anthropic:
        """The SDK client (the batch engine creates and reads Message Batches with it)."""
        return self._client

    def complete(self, request: LLMRequest) -> Completion:
        started = time.perf_counter()
        single = request if request.n == 1 else dataclasses.replace(request, n=1)
        response, level, fallbacks = self._send_with_fallback(single, self._create)
        completion = self._completion(response, level if request.schema is not None else None)
        for _ in range(request.n - 1):  # Claude has no n: one request a choice
            extra = self._completion(self._create(single, level), level if request.schema is not None else None)
            completion.texts.extend(extra.texts)
            completion.usage = completion.usage + extra.usage
        completion.latency_s = time.perf_counter() - started
        if fallbacks:
            completion.raw["format_rejections"] = fallbacks
        return completion

    def request_body(self, request: LLMRequest, level: int | None = None) -> dict[str, Any]:
        """The ``messages.create`` parameters for ``request`` at a structured-output level (default: the current
        one); the synchronous call, a Message Batch request and a token count send the same."""
        chosen = self._ladder.level(self._key) if level is None else level
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens or DEFAULT_MAX_TOKENS,
            "messages": [{"role": "assistant" if m.role == "assistant" else "user", "content": m.content}
                         for m in request.messages if m.role != "system"],
        }  # no temperature or seed: the Messages API of this SDK (2.17) has neither; Claude samples as it does
        if system:
            block: dict[str, Any] = {"type": "text", "text": system}
            if estimate_tokens_text(system) >= self.cache_min_tokens:
                block["cache_control"] = {"type": "ephemeral"}  # the stable prefix every call of this step shares
            body["system"] = [block]
        if request.schema is not None:
            if FORMAT_LEVELS[chosen] == JSON_SCHEMA_OUTPUT:
                body["output_config"] = {"format": {"type": "json_schema", "schema": self._output_schema(request.schema)}}
            elif FORMAT_LEVELS[chosen] == TOOL_USE:
                body["tools"] = [{"name": TOOL_NAME, "description": f"Give the {request.task} answer.", "input_schema": dict(request.schema)}]
                body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        return body

    def _output_schema(self, schema: Any) -> dict[str, Any]:
        """Our schema as Claude's JSON-schema output takes it (``transform_schema`` after turning type lists into
        ``anyOf``); one the SDK cannot express is a 400-class rejection of the format, so the call goes down to
        tool use like a server's refusal would."""
        error: ProviderError | None = None
        try:
            return dict(anthropic.transform_schema(_any_of_types(dict(schema))))
        except Exception as exc:  # noqa: BLE001 - the SDK could not express the schema
            error = provider_error(f"anthropic ({self.model})", f"json_schema not expressible for output_config ({type(exc).__name__})",
                                   kind="bad_request", status=400, secrets=self._secrets)
        raise error

    def count_tokens(self, request: LLMRequest) -> int:
        """Input tokens of ``request`` by Claude's own tokenizer (``/v1/messages/count_tokens``; free, rate
        limited apart from messages). Raises a scrubbed ``ProviderError``."""
        body = {k: v for k, v in self.request_body(request).items() if k != "max_tokens"}
        label = f"anthropic ({self.model})"

        def send() -> Any:
            error: ProviderError | None = None
            try:
                return self._client.messages.count_tokens(**body)
            except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
                error = self.map_error(exc)
            raise error

        return int(self.guard.send(label, send, tokens=lambda: 0).input_tokens)

    def completion_from_message(self, message: Any) -> Completion:
        """A Completion from a ``Message`` (a Message Batch result), read at the level it was sent with."""
        return self._completion(message, None)

    def map_error(self, exc: BaseException) -> ProviderError:
        """An SDK exception as a scrubbed ProviderError (public for the batch engine)."""
        label = f"anthropic ({self.model})"
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            kind, retryable = kind_for_status(status)
            retry_after = parse_retry_after(dict(exc.response.headers)) if exc.response is not None else None
            return provider_error(label, f"HTTP {status}: {_error_detail(exc)}", kind=kind, status=status, retry_after=retry_after,
                                  retryable=retryable, secrets=self._secrets)
        transport = transport_kind(exc)
        if transport == "timeout":
            return provider_error(label, f"no answer within {self.timeout_s:g} s", kind="timeout", retryable=True, secrets=self._secrets)
        if transport == "connection":
            return provider_error(label, f"cannot reach {self.base_url or 'api.anthropic.com'} ({type(exc).__name__})", kind="connection",
                                  retryable=True, secrets=self._secrets)
        if isinstance(exc, (ValueError, anthropic.APIResponseValidationError)):
            return provider_error(label, f"malformed response body ({type(exc).__name__}: {exc})", kind="malformed_response", secrets=self._secrets)
        return provider_error(label, f"{type(exc).__name__}: {exc}", kind="bad_request", secrets=self._secrets)

    def error_for(self, status: int, message: str) -> ProviderError:
        """A scrubbed ProviderError for one failed request inside a Message Batch."""
        kind, retryable = kind_for_status(status)
        return provider_error(f"anthropic ({self.model})", f"HTTP {status}: {message}", kind=kind, status=status, retryable=retryable, secrets=self._secrets)

    def _create(self, request: LLMRequest, level: int) -> Any:
        body = self.request_body(request, level)

        def send() -> Any:
            error: ProviderError | None = None
            try:
                return self._client.messages.create(**body)
            except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
                error = self.map_error(exc)
            raise error  # outside the except block: the SDK exception (which may quote the key) is not chained

        return self.guard.send(f"anthropic ({self.model})", send, tokens=lambda: estimate_tokens(request), used=_total_tokens)

    def _completion(self, message: Any, level: int | None) -> Completion:
        blocks = list(getattr(message, "content", None) or [])
        tool_inputs = [b.input for b in blocks if getattr(b, "type", None) == "tool_use"]
        if tool_inputs:
            import json

            text = json.dumps(tool_inputs[0], ensure_ascii=False)
        else:
            text = "".join(str(getattr(b, "text", "") or "") for b in blocks if getattr(b, "type", None) == "text")
        if not blocks:
            raise provider_error(f"anthropic ({self.model})", f"response has no content (stop_reason {getattr(message, 'stop_reason', None)})",
                                 kind="malformed_response", secrets=self._secrets)
        raw = {"id": getattr(message, "id", None), "model": getattr(message, "model", None), "stop_reason": getattr(message, "stop_reason", None),
               "structured_output": None if level is None else FORMAT_LEVELS[level]}
        return Completion(texts=[text], provider=self.provider, model=self.model, usage=_usage(getattr(message, "usage", None)), raw=raw)


def _any_of_types(schema: Any) -> Any:
    """``{"type": ["integer", "null"]}`` as ``{"anyOf": [{"type": "integer"}, {"type": "null"}]}`` (the form
    ``transform_schema`` reads), throughout the schema."""
    if isinstance(schema, list):
        return [_any_of_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _any_of_types(v) if k != "enum" else v for k, v in schema.items()}
    kinds = out.get("type")
    if isinstance(kinds, list):
        rest = {k: v for k, v in out.items() if k != "type"}
        return {"anyOf": [{**rest, "type": kind} if kind != "null" else {"type": "null"} for kind in kinds]}
    return out


def _usage(usage: Any) -> Usage:
    """Claude's ``input_tokens`` exclude the cached and written prefix, so all three add up to the prompt; reads are
    the cached input, writes ``cache_write_tokens`` (both of the input tokens here)."""
    if usage is None:
        return Usage()
    plain = int(getattr(usage, "input_tokens", 0) or 0)
    read = int(getattr(usage, "cache_read_input_tokens", 0) or 0)
    written = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
    return Usage(plain + read + written, int(getattr(usage, "output_tokens", 0) or 0), read, written)


def _total_tokens(message: Any) -> int:
    return _usage(getattr(message, "usage", None)).tokens


def estimate_tokens_text(text: str) -> int:
    """A pre-call token count of ``text`` (as ``ratelimit.estimate_tokens`` counts prompts: ASCII / 4, one per other character)."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return ascii_chars // 4 + (len(text) - ascii_chars)


def _error_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return f"{error['message']}" + (f" ({error['type']})" if error.get("type") else "")
    return str(getattr(exc, "message", "") or exc)
