"""Batch endpoints for the fake LLM server: the OpenAI Batch API and Gemini batch mode, wire-exact enough
for the official SDKs.

OpenAI: ``POST /v1/files`` (multipart upload, purpose ``batch``), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content`` (the output and error files as JSON Lines).
Gemini: ``POST /v1beta/models/{model}:batchGenerateContent`` with inlined requests and
``GET /v1beta/batches/{id}`` (an operation whose ``metadata.output`` holds the inlined responses).

Each request line is answered by the server's own responder (the same answer a synchronous call gets).
A job reports in progress for ``polls_before_done`` polls, or for as long as ``hold`` is set, so a test can
kill the client after submission and resume by job id. ``fail_request`` (request → message or None) makes
single requests fail inside a job that otherwise succeeds, as the real APIs report per-request errors.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rageval_core.testing.fake_llm.wire import FakeRequest

# OpenAI's paths, and Azure OpenAI's (``/openai/files``, ``/openai/batches``: the resource's, not a deployment's).
_OPENAI_BATCH = re.compile(r"^/(v1|openai)/(files|batches)(/(?P<id>[^/]+)(?P<content>/content)?)?$")
_OPENAI_ROOTS = ("/v1/", "/openai/")
_GEMINI_CREATE = re.compile(r"^/(v1beta|v1|v1alpha)/models/(?P<model>[^:/]+):batchGenerateContent$")
_GEMINI_GET = re.compile(r"^/(v1beta|v1|v1alpha)/batches/(?P<id>[^/:]+)$")




class BatchOwner(Protocol):
    """The server the batch endpoints answer for (``server.FakeLLMServer``): its batches, address and answers."""

    batches: FakeBatches

    @property
    def url(self) -> str: ...

    def parse_request(self, api: str, path: str, body: Any, headers: Mapping[str, str]) -> FakeRequest: ...

    def chat_answer(self, request: FakeRequest, echo: str = "") -> dict[str, Any]: ...

@dataclass
class FakeJob:
    id: str
    api: str
    model: str
    created_at: int
    lines: list[dict[str, Any]] = field(default_factory=list)  # per request: key, ok, body or error
    polls: int = 0
    input_file_id: str | None = None
    display_name: str | None = None


class FakeBatches:
    """Files, jobs and their answers, kept in memory for the server's lifetime."""

    def __init__(self, owner: BatchOwner) -> None:
        self.owner = owner
        self.hold = False
        self.polls_before_done = 1
        self.fail_request: Callable[[FakeRequest], str | None] | None = None
        self.end_state: str | None = None  # "cancelled" / "expired": OpenAI jobs end so, with no output file
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, FakeJob] = {}
        self.request_lines = 0  # model requests received inside batch jobs
        self._lock = threading.Lock()
        self._next = 0

    @staticmethod
    def handles(method: str, path: str) -> bool:
        if method == "GET":
            openai_get = any(path.startswith(f"{root}batches/") or (path.startswith(f"{root}files/") and path.endswith("/content"))
                             for root in _OPENAI_ROOTS)
            return bool(_GEMINI_GET.match(path)) or openai_get
        return bool(_GEMINI_CREATE.match(path)) or path in ("/v1/files", "/v1/batches", "/openai/files", "/openai/batches")

    def api_of(self, path: str) -> str:
        """Which API's error format a batch path answers in."""
        job_path = _GEMINI_GET.match(path)
        job = self.jobs.get(job_path.group("id")) if job_path else None
        return "gemini" if _GEMINI_CREATE.match(path) or (job is not None and job.api == "gemini") else "openai"

    def handle(self, method: str, path: str, raw: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, str]:
        """(status, body, content type) for one batch endpoint request."""
        try:
            if method == "POST" and path in ("/v1/files", "/openai/files"):
                return self._upload(raw, headers)
            if method == "POST" and path in ("/v1/batches", "/openai/batches"):
                return self._openai_create(json.loads(raw or b"{}"))
            if method == "GET":
                match = _OPENAI_BATCH.match(path)
                if match and match.group("content"):
                    return self._file_content(match.group("id"))
                if match and path.startswith("/openai/batches/"):
                    job = self._poll(str(match.group("id")))
                    if job is not None:
                        return _json(200, self._openai_batch(job))
                job_path = _GEMINI_GET.match(path)  # /v1/batches/{id} is either API's: the job knows which
                if job_path:
                    job = self._poll(job_path.group("id"))
                    if job is not None:
                        return _json(200, self._gemini_operation(job) if job.api == "gemini" else self._openai_batch(job))
            gem_create = _GEMINI_CREATE.match(path)
            if method == "POST" and gem_create:
                return self._gemini_create(gem_create.group("model"), json.loads(raw or b"{}"))
        except (ValueError, KeyError) as exc:
            return _json(400, {"error": {"code": 400, "message": f"bad batch request: {exc}", "status": "INVALID_ARGUMENT"}})
        return _json(404, {"error": {"code": 404, "message": f"no such batch resource {path}"}})

    def release(self) -> None:
        """Let held jobs finish at their next poll."""
        self.hold = False

    # OpenAI ----------------------------------------------------------------------------------------
    def _upload(self, raw: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, str]:
        content = _multipart_file(raw, headers.get("content-type", ""))
        file_id = self._new_id("file")
        with self._lock:
            self.files[file_id] = content
        return _json(200, {
            "id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
            "filename": "batch.jsonl", "purpose": "batch", "status": "processed",
        })

    def _openai_create(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        data = self.files.get(str(body.get("input_file_id")))
        if data is None:
            return _json(404, {"error": {"message": "input file not found", "type": "invalid_request_error"}})
        job = FakeJob(self._new_id("batch"), "openai", "", int(time.time()), input_file_id=str(body["input_file_id"]))
        for line in data.decode("utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            url = str(item["url"])  # Azure's lines say /chat/completions
            job.lines.append(self._answer("openai", url if url.startswith("/v1/") else f"/v1{url}", item["body"], str(item["custom_id"])))
        self._store(job)
        return _json(200, self._openai_batch(job))

    def _openai_batch(self, job: FakeJob) -> dict[str, Any]:
        done = self._done(job)
        failed = sum(1 for line in job.lines if not line["ok"])
        if done and self.end_state:
            return {"id": job.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                    "input_file_id": job.input_file_id, "completion_window": "24h", "status": self.end_state,
                    "created_at": job.created_at, "output_file_id": None, "error_file_id": None,
                    "request_counts": {"total": len(job.lines), "completed": 0, "failed": 0}}
        out: dict[str, Any] = {
            "id": job.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
            "input_file_id": job.input_file_id, "completion_window": "24h",
            "status": "completed" if done else ("validating" if job.polls == 0 else "in_progress"),
            "created_at": job.created_at,
            "request_counts": {"total": len(job.lines), "completed": len(job.lines) - failed if done else 0, "failed": failed if done else 0},
        }
        if done:
            out["output_file_id"] = f"{job.id}-output"
            out["error_file_id"] = f"{job.id}-errors" if failed else None
            out["completed_at"] = int(time.time())
        return out

    def _file_content(self, file_id: str) -> tuple[int, bytes, str]:
        job_id, _, kind = file_id.rpartition("-")
        job = self.jobs.get(job_id)
        if job is None or kind not in ("output", "errors"):
            return _json(404, {"error": {"message": f"no file {file_id}", "type": "invalid_request_error"}})
        rows = []
        for i, line in enumerate(job.lines):
            if line["ok"] != (kind == "output"):
                continue
            status, payload = (200, line["body"]) if line["ok"] else (400, {"error": {"message": line["error"], "type": "invalid_request_error"}})
            rows.append({"id": f"batch_req_{i}", "custom_id": line["key"], "response": {"status_code": status, "request_id": f"req_{i}", "body": payload}, "error": None})
        return 200, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"), "application/octet-stream"

    # Gemini ----------------------------------------------------------------------------------------
    def _gemini_create(self, model: str, body: dict[str, Any]) -> tuple[int, bytes, str]:
        batch = body.get("batch") or {}
        requests = ((batch.get("inputConfig") or {}).get("requests") or {}).get("requests") or []
        job = FakeJob(self._new_id("batches/job").split("/", 1)[1], "gemini", model, int(time.time()), display_name=batch.get("displayName"))
        for i, item in enumerate(requests):
            key = str((item.get("metadata") or {}).get("key", i))
            job.lines.append(self._answer("gemini", f"/v1beta/models/{model}:generateContent", item.get("request") or {}, key))
        self._store(job)
        return _json(200, self._gemini_operation(job))

    def _gemini_operation(self, job: FakeJob) -> dict[str, Any]:
        done = self._done(job)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(job.created_at))
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "model": f"models/{job.model}", "displayName": job.display_name or job.id, "createTime": stamp, "updateTime": stamp,
            "state": "BATCH_STATE_SUCCEEDED" if done else ("BATCH_STATE_PENDING" if job.polls == 0 else "BATCH_STATE_RUNNING"),
            "batchStats": {"requestCount": str(len(job.lines))},
        }
        if done:
            responses = []
            for line in job.lines:
                entry: dict[str, Any] = {"metadata": {"key": line["key"]}}
                if line["ok"]:
                    entry["response"] = line["body"]
                else:
                    entry["error"] = {"code": 400, "message": line["error"]}
                responses.append(entry)
            metadata["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
            metadata["endTime"] = stamp
        return {"name": f"batches/{job.id}", "metadata": metadata, "done": done}

    # shared ----------------------------------------------------------------------------------------
    def _answer(self, api: str, path: str, body: dict[str, Any], key: str) -> dict[str, Any]:
        """Answer one request line as the synchronous endpoint would (or fail it per ``fail_request``)."""
        with self._lock:
            self.request_lines += 1
        request = self.owner.parse_request(api, path, body, {})
        message = self.fail_request(request) if self.fail_request else None
        if message:
            return {"key": key, "ok": False, "error": message}
        return {"key": key, "ok": True, "body": self.owner.chat_answer(request)}

    def _store(self, job: FakeJob) -> None:
        with self._lock:
            self.jobs[job.id] = job

    def _poll(self, job_id: str) -> FakeJob | None:
        with self._lock:
            job = self.jobs.get(job_id)
            if job is not None:
                job.polls += 1
            return job

    def _done(self, job: FakeJob) -> bool:
        return not self.hold and job.polls > self.polls_before_done

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._next += 1
            return f"{prefix}-{self._next:04d}"


def _json(status: int, payload: Any) -> tuple[int, bytes, str]:
    return status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), "application/json"


def _multipart_file(raw: bytes, content_type: str) -> bytes:
    """The ``file`` part of a multipart/form-data body."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        raise ValueError("upload is not multipart/form-data")
    for part in raw.split(b"--" + match.group(1).encode("ascii")):
        head, sep, content = part.partition(b"\r\n\r\n")
        if sep and b'name="file"' in head:
            return content[:-2] if content.endswith(b"\r\n") else content
    raise ValueError("upload has no file part")
