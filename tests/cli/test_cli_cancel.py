"""Ctrl-C on ``evaluate`` in a real process: the first sends nothing new, the second exits at once; both name
the run to resume. The bounds on ``wait`` only keep a broken build from hanging the suite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rageval_core.testing.fake_llm import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends SIGINT to a child process")


def _start(tmp_path: Path, server: FakeLLMServer, *extra: str) -> subprocess.Popen:
    rows = [{"id": f"r{i}", "question": "What is dropout?", "contexts": ["Dropout disables units."],
             "answer": f"Dropout disables units. Answer {i}."} for i in range(4)]
    data = tmp_path / "rows.json"
    data.write_text(json.dumps(rows), encoding="utf-8")
    env = dict(os.environ, RAGEVAL_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "rageval_core", "evaluate", str(data), "--provider", "openai-compatible",
           "--base-url", server.openai_base_url, "--model", "m", "--embedding-model", "e", "--metrics", "faithfulness",
           "--no-cache", "--quiet", "--out", str(tmp_path / "out.json"), *extra]
    return subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_first_ctrl_c_sends_nothing_new_and_names_the_run(tmp_path):
    arrived = threading.Event()
    with FakeLLMServer() as server:
        def latency(_request) -> float:
            arrived.set()
            return 5.0  # still in flight when the handler runs, even at high load (a 1 s call could end first)

        server.latency = latency
        proc = _start(tmp_path, server, "--rpm", "6", "--concurrency", "2", "--timeout", "20")
        assert arrived.wait(120), proc.stderr.read() if proc.poll() is not None else "no request arrived"
        at_interrupt = server.total_requests
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert "resume with: --resume " in err
        assert server.total_requests == at_interrupt  # the ones waiting for a rate-limit slot were never sent


def test_second_ctrl_c_exits_at_once_with_the_resume_hint(tmp_path):
    arrived = threading.Event()
    with FakeLLMServer() as server:
        def latency(_request) -> float:
            arrived.set()
            return 60.0  # a call in flight that would keep a clean cancel waiting for a minute

        server.latency = latency
        proc = _start(tmp_path, server, "--timeout", "60")
        assert arrived.wait(120)
        proc.send_signal(signal.SIGINT)
        line = proc.stderr.readline()
        while line and "interrupted" not in line:
            line = proc.stderr.readline()
        assert "resume with: --resume " in line
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)  # far less than the 60 s the call in flight would take
        assert proc.returncode == 130
        assert "aborted; resume with: --resume " in err


def test_first_ctrl_c_on_a_file_read_as_it_goes_sends_nothing_new_and_says_how_far_it_read(tmp_path):
    from rageval_core.cli.evaluate import LIVE_MIN_BYTES

    pad = "x" * 4000
    n = LIVE_MIN_BYTES // len(pad) + 50  # past the size from which the run reads the file as it goes
    data = tmp_path / "rows.jsonl"
    with data.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"r{i}", "question": "What is dropout?", "contexts": ["Dropout disables units."],
                                 "answer": f"Dropout disables units. Answer {i}.", "pad": pad}) + "\n")
    arrived = threading.Event()
    with FakeLLMServer() as server:
        def latency(_request) -> float:
            arrived.set()
            return 5.0

        server.latency = latency
        env = dict(os.environ, RAGEVAL_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
        cmd = [sys.executable, "-m", "rageval_core", "evaluate", str(data), "--provider", "openai-compatible",
               "--base-url", server.openai_base_url, "--model", "m", "--embedding-model", "e", "--metrics", "faithfulness",
               "--no-cache", "--quiet", "--rpm", "6", "--concurrency", "2", "--timeout", "20", "--out", str(tmp_path / "out.json")]
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert arrived.wait(120), proc.stderr.read() if proc.poll() is not None else "no request arrived"
        at_interrupt = server.total_requests
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert server.total_requests == at_interrupt
        assert "resume with: --resume " in err and f"of ~{n:,} rows of rows.jsonl" in err
        assert f"from the first 500 rows, scaled to the file's {n} rows" in err


def test_sigterm_mid_run_is_a_ctrl_c_resumable_with_nothing_lost(tmp_path):
    """``kill PID`` / a container stop: exit 130 naming the run, the rows already scored kept, and ``--resume``
    finishes the rest (before, SIGTERM killed the process with no word)."""
    arrived = threading.Event()
    with FakeLLMServer() as server:
        def latency(_request) -> float:
            arrived.set()
            return 2.0

        server.latency = latency
        proc = _start(tmp_path, server, "--concurrency", "1", "--timeout", "20")
        assert arrived.wait(120), proc.stderr.read() if proc.poll() is not None else "no request arrived"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        run_id = err.split("resume with: --resume ", 1)[1].split()[0]
        server.latency = 0.0
        env = dict(os.environ, RAGEVAL_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
        done = subprocess.run(
            [sys.executable, "-m", "rageval_core", "evaluate", str(tmp_path / "rows.json"), "--provider",
             "openai-compatible", "--base-url", server.openai_base_url, "--model", "m", "--embedding-model", "e",
             "--metrics", "faithfulness", "--no-cache", "--quiet", "--out", str(tmp_path / "out.json"),
             "--resume", run_id], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        rows = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["rows"]
        assert sorted(r["id"] for r in rows) == ["r0", "r1", "r2", "r3"]
        assert all(r["results"][0]["value"] is not None for r in rows)
