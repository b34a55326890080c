"""Warming the openai SDK off the request path, once per process.

The first chat (or embeddings) call through the SDK imports that resource's module, fills the SDK's caches
of the request parameters' type hints and builds the pydantic validators of the answer types: 60-140 ms
here. The first wave of a run (16 calls at once) paid it on the request path, every one of them: they
queued on the import lock, then each rebuilt the same caches while holding the interpreter (bench/runner.py:
the first 16 requests reached the server ~175 ms after the run started, and the second wave ~110 ms late).

``start`` makes one throwaway call per API on a background daemon thread as soon as a provider is built,
while the run is still planning. The call goes through the SDK's public surface (``OpenAI(http_client=...)``)
to an in-memory ``MockTransport``: no socket is opened, nothing reaches any server, no key is used, no
limit is taken, nothing is logged, and its answer is thrown away. Whatever the SDK's first call needs is
then ready, whichever SDK version is installed. A failure here only means the first call pays as before.

The embeddings warm-up (and numpy, which the answer's vectors need) waits until the process's first HTTP
request has been on the wire and come back, answered or failed (``request_sent``, called by the guard's
transport after every request, embeddings included; a process that sends nothing never needs it): a run's
first requests are chat requests, and on one interpreter any work done before them delays them (issue 14:
start requests soon after the command). Signalled before the request, the import raced the request's own
connect (the start test saw numpy loaded at the first connection, once in a suite); a run's first
embeddings request comes after a chat answer in any case.
"""

from __future__ import annotations

import json
import threading
from typing import Any

_lock = threading.Lock()
_started: dict[str, threading.Thread] = {}
_first_request = threading.Event()

KINDS = ("chat", "embeddings")
AFTER_FIRST_REQUEST = frozenset({"embeddings"})  # warmed once the first request is out
_BASE_URL = "http://warm-up.invalid/v1"  # never resolved: the mock transport answers in memory


def start(kind: str) -> threading.Thread:
    """Warm the SDK for ``kind`` ("chat" or "embeddings") on a daemon thread (once per process); returns it
    (tests join it)."""
    if kind not in KINDS:
        raise ValueError(f"unknown warm-up kind {kind!r}; known: {', '.join(KINDS)}")
    with _lock:
        thread = _started.get(kind)
        if thread is None:
            thread = threading.Thread(target=_warm_quietly, args=(kind,), name=f"rageval-warm-{kind}", daemon=True)
            _started[kind] = thread
            thread.start()
    return thread


def request_sent() -> None:
    """A request of the process has been on the wire, answered or failed (the deferred warm-ups may go ahead)."""
    if not _first_request.is_set():
        _first_request.set()


def _warm_quietly(kind: str) -> None:
    if kind in AFTER_FIRST_REQUEST:
        _first_request.wait()  # a daemon thread: a process that sends nothing exits all the same
    try:
        warm(kind)
        if kind == "embeddings":
            import numpy  # noqa: F401 - what the first answer's vectors are made into
    except Exception:  # noqa: BLE001 - an optimisation only: the real first call then does this work itself
        pass


def warm(kind: str) -> Any:
    """One ``kind`` call through a throwaway SDK client whose transport answers in memory; returns the SDK's
    parsed answer (tests read it)."""
    import openai

    from rageval_core.llm.transport.httpx_lib import httpx_module

    httpx = httpx_module()

    def answer(request: Any) -> Any:
        return httpx.Response(200, json=_CHAT if kind == "chat" else _EMBEDDINGS, request=request)

    client = openai.OpenAI(
        api_key="warm-up", base_url=_BASE_URL, max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(answer)),
    )
    try:
        if kind == "chat":
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}
            return client.chat.completions.create(
                model="warm-up", messages=[{"role": "system", "content": "-"}, {"role": "user", "content": "-"}],
                temperature=0.0, seed=0, max_tokens=1,
                response_format={"type": "json_schema", "json_schema": {"name": "warm_up", "schema": schema, "strict": True}},
            )
        return client.embeddings.create(model="warm-up", input=["-"], encoding_format="float")
    finally:
        client.close()


# The smallest well-formed answers of each API (what the SDK parses on every real call).
_CHAT: dict[str, Any] = {
    "id": "warm-up", "object": "chat.completion", "created": 0, "model": "warm-up",
    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": json.dumps({"ok": True}), "refusal": None}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2,
              "prompt_tokens_details": {"cached_tokens": 0}},
}
_EMBEDDINGS: dict[str, Any] = {
    "object": "list", "model": "warm-up", "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}],
    "usage": {"prompt_tokens": 1, "total_tokens": 1},
}
