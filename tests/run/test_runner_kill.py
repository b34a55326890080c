"""SIGKILL a 12-row evaluation part way, resume it, and prove from the call log that no finished call was
repeated and no row was lost. The evaluation runs in a subprocess (the CLI) against the local fake server."""

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from rageval_core.testing.fake_llm import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
SCORERS = ("faithfulness", "answer_correctness", "judge:rubric5")
CONCURRENCY = 3


def _responder():
    spec = importlib.util.spec_from_file_location("bench_runner", ROOT / "bench" / "runner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.task_responder


def _query(db: Path, sql: str, *params):
    if not db.exists():
        return []
    conn = sqlite3.connect(str(db), timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []
    finally:
        conn.close()


def _workspace(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy of the seed data, the store's database path and an environment without a real API key."""
    data = tmp_path / "ml_qa_ja.json"
    data.write_bytes((ROOT / "sample_data" / "ml_qa_ja.json").read_bytes())
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(RAGEVAL_HOME=str(home), PYTHONPATH=str(ROOT))
    return data, home / "rageval.sqlite", env


def _evaluate_cmd(data: Path, server: FakeLLMServer, *options: str) -> list[str]:
    """The CLI evaluation of ``data`` against the fake server's OpenAI-compatible endpoint."""
    return [
        sys.executable, "-m", "rageval_core", "evaluate", str(data), "--provider", "openai-compatible",
        "--model", "fake-judge", "--base-url", server.openai_base_url, "--embedding-model", "fake-embed", *options,
    ]


def _wait_for(db: Path, proc: subprocess.Popen, sql: str, at_least: int) -> int:
    """Poll ``sql`` until it returns ``at_least`` rows, the process ends or a minute passes; the last count."""
    deadline = time.monotonic() + 60
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        done = len(_query(db, sql))
        if done >= at_least:
            break
        time.sleep(0.02)
    return done


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
def test_sigkill_then_resume_repeats_no_finished_call_and_loses_no_row(tmp_path):
    data, db, env = _workspace(tmp_path)
    with FakeLLMServer(latency=0.15, responder=_responder()) as server:
        cmd = _evaluate_cmd(
            data, server, "--metrics", "faithfulness,answer_correctness", "--judge", "rubric5",
            "--concurrency", str(CONCURRENCY), "--out", str(tmp_path / "out.json"), "--quiet",
        )
        proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        done = _wait_for(db, proc, "SELECT DISTINCT sample_id, scorer FROM results", 10)
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()}"
        assert done >= 10, "the run made no progress"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL

        (run_id, status), = _query(db, "SELECT id, status FROM runs")
        assert status == "running"  # killed: nobody marked it
        before_results = set(_query(db, "SELECT id, sample_id, scorer, metric, value FROM results"))
        before_tasks = {(sid, sc) for _, sid, sc, _, _ in before_results}
        assert 10 <= len(before_tasks) < 36
        before_calls = _query(db, "SELECT request_key, cached FROM call_log ORDER BY id")
        chat_before = server.count("/chat/completions")

        resumed = subprocess.run(cmd + ["--resume", run_id], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        chat_total = server.count("/chat/completions")

    (status,), = _query(db, "SELECT status FROM runs WHERE id = ?", run_id)
    assert status == "done"
    # No row lost: every (row, scorer) pair of the 12 rows has its results, none failed.
    rows = _query(db, "SELECT sample_id, scorer, metric, value, unscored_reason FROM results WHERE run_id = ?", run_id)
    tasks = {(sid, sc) for sid, sc, *_ in rows}
    assert tasks == {(str(i), sc) for i in range(1, 13) for sc in SCORERS}
    unscored = _query(db, "SELECT sample_id, scorer, metric, unscored_reason, reason FROM results WHERE run_id = ? AND value IS NULL", run_id)
    assert unscored == [], f"{unscored}; resumed stderr: {resumed.stderr[-2000:]}"  # with the reasons, to tell why
    # Results finished before the kill were kept as they were, not recomputed.
    after_results = set(_query(db, "SELECT id, sample_id, scorer, metric, value FROM results"))
    assert before_results <= after_results
    exported = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in exported["rows"]] == [str(i) for i in range(1, 13)]

    # No finished call repeated: each request reached the provider at most once over both processes;
    # calls finished before the kill come back as cache hits, never as provider calls.
    log = _query(db, "SELECT request_key, cached, error FROM call_log WHERE run_id = ? ORDER BY id", run_id)
    provider_calls = Counter(key for key, cached, error in log if not cached and not error)
    assert provider_calls and max(provider_calls.values()) == 1
    finished_before = {key for key, cached in before_calls if not cached}
    after_kill = log[len(before_calls):]
    assert not any(key in finished_before and not cached for key, cached, _ in after_kill)
    # The server agrees: requests it answered = provider calls logged + at most the calls in flight at the kill.
    assert 0 <= chat_total - sum(provider_calls.values()) <= CONCURRENCY
    # …and every request of the resumed process is in the log (it ended normally, nothing in flight).
    assert chat_total - chat_before == sum(1 for _, cached, _ in after_kill if not cached)


def test_ctrl_c_cancels_cleanly_and_the_run_resumes(tmp_path):
    data, db, env = _workspace(tmp_path)
    with FakeLLMServer(latency=0.1, responder=_responder()) as server:
        cmd = _evaluate_cmd(data, server, "--judge", "rubric5", "--concurrency", "1", "--out", str(tmp_path / "out.json"))
        proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for(db, proc, "SELECT DISTINCT sample_id FROM results", 3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        (run_id, status), = _query(db, "SELECT id, status FROM runs")
        assert status == "cancelled" and f"--resume {run_id}" in err
        done = len(_query(db, "SELECT DISTINCT sample_id FROM results"))
        assert 3 <= done < 12
        # the partial export was written and lists only finished rows' results
        partial = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
        assert sum(1 for r in partial["rows"] if r["results"]) == done
        resumed = subprocess.run(cmd + ["--resume", run_id, "--quiet"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
    assert len(_query(db, "SELECT DISTINCT sample_id FROM results WHERE run_id = ?", run_id)) == 12
    assert _query(db, "SELECT status FROM runs WHERE id = ?", run_id) == [("done",)]
