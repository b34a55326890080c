"""Streaming at scale: the CLI on 1,000 and 100,000 distinct rows (seed rows with numbered questions and answers), the
four seed metrics + rubric5 with the offline provider, each for a bounded time.

Printed per size: seconds until the first progress line, resident memory (VmRSS of the CLI process, sampled
twice a second) at the first progress line and the peak afterwards, and how far the run got. Memory that
stays flat while tasks finish is the point: nothing of a finished task is kept in memory.

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

from bench.soak import soak_rows  # noqa: E402

METRICS = "faithfulness,answer_relevancy,context_precision,answer_correctness"


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(n: int, seconds: float, work: Path) -> dict:
    data = work / f"rows_{n}.json"
    data.write_text(json.dumps(soak_rows(n), ensure_ascii=False), encoding="utf-8")
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
            if line.startswith("progress"):
                last_line[0] = line.strip()
                if not first:
                    first.update(t=time.monotonic() - started, rss=_rss_mb(proc.pid))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    samples: list[tuple[float, float]] = []
    while proc.poll() is None and time.monotonic() - started < seconds:
        samples.append((time.monotonic() - started, _rss_mb(proc.pid)))
        time.sleep(0.5)
    finished = proc.poll() is not None
    if not finished:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    reader.join(timeout=5)
    after_first = [r for t, r in samples if first and t >= first["t"]]
    return {
        "rows": n, "first_progress_s": first.get("t"), "rss_at_first_mb": first.get("rss"),
        "peak_after_first_mb": max(after_first, default=None), "finished": finished, "last": last_line[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--seconds", type=float, default=90.0, help="stop each run (Ctrl-C) after this long")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            m = measure(n, args.seconds, Path(tmp))
            print(
                f"rows={m['rows']} first_progress_s={m['first_progress_s'] and round(m['first_progress_s'], 1)} "
                f"rss_at_first_mb={m['rss_at_first_mb'] and round(m['rss_at_first_mb'])} "
                f"peak_after_first_mb={m['peak_after_first_mb'] and round(m['peak_after_first_mb'])} "
                f"finished={m['finished']} last: {m['last']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
