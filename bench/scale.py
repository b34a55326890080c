"""Scale: the CLI on 12, 120, 1,200 and 12,000 distinct rows against the fake server at 50 ms a request, and
on 1,000 rows offline. Four seed metrics + rubric5 against the server, all six metrics + rubric5 offline.

Rows against the server are fully distinct (question, answer, ground truth and every context carry the row's
number), so neither the response cache, the claim memo nor the embedding cache makes a row cheaper than
the first. The offline rows are the seed rows with numbered questions and answers (``bench.rows.soak_rows``):
their contexts repeat every 12 rows, as a RAG system's retrieved passages do over a fixed corpus; the
offline encoder embeds each distinct text once a run.

Printed per size: wall time, requests the server answered (chat + embeddings), the ideal wall time
(requests × latency ÷ concurrency), wall ÷ ideal, CPU a row (user + system of the CLI process ÷ rows) and its
peak memory (VmHWM); for each server run, the highest VmRSS by a quarter, half, three quarters and the end of
its wall time (the rows go by at a steady pace, so memory that levels off shows as equal figures). Each size
runs once, in a fresh state dir, as ``python -m rageval_core evaluate``.
After each server run: the store's bytes per result (the database file after a WAL checkpoint ÷ the results it
holds: results, call log, texts, response and embedding caches, light copies and indexes all counted).
Then the prompt cache (``--cache-rows``, default on): the 12 sample rows (sample_data/ml_qa_ja.json) with the
four seed metrics and rubric5 as ``--provider openai --model gpt-4o-mini`` against the fake server, which reports
cached input tokens as OpenAI does (rageval_core/testing/fake_llm/prefix_cache.py), once with OpenAI's 1,024-token minimum and
once without a minimum (a local server reusing any prefix): the share of input tokens cached and the run's cost
against the same tokens all at the input rate.
Last line:
``offline_rows_per_s=<a> wall_over_ideal=<b> cpu_ms_per_row_1200=<c> cpu_ms_per_row_12000=<d> peak_mb_12000=<e>
db_bytes_per_result_12000=<f> cached_share_min0=<g> cached_share_min1024=<h>``
(wall ÷ ideal of the largest server run; ``-`` for a size not run).

``--stop-after S`` stops a server run with Ctrl-C once it has run S seconds (a 12,000-row run takes ~25 minutes
here): its peak memory then covers reading the file, the run's start, S seconds of tasks and the closing
export of what was done, which compares memory across sizes at the same work done; wall, requests and CPU a
row of such a run are not figures of the whole size and print as ``-``.

    python bench/scale.py [--sizes 12 120 1200 12000] [--offline-rows 1000] [--latency 0.05] [--concurrency 16]
                          [--stop-after SECONDS] [--no-cache-run]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fake_llm_server import is_chat, start  # noqa: E402
from bench.runner import task_responder  # noqa: E402
from bench.rows import soak_rows  # noqa: E402

SEED = "faithfulness,answer_relevancy,context_precision,answer_correctness"
ALL = "faithfulness,answer_relevancy,context_precision,context_recall,context_relevance,answer_correctness"


def distinct_rows(n: int) -> list[dict[str, Any]]:
    """``n`` rows from the seed data, every text of row ``i`` numbered ``i``: no two rows share a text."""
    rows = soak_rows(n)
    for i, row in enumerate(rows):
        row["ground_truth"] = f"{row.get('ground_truth') or ''}（{i}）"
        row["contexts"] = [f"{c}（{i}-{k}）" for k, c in enumerate(row.get("contexts") or [])]
    return rows


def _status(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process (its threads included)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def measure(cmd: list[str], work: Path, home: Path, stop_after: float | None = None) -> dict[str, float]:
    """Run the CLI; wall, CPU and peak memory sampled from /proc until just before it exits (Ctrl-C after
    ``stop_after`` seconds when given; ``stopped`` then says so)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.update(RAGEVAL_HOME=str(home), PYTHONPATH=str(ROOT))
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = {"cpu": 0.0, "peak": 0.0, "stopped": 0.0}
    rss: list[tuple[float, float]] = []  # (seconds since start, VmRSS MB), to see whether memory levels off
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr or []), daemon=True)
    reader.start()
    while proc.poll() is None:
        seen["cpu"] = max(seen["cpu"], _cpu_s(proc.pid))
        seen["peak"] = max(seen["peak"], _status(proc.pid, "VmHWM"))
        rss.append((time.monotonic() - started, _status(proc.pid, "VmRSS")))
        if stop_after is not None and not seen["stopped"] and time.monotonic() - started > stop_after:
            proc.send_signal(signal.SIGINT)  # the first Ctrl-C: calls in flight finish, the export is written
            seen["stopped"] = 1.0
        time.sleep(0.2)
    wall = time.monotonic() - started
    reader.join(5)
    if proc.returncode not in ((0, 1, 130) if seen["stopped"] else (0, 1)):
        raise SystemExit(f"{' '.join(cmd[:6])}… exited {proc.returncode}:\n{''.join(err[-20:])}")
    quarters = [max((mb for t, mb in rss if t <= wall * q), default=0.0) for q in (0.25, 0.5, 0.75, 1.0)]
    return {"wall": wall, "cpu": seen["cpu"], "peak": seen["peak"], "stopped": seen["stopped"], "quarters": quarters}


