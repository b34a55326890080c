"""A local fake LLM server speaking the OpenAI and Gemini wire formats, for adapter tests and benches.

Why a real HTTP server instead of mocks: the adapter tests must run the real ``openai`` and
``google-genai`` SDKs end to end (no SDK internals patched), and the benches must measure the wrapper
stack over real sockets. The server therefore sets TCP_NODELAY on every accepted socket and listens
with a backlog of 128 (DESIGN.md: without both, each response pays ~45 ms of delayed-ACK stall and
bursts lose connections).

Endpoints:

- ``POST /v1/chat/completions`` (OpenAI; ``n``, ``response_format`` json_schema / json_object, usage)
- ``POST /v1/responses`` (OpenAI's Responses API: ``input`` as text or messages, ``instructions``; the answer as one
  ``message`` output item with an ``output_text`` part, as ``client.responses.create`` and LangChain's
  ``ChatOpenAI(use_responses_api=True)`` read it)
- ``POST /v1/embeddings`` (OpenAI; float or base64 encoding, as the SDK asks by default)
- ``POST /v1beta/models/{model}:generateContent`` (Gemini; ``x-goog-api-key``, candidateCount,
  usageMetadata), ``:embedContent`` and ``:batchEmbedContents`` (also under ``/v1/``)
- batch jobs: OpenAI ``/v1/files`` + ``/v1/batches``, Gemini ``:batchGenerateContent`` + ``/v1beta/batches/{id}``
  (``server.batches``, see ``tests/support/fake_batch.py``)

Settable at any time (thread-safe): ``latency`` (seconds, or a function of the request), ``responder``
(request → answer text, a dict sent as JSON, or a list with one answer per choice), queued faults
(``fault("rate_limit", retry_after=2)`` etc.), ``prefix_cache`` (cached input tokens reported as OpenAI and Gemini
do, ``tests/support/prefix_cache.py``: 1,024-token minimum, 128-token blocks; None turns it off), ``reject_json_schema`` (llama.cpp behaviour: HTTP 500 on
``response_format`` type json_schema), ``reject_response_json_schema`` / ``reject_response_schema`` (Gemini:
400 INVALID_ARGUMENT "Unknown name" for that generationConfig field), ``ignore_n`` (one choice whatever ``n`` asks), and ``api_key`` (when set, requests must carry it). Every request is
logged (path, headers without secrets, body, its sha256, status, injected fault) in a bounded log so tests
can count calls and benches can find requests repeated after a success.

Fault rates (benches): ``fault_rates={"rate_limit": 0.2, "server_error": 0.05, "malformed": 0.05, "hang": 0.02}``
draws one fault (or none) per model request from a seeded generator, after the queued faults; a 429 carries
``Retry-After: retry_after``, a hang answers only after ``hang_s``. Schema-driven answers: a request with a
response schema (or, as ragas sends it, a prompt with "JSON Schema: {...}") gets a valid instance of it.
``bench/fake_llm_server.py`` serves this same class from the command line.

Usage::

    with FakeLLMServer(latency=0.1) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0)
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import socket
import socketserver
import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from tests.support import fake_anthropic
from tests.support.fake_anthropic import AnthropicBatches, PromptCacheState
from tests.support.fake_batch import FakeBatches
from tests.support.fake_steps import step_answer
from tests.support.prefix_cache import PrefixCache

SECRET_HEADERS = frozenset({"authorization", "x-goog-api-key", "api-key", "x-api-key", "proxy-authorization"})
FAULT_KINDS = frozenset(
    {"rate_limit", "server_error", "request_timeout", "malformed", "hang", "status", "disconnect", "echo_key", "trickle"}
)
_GEMINI_PATH = re.compile(
    r"^/(v1beta1|v1beta|v1|v1alpha)/(projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/)?"
    r"models/(?P<model>[^:/]+):(?P<method>[A-Za-z]+)$"
)
# Azure OpenAI: the deployment is in the path, the API version in the query.
_AZURE_PATH = re.compile(r"^/openai/deployments/(?P<deployment>[^/]+)/(?P<op>chat/completions|embeddings)$")


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


class _BadRequest(ValueError):
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


def _append_to_strings(value: Any, suffix: str) -> Any:
    """``value`` with ``suffix`` appended to every string in it (answers stay schema-valid)."""
    if isinstance(value, str):
        return value + suffix
    if isinstance(value, dict):
        return {k: _append_to_strings(v, suffix) for k, v in value.items()}
    if isinstance(value, list):
        return [_append_to_strings(v, suffix) for v in value]
    return value


def fake_embedding(text: str, dim: int) -> list[float]:
    """A deterministic, L2-normalised bag of character bigrams (similar texts get similar vectors)."""
    vec = [0.0] * dim
    lowered = text.lower()
    for a, b in zip(lowered, lowered[1:] or lowered):
        vec[zlib.crc32((a + b).encode("utf-8")) % dim] += 1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _gemini_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def _openai_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _responses_answer(request: FakeRequest, text: str, prompt_tokens: int, completion_tokens: int, cached: int) -> dict[str, Any]:
    """An OpenAI Responses API object holding ``text`` as its one output message."""
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


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128  # listen backlog (DESIGN.md: above 16)

    def __init__(self, owner: FakeLLMServer, max_threads: int, port: int = 0) -> None:
        self.owner = owner
        self._slots = threading.BoundedSemaphore(max_threads)
        super().__init__(("127.0.0.1", port), _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr

    def process_request(self, request: Any, client_address: Any) -> None:
        # Bounded: at most max_threads connections are served at once; the rest wait in the backlog.
        self._slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    timeout = 15  # idle keep-alive connections close after this many seconds
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if FakeBatches.handles("GET", path) or AnthropicBatches.handles(path):
            self.server.owner._handle(self)
        else:
            self._send_json(404, {"error": {"code": 404, "message": "not found"}})

    def do_POST(self) -> None:
        self.server.owner._handle_marked(self)

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), headers)

    def _send_raw(self, status: int, data: bytes, headers: Mapping[str, str] | None = None, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


class FakeLLMServer:
    """The server; use as a context manager or call ``start()`` / ``stop()``.

    ``max_lifetime_s`` stops the server on its own so a forgotten instance never outlives a test run.
    """

    def __init__(
        self,
        *,
        latency: float | Callable[[FakeRequest], float] = 0.0,
        responder: Responder | None = None,
        api_key: str | None = None,
        embed_dim: int = 16,
        max_log: int = 10_000,
        max_threads: int = 256,
        max_lifetime_s: float = 900.0,
        fault_rates: Mapping[str, float] | None = None,
        retry_after: float = 1.0,
        hang_s: float = 30.0,
        fault_seed: int = 0,
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.port_wanted = port  # 0: any free port (tests); a fixed one for a demo the app's sidebar points at
        for kind in fault_rates or {}:
            if kind not in ("rate_limit", "server_error", "malformed", "hang"):
                raise ValueError(f"fault rate for {kind!r}: use rate_limit, server_error, malformed or hang")
        if sum((fault_rates or {}).values()) > 1.0:
            raise ValueError("fault rates add up to more than 1")
        self.fault_rates = dict(fault_rates or {})
        self.retry_after = retry_after
        self.hang_s = hang_s
        self._rng = random.Random(fault_seed)
        self.responder: Responder = responder or default_responder
        self.api_key = api_key
        self.embed_dim = embed_dim
        self.reject_json_schema = False
        self.reject_json_object_schema = False
        # Gemini endpoints / proxies that do not know a structured-output field answer 400 INVALID_ARGUMENT.
        self.reject_response_json_schema = False
        self.reject_response_schema = False
        self.ignore_n = False  # answer one choice whatever n asks (llama.cpp, Ollama)
        # Cached input tokens as the providers report them (tests/support/prefix_cache.py); None: never cached.
        self.prefix_cache: PrefixCache | None = PrefixCache()
        self.batches = FakeBatches(self)  # the OpenAI Batch API and Gemini batch mode (tests/support/fake_batch.py)
        self.anthropic_batches = AnthropicBatches(self)  # Anthropic's Message Batches (tests/support/fake_anthropic.py)
        self.claude_cache = PromptCacheState()  # Claude's explicit prompt cache (cache_control on the system prompt)
        self.reject_output_format = False  # Anthropic: 400 to output_config.format (a model without JSON-schema output)
        self.reject_strict_schema = False  # OpenAI / Azure: 400 to a strict json_schema ("'minimum' is not permitted")
        # OAuth: what POST /token answers (a service account's token_uri points here) and how often it was asked.
        self.oauth_token = "ya29.fake-vertex-access-token-0001"
        self.token_requests = 0
        # Quote what the client sent (key, Authorization header, request URL with its query) inside every
        # successful chat answer's text fields: a model or proxy that leaks credentials into a 200 answer.
        self.echo_secrets_in_answers = False
        self._faults: list[Fault] = []
        self._log: deque[LoggedRequest] = deque(maxlen=max_log)
        self._total = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._max_threads = max_threads
        self._max_lifetime_s = max_lifetime_s
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # lifecycle -------------------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        if self._server is not None:
            return self
        self._server = _Server(self, self._max_threads, self.port_wanted)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self._max_lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        self._stopped.set()  # releases hanging handlers
        server, self._server = self._server, None
        if self._timer is not None:
            self._timer.cancel()
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """What to pass as ``base_url`` to ``openai.OpenAI``."""
        return f"{self.url}/v1"

    @property
    def gemini_base_url(self) -> str:
        """What to pass as ``HttpOptions(base_url=...)`` to ``genai.Client``."""
        return self.url

    # configuration ---------------------------------------------------------------------------------
    def fault(
        self,
        kind: str,
        *,
        times: int = 1,
        path: str | None = None,
        retry_after: float | None = None,
        status: int | None = None,
        seconds: float = 30.0,
        message: str | None = None,
    ) -> Fault:
        """Queue a failure for the next ``times`` matching requests (faults are consumed in order).

        Kinds: rate_limit (429 + Retry-After for OpenAI, RetryInfo retryDelay for Gemini, or a Retry-After
        header for Gemini too with ``status=429``, as a proxy in front of Gemini may send), server_error
        (500), request_timeout (408), malformed (200 with a body that is not JSON), hang (answer only
        after ``seconds``), status (any ``status``), disconnect (close without answering), echo_key (400, or
        ``status`` such as 401, whose message repeats the key and Authorization header the client sent, as
        some proxies do), trickle (the normal answer, one body byte every ``seconds``;
        ``LoggedRequest.bytes_sent`` shows where the client hung up).
        """
        item = Fault(kind, times=times, path=path, retry_after=retry_after, status=status, seconds=seconds, message=message)
        with self._lock:
            self._faults.append(item)
        return item

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    # request log -----------------------------------------------------------------------------------
    @property
    def requests(self) -> list[LoggedRequest]:
        """A copy of the (bounded) request log."""
        with self._lock:
            return list(self._log)

    def count(self, path_contains: str = "") -> int:
        """Requests whose path contains ``path_contains`` (all logged requests by default)."""
        with self._lock:
            return sum(1 for r in self._log if path_contains in r.path)

    @property
    def total_requests(self) -> int:
        """Every request ever received (not bounded by the log size)."""
        with self._lock:
            return self._total

    def reset_log(self) -> None:
        with self._lock:
            self._log.clear()

    # handling --------------------------------------------------------------------------------------
    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for item in self._faults:
                if item.remaining > 0 and (item.path is None or item.path in path):
                    item.remaining -= 1
                    if item.remaining == 0:
                        self._faults.remove(item)
                    return item
            return self._random_fault()

    def _random_fault(self) -> Fault | None:
        """One fault drawn at the configured rates (called under the lock), or None."""
        if not self.fault_rates:
            return None
        draw = self._rng.random()
        for kind, rate in sorted(self.fault_rates.items()):
            if draw < rate:
                if kind == "rate_limit":
                    return Fault("rate_limit", retry_after=self.retry_after)
                return Fault(kind, seconds=self.hang_s)
            draw -= rate
        return None

    def _handle_marked(self, h: _Handler) -> None:
        """``_handle``, then the request's ``finished`` event (a test can wait for the server side to end)."""
        try:
            self._handle(h)
        finally:
            entry = getattr(h, "_entry", None)
            if entry is not None:
                entry.finished.set()

    def _handle(self, h: _Handler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        path, _, query = h.path.partition("?")
        headers = {k.lower(): v for k, v in h.headers.items()}
        presented = self._presented_key(headers)
        safe_headers = {k: ("<redacted>" if k in SECRET_HEADERS else v) for k, v in headers.items()}
        try:
            body: Any = json.loads(raw.decode("utf-8")) if raw else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = {"_unparsed": raw[:200].decode("utf-8", "replace")}
        entry = LoggedRequest(
            path=path, headers=safe_headers, body=body, received_at=time.time(), body_sha256=hashlib.sha256(raw).hexdigest(),
            query=query,
        )
        h._entry = entry  # type: ignore[attr-defined]
        with self._lock:
            self._log.append(entry)
            self._total += 1
        if path == "/token":  # Google's OAuth token endpoint (service-account JWT grant), for Vertex AI
            with self._lock:
                self.token_requests += 1
            entry.status = 200
            h._send_json(200, {"access_token": self.oauth_token, "expires_in": 3600, "token_type": "Bearer"})
            return
        batch = FakeBatches.handles(h.command, path)
        claude_batch = AnthropicBatches.handles(path)
        api = self.batches.api_of(path) if batch else ("gemini" if _GEMINI_PATH.match(path) else
                                                       "anthropic" if fake_anthropic.is_anthropic(path) else "openai")
        if _AZURE_PATH.match(path) and "api-version=" not in query:
            entry.status = 404  # what Azure answers a deployment call without an api-version
            h._send_json(404, {"error": {"code": "404", "message": "Resource not found"}})
            return

        if self.api_key is not None and presented != self.api_key:
            entry.status = 400 if api == "gemini" else 401
            if api == "anthropic":
                h._send_json(401, fake_anthropic.error_body(401, "invalid x-api-key"))
            elif api == "openai":
                h._send_json(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}})
            else:
                h._send_json(400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}})
            return

        fault = self._take_fault(path)
        entry.fault = None if fault is None else fault.kind
        if fault is not None and fault.kind == "disconnect":
            entry.status = -1
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if batch or claude_batch:
            if fault is not None and fault.kind != "hang":
                entry.status = self._send_fault(h, api, fault, presented)
                return
            if claude_batch:
                status, data, content_type = self.anthropic_batches.handle(h.command, path, body)
            else:
                status, data, content_type = self.batches.handle(h.command, path, raw, headers)
            entry.status = status
            h._send_raw(status, data, content_type=content_type)
            return

        try:
            parsed = self._parse(api, path, body, safe_headers)
        except ValueError as exc:
            entry.status = 400
            self._send_error(h, api, 400, str(exc))
            return

        delay = self.latency(parsed) if callable(self.latency) else float(self.latency)
        if delay > 0:
            self._stopped.wait(delay)
        if fault is not None and fault.kind == "hang":
            if self._stopped.wait(fault.seconds):
                return
            fault = None
        if fault is not None and fault.kind != "trickle":
            entry.status = self._send_fault(h, api, fault, presented, headers.get("authorization", ""))
            return

        if api == "gemini" and path.endswith(":generateContent"):
            config = body.get("generationConfig") or {}
            for flag, field_name in ((self.reject_response_json_schema, "responseJsonSchema"), (self.reject_response_schema, "responseSchema")):
                if flag and field_name in config:
                    # What the Gemini API answers for a generation_config field it does not know.
                    entry.status = 400
                    self._send_error(h, api, 400, f'Invalid JSON payload received. Unknown name "{field_name}" at \'generation_config\': Cannot find field.')
                    return

        if api == "anthropic" and path == "/v1/messages" and self.reject_output_format and (body.get("output_config") or {}).get("format"):
            entry.status = 400
            self._send_error(h, api, 400, "output_config.format: structured outputs (json_schema) are not supported on this model")
            return
        if api == "openai" and path.endswith("/chat/completions"):
            fmt = body.get("response_format") or {}
            if self.reject_strict_schema and fmt.get("type") == "json_schema" and (fmt.get("json_schema") or {}).get("strict"):
                entry.status = 400
                h._send_json(400, {"error": {"code": "invalid_request_error", "type": "invalid_request_error", "param": "response_format",
                                             "message": "Invalid schema for response_format 'answer': In context=(), 'minimum' is not permitted."}})
                return
            if self.reject_json_schema and fmt.get("type") == "json_schema":
                # What llama-cpp-python's server does with response_format json_schema.
                entry.status = 500
                h._send_json(500, {"error": {"code": 500, "message": "Unsupported response_format type: json_schema", "type": "server_error"}})
                return
            if self.reject_json_object_schema and fmt.get("type") == "json_object" and "schema" in fmt:
                entry.status = 400
                h._send_json(400, {"error": {"code": 400, "message": "response_format: unexpected key 'schema'", "type": "invalid_request_error"}})
                return

        try:
            echo = (f" [seen: key {presented}; url {h.path}; authorization {headers.get('authorization', '')}]"
                    if self.echo_secrets_in_answers else "")
            if path == "/v1/messages/count_tokens":
                payload: Any = {"input_tokens": _tokens(parsed.prompt)}
            elif path.endswith(":predict"):
                payload = self._vertex_predict(parsed.model, body)
            else:
                payload = self._embedding_answer(api, path, body) if "embed" in path.lower() else self._chat_answer(parsed, echo)
        except _BadRequest as exc:
            entry.status = 400
            self._send_error(h, api, 400, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a broken responder shows up as a 500 the test can read
            entry.status = 500
            self._send_error(h, api, 500, f"fake server responder failed: {type(exc).__name__}: {exc}")
            return
        entry.status = 200
        if fault is not None and fault.kind == "trickle":
            self._trickle(h, entry, json.dumps(payload).encode("utf-8"), fault.seconds)
            return
        h._send_json(200, payload)

    def _trickle(self, h: _Handler, entry: LoggedRequest, data: bytes, interval: float) -> None:
        """A 200 whose body arrives one byte every ``interval`` seconds (never a read timeout, no end in sight)."""
        entry.body_size = len(data)
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.flush()
        try:
            for i in range(len(data)):
                if self._stopped.wait(interval):
                    break
                h.wfile.write(data[i : i + 1])
                h.wfile.flush()
                entry.bytes_sent = i + 1
        except OSError:  # the client hung up: what a deadline should make it do
            pass
        h.close_connection = True

    @staticmethod
    def _presented_key(headers: Mapping[str, str]) -> str | None:
        for name in ("x-goog-api-key", "api-key", "x-api-key"):  # Gemini, Azure OpenAI, Anthropic
            if name in headers:
                return headers[name]
        auth = headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def _parse(self, api: str, path: str, body: Any, headers: Mapping[str, str]) -> FakeRequest:
        if not isinstance(body, dict) or "_unparsed" in body:
            raise ValueError("request body is not a JSON object")
        if api == "anthropic":
            return fake_anthropic.parse(path, body, headers)
        if api == "gemini":
            match = _GEMINI_PATH.match(path)
            assert match is not None
            messages: list[tuple[str, str]] = []
            system = body.get("systemInstruction") or body.get("system_instruction")
            if isinstance(system, dict):
                messages.append(("system", _gemini_text(system.get("parts"))))
            for content in body.get("contents") or []:
                role = "assistant" if content.get("role") == "model" else "user"
                messages.append((role, _gemini_text(content.get("parts"))))
            config = body.get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            n = int(config.get("candidateCount") or 1)
            return FakeRequest("gemini", path, match.group("model"), tuple(messages), schema, n, body, dict(headers))
        azure = _AZURE_PATH.match(path)
        if azure is not None:  # the deployment answers, whatever the body's model says
            body = {**body, "model": azure.group("deployment")}
        if path.endswith("/chat/completions"):
            messages = [(str(m.get("role", "user")), _openai_text(m.get("content"))) for m in body.get("messages") or []]
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
                messages.append((str(m.get("role", "user")), _openai_text(m.get("content"))))
            return FakeRequest("openai", path, str(body.get("model", "")), tuple(messages), None, 1, body, dict(headers))
        if path.endswith("/embeddings"):
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else list(texts or [])
            return FakeRequest("openai", path, str(body.get("model", "")), tuple(("user", str(t)) for t in texts), None, 1, body, dict(headers))
        raise ValueError(f"unknown endpoint {path}")

    def _answers(self, request: FakeRequest, echo: str = "") -> list[str]:
        answer = self.responder(request)
        items = answer if isinstance(answer, list) else [answer]
        if echo:
            items = [_append_to_strings(a, echo) for a in items]
        texts = [a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) for a in items]
        count = 1 if self.ignore_n else max(1, request.n)
        return [texts[i % len(texts)] for i in range(count)]

    def _chat_answer(self, request: FakeRequest, echo: str = "") -> dict[str, Any]:
        texts = self._answers(request, echo)
        prompt_tokens = _tokens(request.prompt)
        completion_tokens = sum(_tokens(t) for t in texts)
        if request.api == "anthropic":
            written, read = self.claude_cache.usage(request.body, _tokens)
            return fake_anthropic.message(request, texts[0], prompt_tokens, completion_tokens, written, read, self.total_requests)
        cached = 0 if self.prefix_cache is None else self.prefix_cache.lookup_and_add(request.model, request.prompt, prompt_tokens)
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
                "responseId": f"fake-{self.total_requests}",
            }
        if request.path.endswith("/responses"):
            return _responses_answer(request, texts[0], prompt_tokens, completion_tokens, cached)
        return {
            "id": f"chatcmpl-fake-{self.total_requests}",
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

    def _vertex_predict(self, model: str, body: dict[str, Any]) -> dict[str, Any]:
        """Vertex AI's text-embedding ``:predict`` (what google-genai sends for ``embed_content`` with
        ``vertexai=True``); gemini-embedding models take one instance a request there."""
        instances = body.get("instances") or []
        if model.startswith("gemini-embedding") and len(instances) > 1:
            raise _BadRequest(f"{model} accepts only 1 instance per request, got {len(instances)}")
        return {"predictions": [
            {"embeddings": {"values": fake_embedding(str(i.get("content", "")), self.embed_dim),
                            "statistics": {"token_count": _tokens(str(i.get("content", ""))), "truncated": False}}}
            for i in instances
        ]}

    def _embedding_answer(self, api: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if api == "gemini":
            if path.endswith(":batchEmbedContents"):
                texts = [_gemini_text((r.get("content") or {}).get("parts")) for r in body.get("requests") or []]
                return {"embeddings": [{"values": fake_embedding(t, self.embed_dim)} for t in texts]}
            text = _gemini_text((body.get("content") or {}).get("parts"))
            return {"embedding": {"values": fake_embedding(text, self.embed_dim)}}
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        data = []
        for i, text in enumerate(texts):
            vec = fake_embedding(str(text), self.embed_dim)
            if body.get("encoding_format") == "base64":
                value: Any = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
            else:
                value = vec
            data.append({"object": "embedding", "index": i, "embedding": value})
        tokens = sum(_tokens(str(t)) for t in texts)
        return {"object": "list", "data": data, "model": body.get("model", ""), "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def _send_error(self, h: _Handler, api: str, status: int, message: str, headers: Mapping[str, str] | None = None, details: list | None = None) -> None:
        if api == "anthropic":
            h._send_json(status, fake_anthropic.error_body(status, message), headers)
        elif api == "gemini":
            names = {400: "INVALID_ARGUMENT", 408: "DEADLINE_EXCEEDED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
            error: dict[str, Any] = {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}
            if details:
                error["details"] = details
            h._send_json(status, {"error": error}, headers)
        else:
            kind = "rate_limit_exceeded" if status == 429 else ("server_error" if status >= 500 else "invalid_request_error")
            h._send_json(status, {"error": {"message": message, "type": kind, "code": status}}, headers)

    def _send_fault(self, h: _Handler, api: str, fault: Fault, presented: str | None, authorization: str = "") -> int:
        if fault.kind == "malformed":
            h._send_raw(200, b'{"choices": [ {"message": this is not json')
            return 200
        if fault.kind == "rate_limit":
            headers: dict[str, str] = {}
            details = None
            if fault.retry_after is not None:
                if api == "gemini" and fault.status != 429:
                    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{fault.retry_after:g}s"}]
                else:
                    headers["Retry-After"] = f"{fault.retry_after:g}"
            self._send_error(h, api, 429, fault.message or "Rate limit reached. Please try again later.", headers, details)
            return 429
        if fault.kind == "echo_key":
            status = fault.status or 400
            self._send_error(h, api, status, f"invalid request made with key {presented} (Authorization: {authorization})")
            return status
        status = {"server_error": 500, "request_timeout": 408}.get(fault.kind, fault.status or 500)
        self._send_error(h, api, status, fault.message or f"injected fault {fault.kind}")
        return status
