"""A local fake LLM server speaking the OpenAI and Gemini wire formats, for adapter tests and benches.

Why a real HTTP server instead of mocks: the adapter tests must run the real ``openai`` and
``google-genai`` SDKs end to end (no SDK internals patched), and the benches must measure the wrapper
stack over real sockets. The server therefore sets TCP_NODELAY on every accepted socket and listens
with a backlog of 128 (DESIGN.md: without both, each response pays ~45 ms of delayed-ACK stall and
bursts lose connections).

Endpoints:

- ``POST /v1/chat/completions`` (OpenAI; ``n``, ``response_format`` json_schema / json_object, usage)
- ``POST /v1/responses`` (OpenAI's Responses API: ``input`` as text or messages, ``instructions``; the answer as one
  ``message`` output item with an ``output_text`` part)
- ``POST /v1/embeddings`` (OpenAI; float or base64 encoding, as the SDK asks by default)
- ``POST /v1beta/models/{model}:generateContent`` (Gemini; ``x-goog-api-key``, candidateCount,
  usageMetadata), ``:embedContent`` and ``:batchEmbedContents`` (also under ``/v1/``), ``:countTokens`` (here and
  under Vertex's project paths: ``totalTokens``, the server's ~4 characters a token)
- batch jobs: OpenAI ``/v1/files`` + ``/v1/batches``, Gemini ``:batchGenerateContent`` + ``/v1beta/batches/{id}``
  (``server.batches``, see ``batch``)

Settable at any time (thread-safe): ``latency`` (seconds, or a function of the request), ``responder``
(request → answer text, a dict sent as JSON, or a list with one answer per choice), queued faults
(``fault("rate_limit", retry_after=2)`` etc.), ``prefix_cache`` (cached input tokens reported as OpenAI and Gemini
do, ``prefix_cache``: 1,024-token minimum, 128-token blocks; None turns it off), ``reject_json_schema`` (llama.cpp behaviour: HTTP 500 on
``response_format`` type json_schema), ``reject_response_json_schema`` / ``reject_response_schema`` (Gemini:
400 INVALID_ARGUMENT "Unknown name" for that generationConfig field), ``ignore_n`` (one choice whatever ``n`` asks), and ``api_key`` (when set, requests must carry it). Every request is
logged (path, headers without secrets, body, its sha256, status, injected fault) in a bounded log so tests
can count calls and benches can find requests repeated after a success.

Fault rates (benches): ``fault_rates={"rate_limit": 0.2, "server_error": 0.05, "malformed": 0.05, "hang": 0.02}``
draws one fault (or none) per model request from a seeded generator, after the queued faults; a 429 carries
``Retry-After: retry_after``, a hang answers only after ``hang_s``. Schema-driven answers: a request with a
response schema (or, as ragas sends it, a prompt with "JSON Schema: {...}") gets a valid instance of it.
``bench/fake_llm_server.py`` serves this same class from the command line. It ships in ``rageval_core.testing``
(as httpx ships its mock transport) so the benches and a user's own tests use the server the project's tests use.

Usage::

    with FakeLLMServer(latency=0.1) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0)
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from rageval_core.testing.fake_llm import anthropic, formats
from rageval_core.testing.fake_llm.anthropic import AnthropicBatches, PromptCacheState
from rageval_core.testing.fake_llm.batch import FakeBatches
from rageval_core.testing.fake_llm.sockets import Handler, Server
from rageval_core.testing.fake_llm.prefix_cache import PrefixCache
from rageval_core.testing.fake_llm.wire import (
    AZURE_PATH,
    GEMINI_PATH,
    SECRET_HEADERS,
    BadRequest,
    FakeRequest,
    Fault,
    LoggedRequest,
    Responder,
    append_to_strings,
    default_responder,
    tokens,
)

__all__ = ["FakeLLMServer"]


@dataclass
class _Incoming:
    """One request as read: path and query, raw body and its JSON, headers (and a copy without secrets), the key
    the client presented, the API it speaks, and its log entry."""

    path: str
    query: str
    raw: bytes
    body: Any
    headers: dict[str, str]
    safe_headers: dict[str, str]
    presented: str | None
    api: str
    entry: LoggedRequest


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
        # Cached input tokens as the providers report them (``prefix_cache``); None: never cached.
        self.prefix_cache: PrefixCache | None = PrefixCache()
        self.batches = FakeBatches(self)  # the OpenAI Batch API and Gemini batch mode (``batch``)
        self.anthropic_batches = AnthropicBatches(self)  # Anthropic's Message Batches (``anthropic``)
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
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # lifecycle -------------------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        if self._server is not None:
            return self
        self._server = Server(self, self._max_threads, self.port_wanted)
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

    # handling -----------------------------------------------------------------------------------------
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

    def handle_marked(self, h: Handler) -> None:
        """``handle``, then the request's ``finished`` event (a test can wait for the server side to end)."""
        try:
            self.handle(h)
        finally:
            entry = getattr(h, "_entry", None)
            if entry is not None:
                entry.finished.set()

    def handle(self, h: Handler) -> None:
        """Answer one request: faults, batches, refusals, then the responder's answer in the API's shape."""
        inc = self._read(h)
        if self._answered_before_faults(h, inc):
            return
        fault = self._take_fault(inc.path)
        inc.entry.fault = None if fault is None else fault.kind
        if fault is not None and fault.kind == "disconnect":
            inc.entry.status = -1
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if FakeBatches.handles(h.command, inc.path) or AnthropicBatches.handles(inc.path):
            self._batch(h, inc, fault)
            return
        try:
            parsed = formats.parse(inc.api, inc.path, inc.body, inc.safe_headers)
        except ValueError as exc:
            inc.entry.status = 400
            formats.send_error(h, inc.api, 400, str(exc))
            return
        delay = self.latency(parsed) if callable(self.latency) else float(self.latency)
        if delay > 0:
            self._stopped.wait(delay)
        if fault is not None and fault.kind == "hang":
            if self._stopped.wait(fault.seconds):
                return
            fault = None
        if fault is not None and fault.kind != "trickle":
            inc.entry.status = formats.send_fault(h, inc.api, fault, inc.presented, inc.headers.get("authorization", ""))
            return
        refused = formats.refusal(inc.api, inc.path, inc.body, self._refusal_flags())
        if refused is not None:
            status, error = refused
            inc.entry.status = status
            if isinstance(error, str):
                formats.send_error(h, inc.api, status, error)
            else:
                h.send_json(status, error)
            return
        self._answer(h, inc, parsed, fault)

    def _read(self, h: Handler) -> _Incoming:
        """The request read and logged (the log never holds a key)."""
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        path, _, query = h.path.partition("?")
        headers = {k.lower(): v for k, v in h.headers.items()}
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
        api = (self.batches.api_of(path) if FakeBatches.handles(h.command, path) else
               "gemini" if GEMINI_PATH.match(path) else "anthropic" if anthropic.is_anthropic(path) else "openai")
        return _Incoming(path, query, raw, body, headers, safe_headers, formats.presented_key(headers), api, entry)

    def _answered_before_faults(self, h: Handler, inc: _Incoming) -> bool:
        """Google's OAuth token endpoint, Azure's 404 without an api-version and a wrong key: answered here."""
        if inc.path == "/token":  # Google's OAuth token endpoint (service-account JWT grant), for Vertex AI
            with self._lock:
                self.token_requests += 1
            inc.entry.status = 200
            h.send_json(200, {"access_token": self.oauth_token, "expires_in": 3600, "token_type": "Bearer"})
            return True
        if AZURE_PATH.match(inc.path) and "api-version=" not in inc.query:
            inc.entry.status = 404  # what Azure answers a deployment call without an api-version
            h.send_json(404, {"error": {"code": "404", "message": "Resource not found"}})
            return True
        if self.api_key is not None and inc.presented != self.api_key:
            inc.entry.status = formats.auth_failure(h, inc.api)
            return True
        return False

    def _batch(self, h: Handler, inc: _Incoming, fault: Fault | None) -> None:
        """A batch endpoint (OpenAI / Azure, Gemini, Anthropic) answered by its job store."""
        if fault is not None and fault.kind != "hang":
            inc.entry.status = formats.send_fault(h, inc.api, fault, inc.presented)
            return
        if AnthropicBatches.handles(inc.path):
            status, data, content_type = self.anthropic_batches.handle(h.command, inc.path, inc.body)
        else:
            status, data, content_type = self.batches.handle(h.command, inc.path, inc.raw, inc.headers)
        inc.entry.status = status
        h.send_raw(status, data, content_type=content_type)

    def _refusal_flags(self) -> dict[str, bool]:
        return {name: bool(getattr(self, name)) for name in (
            "reject_response_json_schema", "reject_response_schema", "reject_output_format", "reject_strict_schema",
            "reject_json_schema", "reject_json_object_schema")}

    def _answer(self, h: Handler, inc: _Incoming, parsed: FakeRequest, fault: Fault | None) -> None:
        """The answer to a model request (chat, embeddings, token count), or a 400 / 500 when it cannot be given."""
        try:
            echo = (f" [seen: key {inc.presented}; url {h.path}; authorization {inc.headers.get('authorization', '')}]"
                    if self.echo_secrets_in_answers else "")
            if inc.path == "/v1/messages/count_tokens":
                payload: Any = {"input_tokens": tokens(parsed.prompt)}
            elif inc.path.endswith(":countTokens"):  # Gemini API and Vertex AI
                payload = {"totalTokens": tokens(parsed.prompt)}
            elif inc.path.endswith(":predict"):
                payload = formats.vertex_predict(parsed.model, inc.body, self.embed_dim)
            elif "embed" in inc.path.lower():
                payload = formats.embedding_answer(inc.api, inc.path, inc.body, self.embed_dim)
            else:
                payload = self.chat_answer(parsed, echo)
        except BadRequest as exc:
            inc.entry.status = 400
            formats.send_error(h, inc.api, 400, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a broken responder shows up as a 500 the test can read
            inc.entry.status = 500
            formats.send_error(h, inc.api, 500, f"fake server responder failed: {type(exc).__name__}: {exc}")
            return
        inc.entry.status = 200
        if fault is not None and fault.kind == "trickle":
            self._trickle(h, inc.entry, json.dumps(payload).encode("utf-8"), fault.seconds)
            return
        h.send_json(200, payload)

    def _trickle(self, h: Handler, entry: LoggedRequest, data: bytes, interval: float) -> None:
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

    def _answers(self, request: FakeRequest, echo: str = "") -> list[str]:
        answer = self.responder(request)
        items = answer if isinstance(answer, list) else [answer]
        if echo:
            items = [append_to_strings(a, echo) for a in items]
        texts = [a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) for a in items]
        count = 1 if self.ignore_n else max(1, request.n)
        return [texts[i % len(texts)] for i in range(count)]

    def parse_request(self, api: str, path: str, body: Any, headers: Mapping[str, str]) -> FakeRequest:
        """A request body as the responder sees it (``formats.parse``); the batch endpoints parse their lines so."""
        return formats.parse(api, path, body, headers)

    def chat_answer(self, request: FakeRequest, echo: str = "") -> dict[str, Any]:
        """The responder's answer to ``request`` in its API's shape, with usage (and cached input tokens)."""
        texts = self._answers(request, echo)
        prompt_tokens = tokens(request.prompt)
        completion_tokens = sum(tokens(t) for t in texts)
        if request.api == "anthropic":
            written, read = self.claude_cache.usage(request.body, tokens)
            return anthropic.message(request, texts[0], prompt_tokens, completion_tokens, written, read, self.total_requests)
        cached = 0 if self.prefix_cache is None else self.prefix_cache.lookup_and_add(request.model, request.prompt, prompt_tokens)
        return formats.chat_payload(request, texts, prompt_tokens, completion_tokens, cached, self.total_requests)
