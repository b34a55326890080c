"""The user's own RAG system as an ``LLM``: an HTTP endpoint or a Python callable.

Why an ``LLM``: the provider stack (per-call timeout, retries, rate limit, concurrency, response cache,
record log) then applies to RAG calls exactly as to judge calls, with no second copy of any of it. The
request is task ``your_rag``: a system message describing the system (URL without credentials, mapping,
header *names* and ``$VARIABLE`` references — never their values), so the cache key changes when the system
does, and the question as the user message. The completion text is JSON ``{"answer", "contexts",
"context_ids", "latency_s", "reply"}`` (``reply`` = what the system sent back, for "try one question").

Header values may name environment variables (``Authorization: Bearer $MY_RAG_TOKEN``); they are read at
call time, never stored, remembered by the one redaction step (``rageval_core.core.redact``) and redacted from every
message and reply. Literal header values and URL credentials enter the response-cache key only as a keyed
digest (``credentials``), so two tokens never share cached answers.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib
import inspect
import json
import os
import re
import socket
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rageval_core.llm.base import Completion, LLMRequest, Message, ProviderError, canonical_json
from rageval_core.llm.transport.http_errors import kind_for_status, parse_retry_after
from rageval_core.core.redact import REDACTED, redact, redact_url, remember, url_secrets
from rageval_core.rag.your_rag.mapping import MappingError, RagMapping, RagReply, build_body, read_reply
from rageval_core.core.errors import ConfigError

TASK = "your_rag"
_VAR = re.compile(r"\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
_MAX_REPLY = 20_000_000  # bytes read from one reply at most


def system_request(descriptor: Mapping[str, Any], question: str, metadata: Mapping[str, Any] | None = None) -> LLMRequest:
    """The request for one question (temperature 0: cacheable; a re-run asks nothing again)."""
    return LLMRequest(
        task=TASK,
        messages=(Message("system", canonical_json(dict(descriptor))), Message("user", question)),
        inputs={"question": question, "metadata": dict(metadata or {})},
    )


def parse_header(text: str) -> tuple[str, str]:
    """``'Authorization: Bearer $TOKEN'`` → (name, value template)."""
    name, sep, value = text.partition(":")
    if not sep or not name.strip() or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name.strip()):
        raise ConfigError(f"header {text!r}: expected 'Name: value', e.g. 'Authorization: Bearer $MY_RAG_TOKEN'")
    return name.strip(), value.strip()


def safe_url(url: str) -> str:
    """``url`` without userinfo and with secret-looking query values replaced (what may be stored or shown)."""
    return redact_url(url) or ""


def _reply_text(reply: RagReply, latency_s: float, raw: Any) -> str:
    return json.dumps(
        {"answer": reply.answer, "contexts": list(reply.contexts),
         "context_ids": None if reply.context_ids is None else list(reply.context_ids),
         "latency_s": round(latency_s, 4), "reply": raw},
        ensure_ascii=False,
    )


class EndpointRAG:
    """POST each question as JSON to ``url`` and read the reply through ``mapping``.

    The deadline bounds the whole call (connect, send and every read), so a server that trickles its reply
    cannot outlast ``timeout_s``. 429 / 5xx / connection failures are retryable ``ProviderError``s.
    """

    provider = "endpoint"

    def __init__(
        self,
        url: str,
        *,
        mapping: RagMapping | None = None,
        headers: Sequence[str] | Mapping[str, str] = (),
        timeout_s: float = 60.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"endpoint {safe_url(url)!r}: use an http:// or https:// URL")
        self._url = url
        self.url = safe_url(url)
        self.model = self.url
        self.mapping = mapping or RagMapping()
        pairs = list(headers.items()) if isinstance(headers, Mapping) else [parse_header(h) for h in headers]
        self._headers = pairs
        # Literal header values and the URL's credentials: secrets from now on, and what tells two systems
        # at one URL apart in the cache key (as a keyed digest only, ``CachedLLM``).
        self.credentials = tuple(dict.fromkeys([v for _, v in pairs if v and not _VAR.search(v)] + url_secrets(url)))
        remember(*self.credentials)
        self.timeout_s = timeout_s
        self._environ = os.environ if environ is None else environ
        self.descriptor = {
            "system": "endpoint",
            "url": self.url,
            "mapping": self.mapping.to_dict(),
            # Names and $VARIABLE references only: a literal value may be a token and is not kept.
            "headers": {name: (value if _VAR.search(value) else REDACTED) for name, value in pairs},
        }

    def _resolved_headers(self) -> tuple[dict[str, str], list[str]]:
        """Header values with ``$NAME`` read from the environment now, and the secrets to scrub."""
        out: dict[str, str] = {}
        secrets: list[str] = []
        for name, template in self._headers:
            value = template
            for match in _VAR.finditer(template):
                key = match.group(1).strip("{}")
                if key not in self._environ:
                    raise ProviderError(f"header {name}: environment variable ${key} is not set", kind="bad_request")
                secrets.append(self._environ[key])
                value = value.replace(match.group(0), self._environ[key], 1)
            out[name] = value
            if not _VAR.search(template):
                secrets.append(value)
        remember(*secrets)
        return out, [*secrets, *self.credentials]

    def complete(self, request: LLMRequest) -> Completion:
        question = str(request.inputs.get("question", ""))
        body = json.dumps(build_body(self.mapping, question, request.inputs.get("metadata")), ensure_ascii=False).encode("utf-8")
        headers, secrets = self._resolved_headers()
        started = time.monotonic()
        try:
            status, reply_headers, data = self._post(body, headers, started + self.timeout_s)
        except ProviderError as exc:
            raise ProviderError(redact(str(exc), secrets), kind=exc.kind, status=exc.status,
                                retry_after=exc.retry_after, retryable=exc.retryable) from None
        latency = time.monotonic() - started
        text = redact(data.decode("utf-8", errors="replace"), secrets)
        if 300 <= status < 400:
            raise ProviderError(_redirect_message(self.url, status, reply_headers.get("location")), kind="bad_request",
                                status=status)
        if status >= 400:
            kind, retryable = kind_for_status(status)
            raise ProviderError(f"{self.url}: HTTP {status}: {text[:300]}", kind=kind, status=status,
                                retry_after=parse_retry_after(reply_headers), retryable=retryable)
        try:
            raw = json.loads(text)
        except ValueError:
            raise ProviderError(f"{self.url}: the reply is not JSON: {text[:200]!r}", kind="malformed_response") from None
        try:
            reply = read_reply(self.mapping, raw)
        except MappingError as exc:
            raise ProviderError(f"{self.url}: the reply does not fit the mapping ({exc})", kind="malformed_response") from None
        return Completion([_reply_text(reply, latency, raw)], provider=self.provider, model=self.model, latency_s=latency, raw=raw)

    def _post(self, body: bytes, headers: Mapping[str, str], deadline: float) -> tuple[int, dict[str, str], bytes]:
        parts = urllib.parse.urlsplit(self._url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "", parts.port, timeout=max(0.01, deadline - time.monotonic()))
        send = {"Content-Type": "application/json", "Accept": "application/json", **headers}
        if parts.username or parts.password:
            import base64

            token = base64.b64encode(f"{urllib.parse.unquote(parts.username or '')}:{urllib.parse.unquote(parts.password or '')}".encode()).decode()
            send.setdefault("Authorization", f"Basic {token}")
        try:
            conn.request("POST", path, body=body, headers=send)
            response = conn.getresponse()
            chunks: list[bytes] = []
            size = 0
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise socket.timeout()
                if conn.sock is not None:
                    conn.sock.settimeout(remaining)
                chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > _MAX_REPLY:
                    raise ProviderError(f"{self.url}: reply larger than {_MAX_REPLY // 1_000_000} MB", kind="malformed_response")
                chunks.append(chunk)
            return response.status, {k.lower(): v for k, v in response.getheaders()}, b"".join(chunks)
        except (socket.timeout, TimeoutError):
            raise ProviderError(f"{self.url}: no complete reply within {self.timeout_s:g} s", kind="timeout", retryable=True) from None
        except (OSError, http.client.HTTPException) as exc:
            raise ProviderError(f"{self.url}: cannot reach the endpoint ({type(exc).__name__}: {exc})", kind="connection",
                                retryable=True) from None
        finally:
            conn.close()


def _redirect_message(url: str, status: int, location: str | None) -> str:
    """A redirect said as one: not followed (the request's credentials would go to wherever it points), where
    it points shown without userinfo or query (they may carry tokens)."""
    where = "no Location"
    if location:
        parts = urllib.parse.urlsplit(urllib.parse.urljoin(url, location))
        host = parts.hostname or ""
        where = f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"
    return (f"{url}: HTTP {status} redirect to {where}, not followed (credentials are never sent on to another "
            f"address); point --endpoint at the final URL")


def load_callable(spec: str) -> Callable[..., Any]:
    """``package.module:function`` → the function (``ValueError`` with what went wrong)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"--callable {spec!r}: expected package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"--callable {spec!r}: cannot import {module_name} ({exc})") from None
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"--callable {spec!r}: {module_name} has no {attr}")
    if not callable(target):
        raise ConfigError(f"--callable {spec!r}: {attr} is not callable")
    return target


