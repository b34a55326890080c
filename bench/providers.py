"""Throughput through the provider wrapper stack, and the request rate a configured rpm limit delivers.

    python bench/providers.py                 # full run: throughput, then a 90-second rpm run at 120
    python bench/providers.py --seconds 15    # quick check of the rpm part

Everything runs against the local fake server (rageval_core/testing/fake_llm) with the real SDKs:

1. Throughput at 100 ms server latency for concurrency 1, 8 and 32, through ``build_llm``'s full stack
   (concurrency limit, retry, rate limit (none), timeout, usage/cost, call hook; cache off so every call
   reaches the server), for the openai-compatible and gemini providers. "efficiency" is the measured
   rate over the ideal ``concurrency / latency``; "overhead" is the extra time per call beyond the latency.
2. A limit of ``--rpm`` (default 120) requests per minute with 8 workers for ``--seconds`` (default 90).
   Request times are taken where the provider sees them (the server's receive time). The measured rate
   is (requests received in the run window - 1) x 60 / (last - first receive time), i.e. the mean spacing,
   which does not jump by one request when the first call's connection setup shifts the window; the check
   also counts the busiest 60-second window. The last line is machine-readable:

       rpm_limit=<N> rpm_measured=<M> ok=<true|false>

   ok when M is within 5% of N and no 60-second window holds more than N requests.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from statistics import median, quantiles

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.llm.base import LLMRequest, Message
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_llm
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer

KEYS = {"openai-compatible": "sk-bench-not-a-real-key", "gemini": "AIza-bench-not-a-real-key"}


def request(i: int) -> LLMRequest:
    return LLMRequest(
        task=EXTRACT_CLAIMS,
        messages=(Message("system", "Extract the claims of the answer as JSON."), Message("user", f"Answer {i}: Paris is the capital of France.")),
        schema=schema_for(EXTRACT_CLAIMS),
    )


def config(provider: str, server: FakeLLMServer, db: Path, **kw: object) -> ProviderConfig:
    base_url = server.gemini_base_url if provider == "gemini" else server.openai_base_url
    return ProviderConfig(provider=provider, model="bench-model", base_url=base_url, api_key=KEYS[provider], cache=False, **kw)  # type: ignore[arg-type]


def throughput(provider: str, concurrency: int, latency: float, db: Path, seconds_per_level: float) -> dict[str, float]:
    """Calls per second through the stack with ``concurrency`` workers (after a short warm-up)."""
    with FakeLLMServer(latency=latency) as server:
        llm = build_llm(config(provider, server, db, concurrency=concurrency), db_path=db)
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(lambda i: llm.complete(request(-1 - i)), range(concurrency)))  # open connections
            n = max(concurrency * 4, int(seconds_per_level * concurrency / latency))
            lat: list[float] = []
            lock = threading.Lock()

            def one(i: int) -> None:
                t = time.perf_counter()
                llm.complete(request(i))
                with lock:
                    lat.append(time.perf_counter() - t)

            start = time.perf_counter()
            list(pool.map(one, range(n)))
            wall = time.perf_counter() - start
    rate = n / wall
    ideal = concurrency / latency
    return {
        "requests": n,
        "wall_s": wall,
        "rate": rate,
        "ideal": ideal,
        "efficiency": rate / ideal,
        "p50_ms": median(lat) * 1000,
        "p95_ms": quantiles(lat, n=20)[18] * 1000,
        "overhead_ms": (wall * concurrency / n - latency) * 1000,
    }


def rpm_run(rpm: int, seconds: float, workers: int, latency: float, db: Path) -> tuple[float, int, int]:
    """(measured rpm, busiest 60-s window, requests in the run window) at a configured ``rpm``."""
    with FakeLLMServer(latency=latency) as server:
        llm = build_llm(config("openai-compatible", server, db, rpm=rpm, concurrency=workers), db_path=db)
        deadline = time.monotonic() + seconds
        counter = iter(range(10**9))
        lock = threading.Lock()

        def worker() -> None:
            while time.monotonic() < deadline:
                with lock:
                    i = next(counter)
                llm.complete(request(i))

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
        for t in threads:
            t.start()
        next_report = time.monotonic() + 15
        while any(t.is_alive() for t in threads):
            time.sleep(0.2)
            if time.monotonic() >= next_report and time.monotonic() < deadline:
                print(f"  ... {server.total_requests} requests so far", flush=True)
                next_report += 15
        starts = sorted(r.received_at for r in server.requests)
    t0 = starts[0]
    in_run = [t for t in starts if t < t0 + seconds]
    busiest = max(sum(1 for s in starts[i:] if s < t + 60.0) for i, t in enumerate(starts))
    span = in_run[-1] - in_run[0]
    measured = (len(in_run) - 1) * 60.0 / span if span > 0 else float("inf")
    return measured, busiest, len(in_run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=90.0, help="length of the rpm run (default 90)")
    parser.add_argument("--rpm", type=int, default=120, help="configured requests-per-minute limit (default 120)")
    parser.add_argument("--latency", type=float, default=0.1, help="fake server latency in seconds (default 0.1)")
    parser.add_argument("--level-seconds", type=float, default=3.0, help="ideal duration of each throughput level")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        if not args.skip_throughput:
            print(f"Throughput through the wrapper stack, fake server latency {args.latency * 1000:.0f} ms")
            print("| provider | concurrency | requests | req/s | ideal req/s | efficiency | p50 ms | p95 ms | overhead ms/call |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for provider in ("openai-compatible", "gemini"):
                for c in (1, 8, 32):
                    r = throughput(provider, c, args.latency, db, args.level_seconds)
                    print(
                        f"| {provider} | {c} | {r['requests']:.0f} | {r['rate']:.1f} | {r['ideal']:.0f} | {r['efficiency']:.0%} "
                        f"| {r['p50_ms']:.0f} | {r['p95_ms']:.0f} | {r['overhead_ms']:.1f} |",
                        flush=True,
                    )
        print(f"\nRate limit: rpm={args.rpm}, 8 workers, {args.seconds:g} s run, fake server latency {args.latency * 1000:.0f} ms", flush=True)
        measured, busiest, count = rpm_run(args.rpm, args.seconds, 8, args.latency, db)
    window_note = "busiest 60-s window" if args.seconds >= 60 else "all requests (run shorter than 60 s)"
    print(f"requests in run window: {count}; {window_note}: {busiest}")
    ok = abs(measured - args.rpm) <= 0.05 * args.rpm and busiest <= args.rpm
    print(f"rpm_limit={args.rpm} rpm_measured={measured:.1f} ok={'true' if ok else 'false'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
