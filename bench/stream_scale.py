"""Streaming at scale: the CLI on 1,000 and 100,000 distinct rows (seed rows with numbered questions and answers), the
four seed metrics + rubric5 with the offline provider, each for a bounded time.

The rows are written as JSON Lines (100,000 rows make a 98 MB file; from 4 MB the CLI evaluates a file as it reads
it, see ``rageval_core.data.datasets.live``). Printed per size: seconds until the first line on stderr (the estimate),
until the run's first progress line (the run started) and until the first finished task shows in a progress line; resident memory (VmRSS of the CLI process,
sampled twice a second) at the run's first progress line and the peak afterwards, and how far the run got.
Memory that stays flat while tasks finish is the point: nothing of a finished task is kept in memory.

    python bench/stream_scale.py [--sizes 1000 100000] [--seconds 90]
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

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.rows import soak_rows  # noqa: E402
from rageval_core.store import probe  # noqa: E402

METRICS = "faithfulness,answer_relevancy,context_precision,answer_correctness"


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _stored(db: Path) -> int:
    """Results the run has stored so far (0 while the database does not exist or is busy)."""
    return probe.stored_results(db)


def measure(n: int, seconds: float, work: Path) -> dict:
    data = work / f"rows_{n}.jsonl"
    with data.open("w", encoding="utf-8") as fh:
        for row in soak_rows(n):
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    env = {**os.environ, "RAGEVAL_HOME": str(work / f"home-{n}"), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "rageval_core", "evaluate", str(data), "--provider", "offline", "--metrics", METRICS,
           "--judge", "rubric5", "--out", str(work / f"out-{n}.json")]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first: dict = {}
    last_line = [""]

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            now = time.monotonic() - started
            first.setdefault("any", now)
            if line.startswith("progress"):
                last_line[0] = line.strip()
                if "t" not in first:
                    first.update(t=now, rss=_rss_mb(proc.pid))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    samples: list[tuple[float, float]] = []
    db = work / f"home-{n}" / "rageval.sqlite"
    stored = 0
    while proc.poll() is None and time.monotonic() - started < seconds:
        samples.append((time.monotonic() - started, _rss_mb(proc.pid)))
        stored = _stored(db) or stored
        if stored and "task" not in first:
            first["task"] = time.monotonic() - started
        time.sleep(0.5)
    finished = proc.poll() is not None
    if not finished:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    reader.join(timeout=5)
    after_first = [r for t, r in samples if "t" in first and t >= first["t"]]
    return {
        "rows": n, "first_line_s": first.get("any"), "first_progress_s": first.get("t"), "first_task_s": first.get("task"),
        "rss_at_first_mb": first.get("rss"),
        "peak_after_first_mb": max(after_first, default=None), "finished": finished, "last": last_line[0],
        "results_stored": stored, "samples": samples,
    }


def _every_10s(m: dict) -> str:
    """RSS samples 10 s apart from the run's first progress line on (flat is the point)."""
    start = m["first_progress_s"]
    if start is None:
        return "-"
    picked, next_t = [], start
    for t, rss in m["samples"]:
        if t >= next_t:
            picked.append(f"{rss:.0f}")
            next_t += 10.0
    return " ".join(picked)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--seconds", type=float, default=90.0, help="stop each run (Ctrl-C) after this long")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            m = measure(n, args.seconds, Path(tmp))
            print(
                f"rows={m['rows']} first_line_s={m['first_line_s'] and round(m['first_line_s'], 1)} "
                f"first_progress_s={m['first_progress_s'] and round(m['first_progress_s'], 1)} "
                f"first_result_s={m['first_task_s'] and round(m['first_task_s'], 1)} "
                f"rss_at_first_mb={m['rss_at_first_mb'] and round(m['rss_at_first_mb'])} "
                f"peak_after_first_mb={m['peak_after_first_mb'] and round(m['peak_after_first_mb'])} "
                f"results_stored={m['results_stored']} finished={m['finished']}"
            )
            print(f"  rss_mb every 10 s after the first progress line: {_every_10s(m)}")
            print(f"  last progress line: {m['last']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
