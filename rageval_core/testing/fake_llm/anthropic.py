"""Anthropic's wire format for the fake LLM server: Messages, token counting and Message Batches, as the official
``anthropic`` SDK sends and reads them.

- ``POST /v1/messages``: ``system`` (a string or text blocks, ``cache_control`` honoured), ``messages``,
  ``output_config.format`` (``json_schema``) or a forced tool (``tools[].input_schema`` + ``tool_choice``); the
  answer is a ``text`` block, or a ``tool_use`` block whose ``input`` is the JSON answer; usage with
  ``cache_creation_input_tokens`` / ``cache_read_input_tokens`` (a system prefix marked for caching is written
  the first time and read after that, per model).
- ``POST /v1/messages/count_tokens``: ``{"input_tokens": n}`` (the server's ~4 characters a token).
- ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``, ``GET .../{id}/results`` (JSON Lines),
  ``POST .../{id}/cancel``: each request answered by the server's responder when the job is created; the job
  stays ``in_progress`` for ``polls_before_done`` polls (or while the shared ``hold`` is set); a cancelled job
  ends with every unanswered request ``canceled``. ``cancel_on_create`` makes the provider cancel jobs at once
  (what a cancelled batch looks like to the client).

Errors use Anthropic's shape ``{"type": "error", "error": {"type", "message"}}``. ``reject_output_format``
answers 400 to ``output_config.format`` (a model without JSON-schema output), so the client falls back to tool use.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rageval_core.testing.fake_llm.batch import BatchOwner
from rageval_core.testing.fake_llm.wire import FakeRequest

_BATCH = re.compile(r"^/v1/messages/batches(/(?P<id>[^/]+)(?P<op>/results|/cancel)?)?$")
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 408: "timeout_error",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def is_anthropic(path: str) -> bool:
    return path == "/v1/messages" or path.startswith("/v1/messages/")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def schema_of(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    fmt = ((body.get("output_config") or {}).get("format") or {})
    if fmt.get("type") == "json_schema":
        return fmt.get("schema")
    choice = body.get("tool_choice") or {}
    for tool in body.get("tools") or []:
        if choice.get("type") == "tool" and tool.get("name") == choice.get("name"):
            return tool.get("input_schema")
    return None


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def parse(path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> FakeRequest:
    messages: list[tuple[str, str]] = []
    if body.get("system"):
        messages.append(("system", _text(body["system"])))
    for m in body.get("messages") or []:
        messages.append(("assistant" if m.get("role") == "assistant" else "user", _text(m.get("content"))))
    return FakeRequest("anthropic", path, str(body.get("model", "")), tuple(messages), schema_of(body), 1, body, dict(headers))


@dataclass
class PromptCacheState:
    """System prefixes marked with ``cache_control`` that were written, per model (Claude's cache, simplified)."""

    seen: set[tuple[str, str]] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def usage(self, body: Mapping[str, Any], tokens: Any) -> tuple[int, int]:
        """(written, read) tokens of this request's marked prefix."""
        system = body.get("system")
        if not isinstance(system, list) or not any(isinstance(b, dict) and b.get("cache_control") for b in system):
            return 0, 0
        prefix = _text(system)
        key = (str(body.get("model", "")), prefix)
        with self.lock:
            if key in self.seen:
                return 0, tokens(prefix)
            self.seen.add(key)
            return tokens(prefix), 0


def message(request: FakeRequest, text: str, prompt_tokens: int, output_tokens: int, written: int, read: int, n: int) -> dict[str, Any]:
    """A Messages API answer: a tool_use block when a tool was forced, else a text block."""
    tool = schema_of(request.body) is not None and not (request.body.get("output_config") or {}).get("format")
    if tool:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = {"text": text}
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": f"toolu_fake_{n}", "name": request.body["tool_choice"]["name"], "input": value}]
    else:
        content = [{"type": "text", "text": text}]
    return {
        "id": f"msg_fake_{n}", "type": "message", "role": "assistant", "model": request.model, "content": content,
        "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": max(0, prompt_tokens - written - read), "output_tokens": output_tokens,
                  "cache_creation_input_tokens": written, "cache_read_input_tokens": read},
    }