def _takes_metadata(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def reply_from_value(value: Any, mapping: RagMapping) -> RagReply:
    """A callable's return value: a dict read through the mapping, or an ``(answer, contexts)`` pair."""
    if isinstance(value, tuple) and len(value) == 2:
        answer, contexts = value
        value = {"answer": answer, "contexts": list(contexts) if isinstance(contexts, (list, tuple)) else contexts}
        mapping = RagMapping(context_text=mapping.context_text)
    return read_reply(mapping, value)


class CallableRAG:
    """A Python function (sync or async) called with the question, and the row's metadata when it takes a
    second argument; it returns a dict (read through the mapping) or an ``(answer, contexts)`` pair."""

    provider = "callable"

    def __init__(self, spec: str | Callable[..., Any], *, mapping: RagMapping | None = None) -> None:
        self.fn = load_callable(spec) if isinstance(spec, str) else spec
        self.model = spec if isinstance(spec, str) else f"{getattr(spec, '__module__', '?')}:{getattr(spec, '__qualname__', '?')}"
        self.mapping = mapping or RagMapping()
        self._with_metadata = _takes_metadata(self.fn)
        self.descriptor = {"system": "callable", "callable": self.model, "mapping": self.mapping.to_dict()}

    def complete(self, request: LLMRequest) -> Completion:
        question = str(request.inputs.get("question", ""))
        args: tuple[Any, ...] = (question, dict(request.inputs.get("metadata") or {})) if self._with_metadata else (question,)
        started = time.monotonic()
        try:
            value = self.fn(*args)
            if inspect.isawaitable(value):
                value = asyncio.run(_await(value))  # each call runs on its own worker thread: no loop is nested
        except ProviderError:
            raise
        except Exception as exc:  # the user's code failed on this question: mark the row, go on
            raise ProviderError(f"{self.model}: raised {type(exc).__name__}: {exc}", kind="server", retryable=False) from None
        latency = time.monotonic() - started
        try:
            reply = reply_from_value(value, self.mapping)
        except MappingError as exc:
            raise ProviderError(f"{self.model}: the return value does not fit ({exc})", kind="malformed_response") from None
        raw = value if isinstance(value, dict) else {"answer": reply.answer, "contexts": list(reply.contexts)}
        try:
            json.dumps(raw)
        except TypeError:
            raw = {"answer": reply.answer, "contexts": list(reply.contexts)}
        return Completion([_reply_text(reply, latency, raw)], provider=self.provider, model=self.model, latency_s=latency, raw=raw)


async def _await(value: Any) -> Any:
    return await value
