"""The start of a command: from ``python -m rageval_core evaluate … --provider openai-compatible`` to the first
request the fake server sees (issue 14: requests within 0.2 s of the command), against the floor this machine
sets: the interpreter's start (``python -c pass``) and the provider SDK's import (``python -c "import openai"``).

Each figure is the median of ``--runs`` fresh processes, the server in its own process (``ChildServer``),
``time.time()`` on one clock for both. Beside them, what every command pays first: building the parser alone
(``python -c "from rageval_core.cli import build_parser; build_parser()"``) and the project modules it loads.
Last line: ``first_request_s=<a> interpreter_s=<b> sdk_import_s=<c> parser_s=<d> parser_modules=<n>``.

    python bench/cli_start.py [--runs 5] [--data sample_data/ml_qa_ja.json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fake_llm_server import ChildServer  # noqa: E402


def _wall(code: str) -> float:
    """Seconds a fresh interpreter takes to run ``code`` and exit."""
    started = time.time()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
    return time.time() - started


PARSER = ("import sys; from rageval_core.cli import build_parser; build_parser(); "
          "print(sum(m.split('.')[0] == 'rageval_core' for m in sys.modules))")


def parser_build() -> tuple[float, int]:
    """Seconds a fresh interpreter takes to build the CLI's parser and exit, and the project modules it loaded."""
    started = time.time()
    done = subprocess.run([sys.executable, "-c", PARSER], cwd=ROOT, check=True, capture_output=True, text=True)
    return time.time() - started, int(done.stdout.strip())


def first_request_s(server: ChildServer, data: str, home: Path) -> float:
    """Seconds from starting the command to the first request at the server (the command then runs to its end)."""
    server.reset_log()
    home.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "rageval_core", "--db", str(home / "start.sqlite"), "evaluate", data,
        "--provider", "openai-compatible", "--base-url", server.openai_base_url, "--model", "fake-judge",
        "--embedding-model", "fake-embed", "--metrics", "faithfulness,answer_relevancy", "--judge", "rubric5",
        "--no-cache", "--quiet", "--out", str(home / "out.json"),
    ]
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "fake-key-for-local-server")}
    started = time.time()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"the command failed ({done.returncode}): {done.stderr[-2000:]}")
    received = server.received_times()
    if not received:
        raise RuntimeError("the server saw no request")
    return received[0] - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", default="sample_data/ml_qa_ja.json")
    args = parser.parse_args(argv)
    firsts: list[float] = []
    interp: list[float] = []
    sdk: list[float] = []
    parser_s: list[float] = []
    modules = 0
    with tempfile.TemporaryDirectory() as tmp, ChildServer(latency=0.2) as server:
        for i in range(args.runs):  # interleaved, so the three figures see the same minutes' load
            interp.append(_wall("pass"))
            sdk.append(_wall("import openai"))
            took, modules = parser_build()
            parser_s.append(took)
            firsts.append(first_request_s(server, args.data, Path(tmp) / str(i)))
    load = os.getloadavg()[0]
    print(f"runs={args.runs} load_1min={load:.1f}")
    print("command to first request (s): " + " ".join(f"{x:.2f}" for x in firsts))
    print("python -c pass (s):           " + " ".join(f"{x:.2f}" for x in interp))
    print("python -c 'import openai' (s): " + " ".join(f"{x:.2f}" for x in sdk))
    print(f"parser build, {modules} project modules (s): " + " ".join(f"{x:.3f}" for x in parser_s))
    med = statistics.median
    print(f"first_request_s={med(firsts):.2f} interpreter_s={med(interp):.2f} sdk_import_s={med(sdk):.2f} "
          f"parser_s={med(parser_s):.3f} parser_modules={modules}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
