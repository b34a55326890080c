"""The fake LLM server the tests use (rageval_core.testing.fake_llm) for benches: one class, imported, never copied.

OpenAI (``/v1/chat/completions``, ``/v1/embeddings``) and Gemini (``:generateContent``, ``:embedContent``)
wire formats; schema-driven answers (a valid instance of the response schema, or of the schema ragas writes
into its prompt after "JSON Schema:"); fixed latency; fault rates (429 with Retry-After, 500, malformed
bodies, hangs); a request log with the sha256 of each body. ``start`` is what the benches call;
``ChildServer`` runs it in its own process, so that its CPU (parsing, answering from the schema) does not
compete with the client's for one interpreter, as a real provider's never does. Run this file to serve it
on loopback by hand:

    python bench/fake_llm_server.py --latency 0.2 --rate-limit 0.2 --server-error 0.05 --malformed 0.05 --hang 0.02
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest, LoggedRequest, PrefixCache  # noqa: E402

CHAT_PATHS = ("/chat/completions", ":generateContent")


def start(
    *,
    latency: float = 0.2,
    rate_limit: float = 0.0,
    server_error: float = 0.0,
    malformed: float = 0.0,
    hang: float = 0.0,
    retry_after: float = 1.0,
    hang_s: float = 30.0,
    seed: int = 0,
    responder: Callable[[FakeRequest], Any] | None = None,
    max_log: int = 200_000,
    max_lifetime_s: float = 1800.0,
    cache_min_tokens: int | None = 1024,
    port: int = 0,
) -> FakeLLMServer:
    """A started server on 127.0.0.1 with these fault rates per request (stop it with ``.stop()``).
    ``cache_min_tokens``: the prefix cache's minimum prompt (1,024 as OpenAI and Gemini 2.5 Flash; 0 as a local
    server reusing any prefix; None: no cached tokens reported)."""
    rates = {"rate_limit": rate_limit, "server_error": server_error, "malformed": malformed, "hang": hang}
    server = FakeLLMServer(
        latency=latency, responder=responder, fault_rates={k: v for k, v in rates.items() if v > 0},
        retry_after=retry_after, hang_s=hang_s, fault_seed=seed, max_log=max_log, max_lifetime_s=max_lifetime_s,
        port=port,
    )
    server.prefix_cache = None if cache_min_tokens is None else PrefixCache(min_tokens=cache_min_tokens)
    return server.start()


def is_chat(entry: LoggedRequest) -> bool:
    return any(entry.path.endswith(p) for p in CHAT_PATHS)


def clean_success(entry: LoggedRequest) -> bool:
    """A 200 with a well-formed body (a malformed 200 is a fault, not a success)."""
    return entry.status == 200 and entry.fault != "malformed"


def repeated_after_success(log: Iterable[LoggedRequest]) -> int:
    """Requests whose exact body had already been answered successfully (the server's view of waste)."""
    answered: set[str] = set()
    repeats = 0
    for entry in sorted(log, key=lambda e: e.received_at):
        if entry.body_sha256 in answered:
            repeats += 1
        if clean_success(entry):
            answered.add(entry.body_sha256)
    return repeats


def max_in_window(times: Iterable[float], window_s: float = 60.0) -> int:
    """The most events in any ``window_s`` span (two pointers over the sorted times)."""
    ordered = sorted(times)
    best = start_i = 0
    for i, t in enumerate(ordered):
        while t - ordered[start_i] >= window_s:
            start_i += 1
        best = max(best, i - start_i + 1)
    return best


def outcome_counts(log: Iterable[LoggedRequest]) -> Counter:
    """Requests by outcome: ok, or the injected fault / status."""
    return Counter("ok" if clean_success(e) else (e.fault or str(e.status)) for e in log)


class ChildServer:
    """The fake server in a child process (``responder`` as ``module:function``, importable from the repo
    root). ``total_requests`` asks the child; ``stop()`` (or leaving the ``with``) ends it."""

    def __init__(self, *, latency: float = 0.2, responder: str | None = None, serve_s: float = 1800.0) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--latency", str(latency), "--serve-s", str(serve_s), "--control"]
        if responder:
            cmd += ["--responder", responder]
        self._proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        words = (self._proc.stdout.readline() if self._proc.stdout else "").split()
        if "OpenAI" not in words:
            self.stop()
            raise RuntimeError("the fake server's child process did not start")
        self.openai_base_url = words[words.index("OpenAI") + 2]
        self.gemini_base_url = words[words.index("Gemini") + 2]

    @property
    def total_requests(self) -> int:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("count\n")
        self._proc.stdin.flush()
        return int(json.loads(self._proc.stdout.readline())["total"])

    def received_times(self) -> list[float]:
        """When each logged request reached the child (``time.time()``, one clock for both processes), in order."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("times\n")
        self._proc.stdin.flush()
        return [float(t) for t in json.loads(self._proc.stdout.readline())["received_at"]]

    def reset_log(self) -> None:
        """Forget the logged requests (``total_requests`` keeps counting)."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("reset\n")
        self._proc.stdin.flush()
        self._proc.stdout.readline()

    def stop(self) -> None:
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()

    def __enter__(self) -> ChildServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _responder(spec: str | None) -> Callable[[FakeRequest], Any] | None:
    if not spec:
        return None
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one, printed)")
    for name in ("rate-limit", "server-error", "malformed", "hang"):
        parser.add_argument(f"--{name}", type=float, default=0.0, help=f"share of requests answered with {name}")
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--hang-s", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--serve-s", type=float, default=600.0, help="stop after this many seconds")
    parser.add_argument("--responder", help="module:function answering each request (default: a schema instance)")
    parser.add_argument("--control", action="store_true",
                        help="read commands from stdin ('count', 'times', 'reset'); stop at its end")
    args = parser.parse_args(argv)
    server = start(
        latency=args.latency, rate_limit=args.rate_limit, server_error=args.server_error, malformed=args.malformed,
        hang=args.hang, retry_after=args.retry_after, hang_s=args.hang_s, seed=args.seed,
        max_lifetime_s=args.serve_s + 5, responder=_responder(args.responder), port=args.port,
    )
    print(f"serving OpenAI at {server.openai_base_url} and Gemini at {server.gemini_base_url}", flush=True)
    try:
        if args.control:
            for line in sys.stdin:
                command = line.strip()
                if command == "count":
                    print(json.dumps({"total": server.total_requests}), flush=True)
                elif command == "times":
                    print(json.dumps({"received_at": sorted(e.received_at for e in server.requests)}), flush=True)
                elif command == "reset":
                    server.reset_log()
                    print(json.dumps({"ok": True}), flush=True)
        else:
            time.sleep(args.serve_s)
    except KeyboardInterrupt:
        pass
    finally:
        if not args.control:
            print(dict(outcome_counts(server.requests)), f"repeated_after_success={repeated_after_success(server.requests)}")
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
