"""The job calls of each provider's batch API, through the official SDKs.

OpenAI, Azure OpenAI (a global-batch deployment; lines name ``/chat/completions``) and OpenAI-compatible servers
that implement it: a JSON Lines file of chat-completion bodies is
uploaded (``files.create``, purpose ``batch``), a job is created on it (``batches.create``, 24 h window),
polled (``batches.retrieve``) and its output and error files are read (``files.content``). Gemini: the
requests go inline in ``batches.create`` and come back inline in the finished job (``batches.get``).

Each request line carries the same body the synchronous call would send (``request_body`` /
``request_parts`` of the providers) and the request's key as ``custom_id`` / ``metadata.key``, so answers
map back without other state. Every SDK failure becomes a scrubbed ``ProviderError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Protocol

from rageval_core.store.batch_ledger import BatchAnswer
from rageval_core.llm.base import LLM, LLMRequest, ProviderError

OPENAI_ENDPOINT = "/v1/chat/completions"
AZURE_ENDPOINT = "/chat/completions"  # Azure OpenAI's Batch API names the operation without the version prefix


@dataclass(frozen=True)
class JobStatus:
    """Where a job stands: ``state`` is running, done or failed; counts when the provider reports them."""

    job_id: str
    state: str
    provider_state: str
    total: int | None = None
    completed: int | None = None
    failed: int | None = None
    message: str | None = None

    def describe(self) -> str:
        counts = f" {self.completed or 0}/{self.total} done" if self.total is not None and self.completed is not None else ""
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{self.job_id}: {self.provider_state}{counts}{failed}"


class BatchBackend(Protocol):
    provider: str
    model: str

    def submit(self, requests: Mapping[str, LLMRequest], round_no: int) -> str: ...

    def poll(self, job_id: str) -> JobStatus: ...

    def collect(self, job_id: str) -> list[BatchAnswer]: ...


def backend_for(base: LLM) -> BatchBackend:
    """The batch backend for a provider client; a provider without a batch API is a clear error."""
    if base.provider == "vertex":
        raise ProviderError(
            "--batch on vertex: Vertex AI batch prediction reads its requests from Cloud Storage or BigQuery and writes "
            "its answers there, which this tool does not manage; run without --batch, or use the gemini provider's "
            "batch mode (docs/providers.md says how to run a Vertex batch job yourself)", kind="bad_request",
        )
    from rageval_core.llm.gemini_provider import GeminiLLM
    from rageval_core.llm.openai_provider import OpenAILLM

    if isinstance(base, OpenAILLM):
        return OpenAIBatch(base)
    if isinstance(base, GeminiLLM):
        return GeminiBatch(base)
    if base.provider == "anthropic" and hasattr(base, "request_body"):
        return AnthropicBatch(base)
    raise ProviderError(
        f"--batch needs a provider with a batch API (openai, azure-openai, gemini, anthropic, or an OpenAI-compatible "
        f"server that serves /v1/batches); {base.provider} has none: run without --batch", kind="bad_request",
    )


class OpenAIBatch:
    """The OpenAI Batch API."""

    def __init__(self, llm: Any) -> None:  # Any: the provider's own adapter (its SDK client and batch helpers)
        self.llm = llm
        self.provider = llm.provider
        self.model = llm.model
        self.endpoint = AZURE_ENDPOINT if llm.provider == "azure-openai" else OPENAI_ENDPOINT

    def submit(self, requests: Mapping[str, LLMRequest], round_no: int) -> str:
        lines = [
            json.dumps({"custom_id": key, "method": "POST", "url": self.endpoint, "body": self.llm.request_body(request)}, ensure_ascii=False)
            for key, request in requests.items()
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        client = self.llm.client
        try:
            upload = client.files.create(file=(f"rageval-round{round_no}.jsonl", data), purpose="batch")
            job = client.batches.create(
                input_file_id=upload.id, endpoint=self.endpoint, completion_window="24h",
                metadata={"tool": "rageval", "round": str(round_no)},
            )
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
            error = self.llm.map_error(exc)
        else:
            return str(job.id)
        raise error

    def poll(self, job_id: str) -> JobStatus:
        try:
            job = self.llm.client.batches.retrieve(job_id)
        except Exception as exc:  # noqa: BLE001
            error = self.llm.map_error(exc)
        else:
            counts = job.request_counts
            state = {"completed": "done", "expired": "done", "cancelled": "done", "failed": "failed"}.get(job.status, "running")
            if state == "done" and not job.output_file_id and not job.error_file_id:
                state = "failed"
            message = None
            if job.errors is not None and job.errors.data:
                message = "; ".join(str(e.message) for e in job.errors.data if e.message)[:300]
            return JobStatus(
                job_id, state, job.status, counts.total if counts else None, counts.completed if counts else None,
                counts.failed if counts else None, message,
            )
        raise error

    def collect(self, job_id: str) -> list[BatchAnswer]:
        client = self.llm.client
        try:
            job = client.batches.retrieve(job_id)
            texts = [client.files.content(f).text for f in (job.output_file_id, job.error_file_id) if f]
        except Exception as exc:  # noqa: BLE001
            error = self.llm.map_error(exc)
        else:
            return [self._answer(job_id, json.loads(line)) for text in texts for line in text.splitlines() if line.strip()]
        raise error

    def _answer(self, job_id: str, line: Mapping[str, Any]) -> BatchAnswer:
        key = str(line.get("custom_id"))
        response = line.get("response") or {}
        status = int(response.get("status_code") or 0)
        body = response.get("body") or {}
        if status == 200:
            try:
                completion = self.llm.completion_from_body(body, None)
            except ProviderError as err:
                return BatchAnswer(key, job_id, error_kind=err.kind, error_message=str(err), status=status)
            return BatchAnswer(key, job_id, tuple(completion.texts), completion.usage, status=200)
        error = line.get("error") or (body.get("error") if isinstance(body, Mapping) else None) or {}
        message = str(error.get("message") or error.get("code") or "request failed in the batch job")
        failed = self.llm.error_for(status or 500, message)
        return BatchAnswer(key, job_id, error_kind=failed.kind, error_message=str(failed), status=status or None)


class GeminiBatch:
    """Gemini batch mode with inlined requests."""

    provider = "gemini"

    def __init__(self, llm: Any) -> None:  # Any: the provider's own adapter (its SDK client and batch helpers)
        self.llm = llm
        self.model = llm.model

    def submit(self, requests: Mapping[str, LLMRequest], round_no: int) -> str:
        from google.genai import types

        inlined = []
        for key, request in requests.items():
            contents, config = self.llm.request_parts(request)
            inlined.append(types.InlinedRequest(contents=contents, config=config, metadata={"key": key}))
        try:
            job = self.llm.client.batches.create(model=self.model, src=inlined, config={"display_name": f"rageval round {round_no}"})
        except Exception as exc:  # noqa: BLE001
            error = self.llm.map_error(exc)
        else:
            return str(job.name)
        raise error

    def _job(self, job_id: str) -> Any:
        try:
            return self.llm.client.batches.get(name=job_id)
        except Exception as exc:  # noqa: BLE001
            error = self.llm.map_error(exc)
        raise error

    def poll(self, job_id: str) -> JobStatus:
        job = self._job(job_id)
        name = str(getattr(job.state, "value", job.state) or "JOB_STATE_UNSPECIFIED")
        state = {"JOB_STATE_SUCCEEDED": "done", "JOB_STATE_FAILED": "failed", "JOB_STATE_CANCELLED": "failed", "JOB_STATE_EXPIRED": "failed"}.get(name, "running")
        message = str(job.error.message) if getattr(job, "error", None) is not None and job.error.message else None
        return JobStatus(job_id, state, name.removeprefix("JOB_STATE_").lower(), message=message)

    def collect(self, job_id: str) -> list[BatchAnswer]:
        job = self._job(job_id)
        responses = list(getattr(job.dest, "inlined_responses", None) or []) if job.dest is not None else []
        out = []
        for item in responses:
            key = str((item.metadata or {}).get("key"))
            if item.response is not None:
                try:
                    completion = self.llm.completion_from_response(item.response)
                except ProviderError as err:
                    out.append(BatchAnswer(key, job_id, error_kind=err.kind, error_message=str(err)))
                    continue
                out.append(BatchAnswer(key, job_id, tuple(completion.texts), completion.usage, status=200))
            else:
                error = item.error
                code = int(getattr(error, "code", None) or 500)
                failed = self.llm.error_for(code, str(getattr(error, "message", None) or "request failed in the batch job"))
                out.append(BatchAnswer(key, job_id, error_kind=failed.kind, error_message=str(failed), status=code))
        return out


class AnthropicBatch:
    """Anthropic's Message Batches: ``messages.batches.create`` with each request's parameters inline and its key
    as ``custom_id`` (a sha256 hex digest: 64 characters, Claude's limit), ``retrieve`` to poll,
    ``results`` to read the JSON Lines of answers."""

    provider = "anthropic"

    def __init__(self, llm: Any) -> None:  # Any: the provider's own adapter (its SDK client and batch helpers)
        self.llm = llm
        self.model = llm.model

    def _call(self, fn: Any) -> Any:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a scrubbed ProviderError
            error = self.llm.map_error(exc)
        raise error

    def submit(self, requests: Mapping[str, LLMRequest], round_no: int) -> str:
        items = [{"custom_id": key, "params": self.llm.request_body(request)} for key, request in requests.items()]
        job = self._call(lambda: self.llm.client.messages.batches.create(requests=items))
        return str(job.id)

    def poll(self, job_id: str) -> JobStatus:
        job = self._call(lambda: self.llm.client.messages.batches.retrieve(job_id))
        counts = job.request_counts
        total = sum(int(getattr(counts, k, 0) or 0) for k in ("processing", "succeeded", "errored", "canceled", "expired"))
        failed = int(counts.errored or 0) + int(counts.canceled or 0) + int(counts.expired or 0)
        state = "done" if job.processing_status == "ended" else "running"
        if state == "done" and not counts.succeeded and failed:
            state = "failed"  # cancelled or expired before any request was answered
        message = f"{counts.canceled} canceled, {counts.expired} expired, {counts.errored} errored" if failed else None
        return JobStatus(job_id, state, str(job.processing_status), total, int(counts.succeeded or 0), failed, message)

    def collect(self, job_id: str) -> list[BatchAnswer]:
        results = self._call(lambda: list(self.llm.client.messages.batches.results(job_id)))
        out = []
        for item in results:
            key, result = str(item.custom_id), item.result
            if result.type == "succeeded":
                try:
                    completion = self.llm.completion_from_message(result.message)
                except ProviderError as err:
                    out.append(BatchAnswer(key, job_id, error_kind=err.kind, error_message=str(err)))
                    continue
                out.append(BatchAnswer(key, job_id, tuple(completion.texts), completion.usage, status=200))
                continue
            detail = getattr(getattr(result, "error", None), "error", None)
            message = str(getattr(detail, "message", None) or f"request {result.type} in the batch job")
            status = 400 if result.type == "errored" else 500
            failed = self.llm.error_for(status, message)
            out.append(BatchAnswer(key, job_id, error_kind=failed.kind, error_message=str(failed), status=status))
        return out
