"""The fake LLM server's wire formats for OpenAI (and Azure OpenAI) and Gemini (and Vertex AI): a request body read
into a ``FakeRequest``, answers and embeddings written as each API writes them, and errors and injected faults in
each API's error shape (Anthropic's live in ``anthropic``). Pure functions of what was received; the server
(``server``) decides what to answer and sends it.
"""

from __future__ import annotations

import base64
import struct
import time
from collections.abc import Mapping
from typing import Any, Protocol

from rageval_core.testing.fake_llm import anthropic
from rageval_core.testing.fake_llm.wire import (
    AZURE_PATH,
    GEMINI_PATH,
    BadRequest,
    FakeRequest,
    Fault,
    fake_embedding,
    gemini_text,
    openai_text,
    tokens,
)


class Sender(Protocol):
    """What sends an answer: the server's request handler."""

    def send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None: ...

    def send_raw(self, status: int, data: bytes, headers: Mapping[str, str] | None = None,
                 content_type: str = "application/json") -> None: ...


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a client sent, in whichever header its API uses."""
    for name in ("x-goog-api-key", "api-key", "x-api-key"):  # Gemini, Azure OpenAI, Anthropic
        if name in headers:
            return headers[name]
    auth = headers.get("authorization", "")
    return auth[7:] if auth.lower().startswith("bearer ") else None


def parse(api: str, path: str, body: Any, headers: Mapping[str, str]) -> FakeRequest:
    """A request body as the responder sees it; ``ValueError`` for one the API would refuse with a 400."""
    if not isinstance(body, dict) or "_unparsed" in body:
        raise ValueError("request body is not a JSON object")
    if api == "anthropic":
        return anthropic.parse(path, body, headers)
    if api == "gemini":
        match = GEMINI_PATH.match(path)
        assert match is not None
        messages: list[tuple[str, str]] = []
        system = body.get("systemInstruction") or body.get("system_instruction")
        if isinstance(system, dict):
            messages.append(("system", gemini_text(system.get("parts"))))
        for content in body.get("contents") or []:
            role = "assistant" if content.get("role") == "model" else "user"
            messages.append((role, gemini_text(content.get("parts"))))
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        n = int(config.get("candidateCount") or 1)
        return FakeRequest("gemini", path, match.group("model"), tuple(messages), schema, n, body, dict(headers))
    azure = AZURE_PATH.match(path)
    if azure is not None:  # the deployment answers, whatever the body's model says
        body = {**body, "model": azure.group("deployment")}
    if path.endswith("/chat/completions"):
        messages = [(str(m.get("role", "user")), openai_text(m.get("content"))) for m in body.get("messages") or []]
        fmt = body.get("response_format") or {}
        schema = None
        if fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema")
        elif fmt.get("type") == "json_object":
            schema = fmt.get("schema") or {"type": "object"}
        return FakeRequest("openai", path, str(body.get("model", "")), tuple(messages), schema, int(body.get("n") or 1), body, dict(headers))
    if path.endswith("/responses"):
        messages = [("system", str(body["instructions"]))] if body.get("instructions") else []
        items = body.get("input")
        for m in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
            messages.append((str(m.get("role", "user")), openai_text(m.get("content"))))
        return FakeRequest("openai", path, str(body.get("model", "")), tuple(messages), None, 1, body, dict(headers))
    if path.endswith("/embeddings"):
        given = body.get("input")
        texts = [given] if isinstance(given, str) else list(given or [])
        return FakeRequest("openai", path, str(body.get("model", "")), tuple(("user", str(t)) for t in texts), None, 1, body, dict(headers))
    raise ValueError(f"unknown endpoint {path}")


def chat_payload(request: FakeRequest, texts: list[str], prompt_tokens: int, completion_tokens: int, cached: int,
                 number: int) -> dict[str, Any]:
    """A chat answer holding ``texts`` (one choice each) as Gemini or OpenAI writes it; ``number`` names it."""
    if request.api == "gemini":
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": t}]}, "finishReason": "STOP", "index": i}
                for i, t in enumerate(texts)
            ],
            "usageMetadata": {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": completion_tokens,
                "totalTokenCount": prompt_tokens + completion_tokens,
                **({"cachedContentTokenCount": cached} if cached else {}),  # Gemini omits it when 0
            },
            "modelVersion": request.model,
            "responseId": f"fake-{number}",
        }
    if request.path.endswith("/responses"):
        return responses_payload(request, texts[0], prompt_tokens, completion_tokens, cached)
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop", "logprobs": None}
            for i, t in enumerate(texts)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def responses_payload(request: FakeRequest, text: str, prompt_tokens: int, completion_tokens: int, cached: int) -> dict[str, Any]:
    """An OpenAI Responses API object holding ``text`` as its one output message (``client.responses.create`` and
    LangChain's ``ChatOpenAI(use_responses_api=True)`` read it so)."""
    stamp = int(time.time())
    return {
        "id": f"resp_fake{stamp}", "object": "response", "created_at": stamp, "status": "completed", "model": request.model,
        "output": [{"type": "message", "id": f"msg_fake{stamp}", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "error": None, "incomplete_details": None, "instructions": request.body.get("instructions"), "metadata": {},
        "parallel_tool_calls": True, "temperature": request.body.get("temperature", 1.0), "tool_choice": "auto", "tools": [],
        "top_p": 1.0, "text": {"format": {"type": "text"}},
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens,
                  "input_tokens_details": {"cached_tokens": cached}, "output_tokens_details": {"reasoning_tokens": 0}},
    }


def vertex_predict(model: str, body: dict[str, Any], dim: int) -> dict[str, Any]:
    """Vertex AI's text-embedding ``:predict`` (what google-genai sends for ``embed_content`` with
    ``vertexai=True``); gemini-embedding models take one instance a request there."""
    instances = body.get("instances") or []
    if model.startswith("gemini-embedding") and len(instances) > 1:
        raise BadRequest(f"{model} accepts only 1 instance per request, got {len(instances)}")
    return {"predictions": [
        {"embeddings": {"values": fake_embedding(str(i.get("content", "")), dim),
                        "statistics": {"token_count": tokens(str(i.get("content", ""))), "truncated": False}}}
        for i in instances
    ]}


def embedding_answer(api: str, path: str, body: dict[str, Any], dim: int) -> dict[str, Any]:
    """Embeddings of the request's texts (``fake_embedding``), in Gemini's or OpenAI's shape (float or base64)."""
    if api == "gemini":
        if path.endswith(":batchEmbedContents"):
            texts = [gemini_text((r.get("content") or {}).get("parts")) for r in body.get("requests") or []]
            return {"embeddings": [{"values": fake_embedding(t, dim)} for t in texts]}
        text = gemini_text((body.get("content") or {}).get("parts"))
        return {"embedding": {"values": fake_embedding(text, dim)}}
    given = body.get("input")
    texts = [given] if isinstance(given, str) else list(given or [])
    data = []
    for i, text in enumerate(texts):
        vec = fake_embedding(str(text), dim)
        if body.get("encoding_format") == "base64":
            value: Any = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
        else:
            value = vec
        data.append({"object": "embedding", "index": i, "embedding": value})
    count = sum(tokens(str(t)) for t in texts)
    return {"object": "list", "data": data, "model": body.get("model", ""), "usage": {"prompt_tokens": count, "total_tokens": count}}


def send_error(h: Sender, api: str, status: int, message: str, headers: Mapping[str, str] | None = None,
               details: list[Any] | None = None) -> None:
    """An error in the API's own shape."""
    if api == "anthropic":
        h.send_json(status, anthropic.error_body(status, message), headers)
    elif api == "gemini":
        names = {400: "INVALID_ARGUMENT", 408: "DEADLINE_EXCEEDED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        error: dict[str, Any] = {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}
        if details:
            error["details"] = details
        h.send_json(status, {"error": error}, headers)
    else:
        kind = "rate_limit_exceeded" if status == 429 else ("server_error" if status >= 500 else "invalid_request_error")
        h.send_json(status, {"error": {"message": message, "type": kind, "code": status}}, headers)


def send_fault(h: Sender, api: str, fault: Fault, presented: str | None, authorization: str = "") -> int:
    """An injected fault answered as the API would fail; returns the status sent."""
    if fault.kind == "malformed":
        h.send_raw(200, b'{"choices": [ {"message": this is not json')
        return 200
    if fault.kind == "rate_limit":
        headers: dict[str, str] = {}
        details = None
        if fault.retry_after is not None:
            if api == "gemini" and fault.status != 429:
                details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{fault.retry_after:g}s"}]
            else:
                headers["Retry-After"] = f"{fault.retry_after:g}"
        send_error(h, api, 429, fault.message or "Rate limit reached. Please try again later.", headers, details)
        return 429
    if fault.kind == "echo_key":
        status = fault.status or 400
        send_error(h, api, status, f"invalid request made with key {presented} (Authorization: {authorization})")
        return status
    status = {"server_error": 500, "request_timeout": 408}.get(fault.kind, fault.status or 500)
    send_error(h, api, status, fault.message or f"injected fault {fault.kind}")
    return status


def refusal(api: str, path: str, body: Mapping[str, Any], flags: Mapping[str, bool]) -> tuple[int, Any] | None:
    """``(status, error)`` when a server configured to refuse a structured-output field gets one (``flags``: the
    server's ``reject_*`` settings), else None. ``error`` is a message for ``send_error`` or a ready JSON body."""
    if api == "gemini" and path.endswith(":generateContent"):
        config = body.get("generationConfig") or {}
        for flag, field_name in (("reject_response_json_schema", "responseJsonSchema"), ("reject_response_schema", "responseSchema")):
            if flags[flag] and field_name in config:
                # What the Gemini API answers for a generation_config field it does not know.
                return 400, f'Invalid JSON payload received. Unknown name "{field_name}" at \'generation_config\': Cannot find field.'
    if api == "anthropic" and path == "/v1/messages" and flags["reject_output_format"] and (body.get("output_config") or {}).get("format"):
        return 400, "output_config.format: structured outputs (json_schema) are not supported on this model"
    if api == "openai" and path.endswith("/chat/completions"):
        fmt = body.get("response_format") or {}
        if flags["reject_strict_schema"] and fmt.get("type") == "json_schema" and (fmt.get("json_schema") or {}).get("strict"):
            return 400, {"error": {"code": "invalid_request_error", "type": "invalid_request_error", "param": "response_format",
                                   "message": "Invalid schema for response_format 'answer': In context=(), 'minimum' is not permitted."}}
        if flags["reject_json_schema"] and fmt.get("type") == "json_schema":
            # What llama-cpp-python's server does with response_format json_schema.
            return 500, {"error": {"code": 500, "message": "Unsupported response_format type: json_schema", "type": "server_error"}}
        if flags["reject_json_object_schema"] and fmt.get("type") == "json_object" and "schema" in fmt:
            return 400, {"error": {"code": 400, "message": "response_format: unexpected key 'schema'", "type": "invalid_request_error"}}
    return None


def auth_failure(h: Sender, api: str) -> int:
    """What each API answers a request without the right key; returns the status sent."""
    if api == "anthropic":
        h.send_json(401, anthropic.error_body(401, "invalid x-api-key"))
        return 401
    if api == "openai":
        h.send_json(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}})
        return 401
    h.send_json(400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
                                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}})
    return 400