def db_bytes_per_result(home: Path) -> float | None:
    """The store file's size after a WAL checkpoint ÷ the results it holds (None without a store or results)."""
    from rageval_core.store import probe

    return probe.bytes_per_result(home / "rageval.sqlite")


def prompt_cache_run(work: Path, min_tokens: int) -> dict[str, Any]:
    """The 12 sample rows against the fake server with its prefix cache at ``min_tokens``: cached share of the
    input tokens, per method and in all, and the cost next to the same tokens priced without the cached rate."""
    from rageval_core.llm.pricing import PriceTable

    server = start(latency=0.0, responder=task_responder, cache_min_tokens=min_tokens)
    out = work / f"cache-{min_tokens}.json"
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
        env.update(RAGEVAL_HOME=str(work / f"home-cache-{min_tokens}"), PYTHONPATH=str(ROOT),
                   OPENAI_API_KEY="sk-local-fake-server-0000000000")  # the local fake server's, never a real key
        cmd = [sys.executable, "-m", "rageval_core", "evaluate", str(ROOT / "sample_data" / "ml_qa_ja.json"),
               "--provider", "openai", "--model", "gpt-4o-mini", "--base-url", server.openai_base_url,
               "--embedding-model", "text-embedding-3-small", "--metrics", SEED, "--judge", "rubric5",
               "--concurrency", "4", "--quiet", "--out", str(out)]
        subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    finally:
        server.stop()
    cost = json.loads(out.read_text(encoding="utf-8"))["cost"]
    price = PriceTable.load(overrides=False).lookup("gpt-4o-mini")
    assert price is not None
    inp = sum(c["input_tokens"] for c in cost.values())
    hit = sum(c.get("cached_input_tokens", 0) for c in cost.values())
    outp = sum(c["output_tokens"] for c in cost.values())
    return {"share": hit / inp if inp else 0.0, "cost": sum(c["cost_usd"] for c in cost.values()),
            "uncached_cost": (inp * price.input + outp * price.output) / 1_000_000,
            "per_method": {m: (c.get("cached_input_tokens", 0) / c["input_tokens"] if c["input_tokens"] else 0.0)
                           for m, c in cost.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[12, 120, 1200, 12000])
    parser.add_argument("--offline-rows", type=int, default=1000, help="0 to skip the offline run")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--stop-after", type=float, default=None, metavar="SECONDS",
                        help="Ctrl-C each server run after this long (peak memory at the same work done)")
    parser.add_argument("--no-cache-run", action="store_true", help="skip the prompt-cache runs on the 12 sample rows")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rageval-scale-"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC",
          flush=True)
    print(f"{'rows':>6} {'provider':<8} {'wall s':>7} {'requests':>9} {'ideal s':>7} {'wall/ideal':>10} "
          f"{'rows/s':>7} {'CPU ms/row':>10} {'peak MB':>7}", flush=True)
    out: dict[str, str] = {}
    if args.offline_rows:
        n = args.offline_rows
        data = work / "offline.json"
        data.write_text(json.dumps(soak_rows(n), ensure_ascii=False), encoding="utf-8")
        cmd = [sys.executable, "-m", "rageval_core", "evaluate", str(data), "--provider", "offline", "--metrics", ALL,
               "--judge", "rubric5", "--quiet", "--out", str(work / "offline-out.json")]
        m = measure(cmd, work, work / "home-offline")
        print(f"{n:>6} {'offline':<8} {m['wall']:>7.1f} {'-':>9} {'-':>7} {'-':>10} {n / m['wall']:>7.1f} "
              f"{1000 * m['cpu'] / n:>10.1f} {m['peak']:>7.0f}", flush=True)
        out["offline_rows_per_s"] = f"{n / m['wall']:.1f}"
    last_ratio = None
    for n in args.sizes:
        data = work / f"rows-{n}.json"
        data.write_text(json.dumps(distinct_rows(n), ensure_ascii=False), encoding="utf-8")
        server = start(latency=args.latency, responder=task_responder, max_log=max(200_000, 12 * n))
        try:
            cmd = [sys.executable, "-m", "rageval_core", "evaluate", str(data), "--provider", "openai-compatible",
                   "--model", "fake-judge", "--base-url", server.openai_base_url, "--embedding-model", "fake-embed",
                   "--metrics", SEED, "--judge", "rubric5", "--concurrency", str(args.concurrency), "--quiet",
                   "--out", str(work / f"out-{n}.json")]
            m = measure(cmd, work, work / f"home-{n}", args.stop_after)
            requests = len(server.requests)
            chat = sum(1 for e in server.requests if is_chat(e))
        finally:
            server.stop()
        ideal = requests * args.latency / args.concurrency
        if m["stopped"]:
            print(f"{n:>6} {'server':<8} {'-':>7} {'-':>9} {'-':>7} {'-':>10} {'-':>7} {'-':>10} {m['peak']:>7.0f}   "
                  f"(stopped after {args.stop_after:.0f} s: {requests} requests, {m['cpu']:.0f} s CPU)", flush=True)
            out[f"peak_mb_{n}"] = f"{m['peak']:.0f}"
            continue
        last_ratio = m["wall"] / ideal if ideal else None
        print(f"{n:>6} {'server':<8} {m['wall']:>7.1f} {requests:>9} {ideal:>7.1f} {last_ratio:>10.2f} {n / m['wall']:>7.1f} "
              f"{1000 * m['cpu'] / n:>10.1f} {m['peak']:>7.0f}   ({chat} chat, {requests - chat} embeddings: "
              f"{chat / n:.1f} + {(requests - chat) / n:.1f} a row)", flush=True)
        print(f"{'':>6} highest RSS by a quarter, half, three quarters and the end of the run: "
              + " / ".join(f"{mb:.0f}" for mb in m["quarters"]) + " MB", flush=True)
        per_result = db_bytes_per_result(work / f"home-{n}")
        if per_result is not None:
            print(f"{'':>6} store: {per_result:.0f} bytes a result", flush=True)
            out[f"db_bytes_per_result_{n}"] = f"{per_result:.0f}"
        out[f"cpu_ms_per_row_{n}"] = f"{1000 * m['cpu'] / n:.1f}"
        out[f"peak_mb_{n}"] = f"{m['peak']:.0f}"
    if not args.no_cache_run:
        for min_tokens in (1024, 0):
            c = prompt_cache_run(work, min_tokens)
            methods = ", ".join(f"{m} {v:.0%}" for m, v in c["per_method"].items())
            print(f"prompt cache, 12 sample rows, minimum {min_tokens} tokens: {c['share']:.1%} of input tokens cached"
                  f" ({methods}); cost ${c['cost']:.5f} against ${c['uncached_cost']:.5f} without the cached rate", flush=True)
            out[f"cached_share_min{min_tokens}"] = f"{c['share']:.3f}"
    keys = ["offline_rows_per_s", "wall_over_ideal", "cpu_ms_per_row_1200", "cpu_ms_per_row_12000", "peak_mb_12000",
            "db_bytes_per_result_12000", "cached_share_min0", "cached_share_min1024"]
    out["wall_over_ideal"] = "-" if last_ratio is None else f"{last_ratio:.2f}"
    print(" ".join(f"{k}={out.get(k, '-')}" for k in keys))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
