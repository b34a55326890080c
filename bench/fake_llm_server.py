"""The tests' fake LLM server (tests/support/fake_server.py) for benches: one class, imported, never copied.

OpenAI (``/v1/chat/completions``, ``/v1/embeddings``) and Gemini (``:generateContent``, ``:embedContent``)
wire formats; schema-driven answers (a valid instance of the response schema, or of the schema ragas writes
into its prompt after "JSON Schema:"); fixed latency; fault rates (429 with Retry-After, 500, malformed
bodies, hangs); a request log with the sha256 of each body. ``start`` is what the benches call;
run this file to serve it on loopback by hand:

    python bench/fake_llm_server.py --latency 0.2 --rate-limit 0.2 --server-error 0.05 --malformed 0.05 --hang 0.02
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.fake_server import FakeLLMServer, FakeRequest, LoggedRequest  # noqa: E402

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
) -> FakeLLMServer:
    """A started server on 127.0.0.1 with these fault rates per request (stop it with ``.stop()``)."""
    rates = {"rate_limit": rate_limit, "server_error": server_error, "malformed": malformed, "hang": hang}
    server = FakeLLMServer(
        latency=latency, responder=responder, fault_rates={k: v for k, v in rates.items() if v > 0},
        retry_after=retry_after, hang_s=hang_s, fault_seed=seed, max_log=max_log, max_lifetime_s=max_lifetime_s,
    )
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    for name in ("rate-limit", "server-error", "malformed", "hang"):
        parser.add_argument(f"--{name}", type=float, default=0.0, help=f"share of requests answered with {name}")
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--hang-s", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--serve-s", type=float, default=600.0, help="stop after this many seconds")
    args = parser.parse_args(argv)
    server = start(
        latency=args.latency, rate_limit=args.rate_limit, server_error=args.server_error, malformed=args.malformed,
        hang=args.hang, retry_after=args.retry_after, hang_s=args.hang_s, seed=args.seed,
        max_lifetime_s=args.serve_s + 5,
    )
    print(f"serving OpenAI at {server.openai_base_url} and Gemini at {server.gemini_base_url}", flush=True)
    try:
        time.sleep(args.serve_s)
    except KeyboardInterrupt:
        pass
    finally:
        print(dict(outcome_counts(server.requests)), f"repeated_after_success={repeated_after_success(server.requests)}")
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