@dataclass
class _Job:
    id: str
    lines: list[dict[str, Any]]
    created_at: float
    polls: int = 0
    cancelled: bool = False


class AnthropicBatches:
    """Message Batches kept in memory for the server's lifetime (``server.anthropic_batches``)."""

    def __init__(self, owner: BatchOwner) -> None:
        self.owner = owner
        self.polls_before_done = 1
        self.cancel_on_create = False
        self.jobs: dict[str, _Job] = {}
        self.request_lines = 0
        self._lock = threading.Lock()

    @staticmethod
    def handles(path: str) -> bool:
        return bool(_BATCH.match(path))

    def handle(self, method: str, path: str, body: Any) -> tuple[int, bytes, str]:
        match = _BATCH.match(path)
        assert match is not None
        job_id, op = match.group("id"), match.group("op")
        if method == "POST" and job_id is None:
            return self._create(body)
        job = self.jobs.get(job_id or "")
        if job is None:
            return _json(404, error_body(404, f"no batch {job_id}"))
        if method == "POST" and op == "/cancel":
            job.cancelled = True
            return _json(200, self._batch(job))
        if op == "/results":
            if not self._ended(job):
                return _json(400, error_body(400, "batch is still in progress"))
            rows = [{"custom_id": line["key"], "result": self._result(job, line)} for line in job.lines]
            return 200, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"), "application/binary"
        with self._lock:
            job.polls += 1
        return _json(200, self._batch(job))

    def _create(self, body: Any) -> tuple[int, bytes, str]:
        lines = []
        for item in (body or {}).get("requests") or []:
            key, params = str(item.get("custom_id")), item.get("params") or {}
            if not re.match(r"^[a-zA-Z0-9_-]{1,64}$", key):
                return _json(400, error_body(400, f"requests.custom_id: {key[:80]!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"))
            with self._lock:
                self.request_lines += 1
            request = parse("/v1/messages", params, {})
            message = self.owner.batches.fail_request(request) if self.owner.batches.fail_request else None
            if message:
                lines.append({"key": key, "ok": False, "error": message})
            else:
                lines.append({"key": key, "ok": True, "body": self.owner.chat_answer(request)})
        with self._lock:
            job = _Job(f"msgbatch_fake{len(self.jobs) + 1:04d}", lines, time.time(), cancelled=self.cancel_on_create)
            self.jobs[job.id] = job
        return _json(200, self._batch(job))

    def _ended(self, job: _Job) -> bool:
        return job.cancelled or (not self.owner.batches.hold and job.polls > self.polls_before_done)

    def _result(self, job: _Job, line: Mapping[str, Any]) -> dict[str, Any]:
        if job.cancelled:
            return {"type": "canceled"}
        if not line["ok"]:
            return {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": line["error"]}}}
        return {"type": "succeeded", "message": line["body"]}

    def _batch(self, job: _Job) -> dict[str, Any]:
        ended = self._ended(job)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(job.created_at))
        failed = sum(1 for line in job.lines if not line["ok"])
        counts = {"processing": 0 if ended else len(job.lines), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended and job.cancelled:
            counts["canceled"] = len(job.lines)
        elif ended:
            counts["succeeded"], counts["errored"] = len(job.lines) - failed, failed
        return {
            "id": job.id, "type": "message_batch", "processing_status": "ended" if ended else ("canceling" if job.cancelled else "in_progress"),
            "request_counts": counts, "created_at": stamp, "expires_at": stamp, "ended_at": stamp if ended else None,
            "archived_at": None, "cancel_initiated_at": stamp if job.cancelled else None,
            "results_url": f"{self.owner.url}/v1/messages/batches/{job.id}/results" if ended else None,
        }


def _json(status: int, payload: Any) -> tuple[int, bytes, str]:
    return status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), "application/json"
