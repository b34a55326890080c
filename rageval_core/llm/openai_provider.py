"""OpenAI and OpenAI-compatible chat completions (Ollama, vLLM, llama.cpp server, LM Studio).

Structured output is sent as ``response_format`` type ``json_schema`` (strict). Some servers reject
it — llama.cpp's answers HTTP 500 — so the openai-compatible provider falls back to
``{"type": "json_object", "schema": ...}`` and then to plain ``json_object``; the openai provider, whose
strict mode may refuse a schema keyword with a 400, first retries with ``strict: false``. Each client
remembers which level worked so later calls do not pay for the rejection again. The SDK's own retries are off (``max_retries=0``); retrying is the
retry wrapper's job, so nothing retries twice.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from typing import Any

import openai

from rageval_core.llm.base import Completion, LLMRequest, ProviderError
from rageval_core.llm.http_errors import (
    kind_for_status,
    parse_retry_after,
    provider_error,
    transport_kind,
)
from rageval_core.types import Usage

# Structured-output levels, best first.
JSON_SCHEMA = "json_schema"
JSON_SCHEMA_LOOSE = "json_schema (strict off)"
JSON_OBJECT_WITH_SCHEMA = "json_object+schema"
JSON_OBJECT = "json_object"
# OpenAI itself may refuse a schema keyword in strict mode: relax strictness before giving up the schema.
# Local servers (llama.cpp) refuse json_schema altogether but enforce a schema given with json_object.
FORMAT_LEVELS: dict[str, tuple[str, ...]] = {
    "openai": (JSON_SCHEMA, JSON_SCHEMA_LOOSE, JSON_OBJECT),
    "openai-compatible": (JSON_SCHEMA, JSON_OBJECT_WITH_SCHEMA, JSON_OBJECT),
}
_SCHEMA_ERROR_WORDS = re.compile(r"response_format|json_schema|schema|grammar", re.IGNORECASE)


def response_format(level: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` body for one structured-output level."""
    if level in (JSON_SCHEMA, JSON_SCHEMA_LOOSE):
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "answer"
        return {"type": "json_schema", "json_schema": {"name": safe, "schema": schema, "strict": level == JSON_SCHEMA}}
    if level == JSON_OBJECT_WITH_SCHEMA:
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


class OpenAILLM:
    """Synchronous, thread-safe chat completions through the ``openai`` SDK."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        provider: str = "openai",
    ) -> None:
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._secrets = (api_key,)
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)
        self._levels = FORMAT_LEVELS.get(provider, FORMAT_LEVELS["openai-compatible"])
        self._level = 0
        self._level_lock = threading.Lock()
        # Fallbacks after errors that do not name the format (a bare HTTP 500) since the last clean call at
        # the current level: one could be a transient failure, so the level is only lowered for good at two.
        self._unexplained = 0

    def __repr__(self) -> str:
        return f"OpenAILLM(provider={self.provider!r}, model={self.model!r}, base_url={self.base_url!r})"

    @property
    def structured_output(self) -> str:
        """The structured-output level this client currently uses (after any fallback)."""
        return self._levels[self._level]

    def complete(self, request: LLMRequest) -> Completion:
        started = time.perf_counter()
        level = start = self._level
        first_error: ProviderError | None = None
        explained = True
        while True:
            try:
                response = self._create(request, level)
                break
            except ProviderError as err:
                if request.schema is None or level + 1 >= len(self._levels) or not self._is_format_rejection(err):
                    raise (first_error if first_error is not None and err.kind != "rate_limit" else err) from None
                first_error = first_error or err
                if _SCHEMA_ERROR_WORDS.search(str(err)):
                    self._remember(level + 1)  # the server said so explicitly
                else:
                    explained = False
                level += 1
        if request.schema is not None:
            self._settle_level(start, level, explained)
        completion = self._completion(response, request, time.perf_counter() - started)
        if len(completion.texts) < request.n:
            self._fill_choices(completion, request, level)
            completion.latency_s = time.perf_counter() - started
        return completion

    def _fill_choices(self, completion: Completion, request: LLMRequest, level: int) -> None:
        """Servers that ignore ``n`` (llama.cpp, Ollama) answer one choice: ask again for the rest."""
        single = dataclasses.replace(request, n=1)
        missing = request.n - len(completion.texts)
        for _ in range(missing):
            extra = self._completion(self._create(single, level), single, 0.0)
            completion.texts.append(extra.text)
            completion.usage = completion.usage + extra.usage
        if isinstance(completion.raw, dict):
            completion.raw["n_filled_by_extra_calls"] = missing

    def _remember(self, level: int) -> None:
        with self._level_lock:
            self._level = max(self._level, level)

    def _settle_level(self, start: int, level: int, explained: bool) -> None:
        """After a structured call that succeeded at ``level`` having started at ``start``: keep a fallback
        the server explained at once; one it did not explain (a bare 500, perhaps a transient failure)
        only when it happens again before a clean call, so a single hiccup does not cost the schema for good."""
        with self._level_lock:
            if level == start:
                if level == self._level:
                    self._unexplained = 0
                return
            if not explained:
                self._unexplained += 1
                if self._unexplained < 2:
                    return
            self._level = max(self._level, level)
            self._unexplained = 0

    def _is_format_rejection(self, err: ProviderError) -> bool:
        """Could this error be the server refusing our ``response_format``?"""
        if err.status in (400, 422) and _SCHEMA_ERROR_WORDS.search(str(err)):
            return True
        # llama.cpp-style servers answer 500 (or 501) to an unsupported response_format.
        return self.provider == "openai-compatible" and err.status in (400, 422, 500, 501)

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
            key = "max_completion_tokens" if self.provider == "openai" else "max_tokens"
            kwargs[key] = request.max_output_tokens
        if request.schema is not None:
            chosen = self._level if level is None else level
            kwargs["response_format"] = response_format(self._levels[chosen], request.task, dict(request.schema))
        return kwargs

    def completion_from_body(self, body: dict[str, Any], request: LLMRequest | None = None) -> Completion:
        """A Completion from a chat-completion JSON body (a Batch API output line's ``response.body``)."""
        try:
            response = openai.types.chat.ChatCompletion.model_validate(body)
        except ValueError as exc:
            raise provider_error(f"{self.provider} ({self.model})", f"malformed batch answer ({type(exc).__name__})", kind="malformed_response", secrets=self._secrets) from None
        return self._completion(response, request, 0.0)

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
        error: ProviderError | None = None
        try:
            return self._client.chat.completions.create(**kwargs)
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

    def _completion(self, response: Any, request: LLMRequest | None, latency: float) -> Completion:
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
        raw = {"id": getattr(response, "id", None), "model": getattr(response, "model", None), "structured_output": self.structured_output}
        return Completion(texts=texts, provider=self.provider, model=self.model, usage=usage, latency_s=latency, raw=raw)


def _error_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            code = error.get("code") or error.get("type")
            return f"{error['message']}" + (f" ({code})" if code else "")
        return json.dumps(body, ensure_ascii=False)[:300]
    return str(getattr(exc, "message", "") or exc)
