"""Soak: 500 distinct rows, the four seed metrics + rubric5, through the CLI against the fake server on
loopback injecting 20 % 429 (Retry-After 1), 5 % 500, 5 % malformed bodies and 2 % hangs.

The evaluation runs as a subprocess (``python -m rageval_core evaluate``) with ``--rpm``; it is SIGKILLed
when about 40 % of the tasks are stored and then resumed with ``--resume``. Printed: rows scored, unscored
results by reason, rows lost (a row without every scorer's results), requests repeated after a success
(the server's view: the same body answered before; and the client's: a logged finished call sent again
after the resume), the most requests in any 60 s window (chat and all) against the limit, re-asks, and
the peak memory of the evaluation processes. Last line:
``rows=500 lost=<n> max_rpm=<m> rpm_limit=<l> unscored_share=<u>``.

    python bench/soak.py [--rows 500] [--rpm 1800] [--latency 0.05] [--concurrency 16] [--kill-at 0.4]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rageval_core.store import probe  # noqa: E402
from bench.fake_llm_server import is_chat, max_in_window, outcome_counts, repeated_after_success, start  # noqa: E402
from bench.rows import soak_rows  # noqa: E402
from bench.runner import task_responder  # noqa: E402

METRICS = "faithfulness,answer_relevancy,context_precision,answer_correctness"
SCORERS = METRICS.split(",") + ["judge:rubric5"]


def _cli_supports(flag: str) -> bool:
    out = subprocess.run([sys.executable, "-m", "rageval_core", "evaluate", "--help"], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return flag in out.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--rpm", type=float, default=1800.0, help="the --rpm limit given to the CLI")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=5.0, help="the CLI's per-call --timeout (hangs end here)")
    parser.add_argument("--kill-at", type=float, default=0.4, help="SIGKILL when this share of tasks is stored")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="rageval-soak-"))
    data = work / "soak.json"
    data.write_text(json.dumps(soak_rows(args.rows), ensure_ascii=False), encoding="utf-8")
    home = work / "home"
    db = home / "rageval.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(RAGEVAL_HOME=str(home), PYTHONPATH=str(ROOT))
    reask = _cli_supports("--reask")
    server = start(latency=args.latency, rate_limit=0.20, server_error=0.05, malformed=0.05, hang=0.02,
                   retry_after=1.0, hang_s=3 * args.timeout, seed=11, responder=task_responder)
    base = [
        sys.executable, "-m", "rageval_core", "evaluate", str(data), "--provider", "openai-compatible",
        "--model", "fake-judge", "--base-url", server.openai_base_url, "--embedding-model", "fake-embed",
        "--metrics", METRICS, "--judge", "rubric5", "--rpm", f"{args.rpm:g}", "--concurrency", str(args.concurrency),
        "--timeout", f"{args.timeout:g}", "--quiet", *(["--reask", "1"] if reask else []),
    ]
    total_tasks = args.rows * len(SCORERS)
    started = time.monotonic()
    try:
        first = subprocess.Popen([*base, "--out", str(work / "first.json")], cwd=work, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while first.poll() is None:
            if probe.finished_tasks(db) >= args.kill_at * total_tasks:
                first.send_signal(signal.SIGKILL)
                break
            time.sleep(0.5)
        first.wait()
        killed_at = time.monotonic() - started
        run_id = probe.latest_run(db)
        stored_at_kill = probe.finished_tasks(db)
        logged_before = set(probe.provider_call_keys(db, str(run_id), failed=False))
        calls_before = probe.last_call_id(db)

        second = subprocess.run([*base, "--out", str(work / "final.json"), "--resume", run_id], cwd=work, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - started
    finally:
        server.stop()
    log = server.requests
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    export = json.loads((work / "final.json").read_text(encoding="utf-8")) if (work / "final.json").exists() else {"rows": []}
    results = [r for row in export["rows"] for r in row["results"]]
    reasons = Counter(r["unscored_reason"] for r in results if r["value"] is None)
    by_row = {row["id"]: {(r["method"], r["metric"]) for r in row["results"]} for row in export["rows"]}
    expected = {pair for row in by_row.values() for pair in row}
    lost = sum(1 for i in range(args.rows) if by_row.get(f"soak-{i:04d}", set()) != expected or not expected)
    rows_fully_scored = sum(1 for row in export["rows"] if row["results"] and all(r["value"] is not None for r in row["results"]))
    after = probe.provider_call_keys(db, str(run_id), calls_before)
    repeated_client = sum(1 for k in after if k in logged_before)
    reasks = probe.reasked_calls(db, str(run_id))
    chat_times = [e.received_at for e in log if is_chat(e)]
    max_chat = max_in_window(chat_times)
    max_all = max_in_window(e.received_at for e in log)
    unscored_share = (sum(reasons.values()) / len(results)) if results else 1.0

    print(f"soak: {args.rows} rows x {len(SCORERS)} scorers ({METRICS} + rubric5), latency {args.latency:g}s, "
          f"concurrency {args.concurrency}, --rpm {args.rpm:g}, --timeout {args.timeout:g}s, re-ask {'on (1)' if reask else 'not in this build'}")
    print(f"server: {len(log)} requests ({len(chat_times)} chat), outcomes {dict(outcome_counts(log))}")
    print(f"SIGKILL at {killed_at:.0f}s with {stored_at_kill}/{total_tasks} tasks stored; resume exit {second.returncode}; "
          f"total wall {wall:.0f}s")
    if second.returncode not in (0, 1):
        print("resume stderr:", second.stderr[-2000:])
    print(f"rows fully scored: {rows_fully_scored}/{args.rows}; results {len(results) - sum(reasons.values())}/{len(results)} scored")
    print(f"unscored by reason: {dict(reasons) or '{}'}")
    print(f"lost rows: {lost}")
    print(f"repeated after success: server view {repeated_after_success(log)} (same body answered before, includes "
          f"answers the killed process never received); client view {repeated_client} (a finished, logged call sent again)")
    print(f"max requests in any 60 s: chat {max_chat}, all {max_all}; limit {args.rpm:g}")
    print(f"re-asks: {reasks if reasks is not None else 'not recorded in this build'}")
    print(f"peak memory of the evaluation processes: {peak_mb:.0f} MB")
    print(f"rows={args.rows} lost={lost} max_rpm={max_all} rpm_limit={args.rpm:g} unscored_share={unscored_share:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
