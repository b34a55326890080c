"""Batch runs through the official SDKs against the fake server's batch endpoints (OpenAI Batch API, Gemini
batch mode): same scores as the synchronous run at half the price, one job per dependent step, per-request
errors unscored, and a process killed after submitting resumed by job id without sending anything twice."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rageval_core.session.for_run import build_and_run_batched
from rageval_core.run import RunSpec
from rageval_core.run.batch import BatchCancelled
from rageval_core.store.batch_ledger import BatchAnswer, Ledger
from rageval_core.data.datasets import load_dataset
from rageval_core.core.clock import FakeClock
from rageval_core.llm.pricing import ModelPrice, PriceTable
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.run import estimate
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.core.types import Usage
from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest, default_responder

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "sample_data" / "ml_qa_ja.json"
KEY = "sk-batch-test-0123456789"
BINARY_FIELDS = ("verdict", "useful", "attributed", "reference_verdict", "noncommittal")


def varied(request: FakeRequest) -> Any:
    """Schema-valid answers whose 0/1 fields depend on the prompt, so rows get different scores."""
    seed = hashlib.sha256(request.prompt.encode("utf-8")).digest()

    def walk(value: Any, depth: int = 0) -> Any:
        if isinstance(value, dict):
            return {
                k: (seed[(depth + i) % len(seed)] % 2 if k in BINARY_FIELDS and isinstance(v, int) else walk(v, depth + i + 1))
                for i, (k, v) in enumerate(value.items())
            }
        if isinstance(value, list):
            return [walk(v, depth + i + 3) for i, v in enumerate(value)]
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5:
            return 1 + seed[depth % len(seed)] % 5  # a rubric score
        return value

    return walk(default_responder(request))


def _scorers() -> list[Any]:
    metrics = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
    return list(build_scorers(metrics, {})) + [JudgeScorer("rubric5")]


def _config(provider: str, server: FakeLLMServer) -> ProviderConfig:
    url = server.openai_base_url if provider == "openai" else server.gemini_base_url
    return ProviderConfig(provider=provider, api_key=KEY, base_url=url)


def _outcomes(results: Any) -> list[tuple]:
    return sorted((r.sample_id, r.metric, r.method, r.value, r.unscored_reason) for r in results)


@pytest.fixture()
def server():
    with FakeLLMServer(responder=varied) as srv:
        srv.batches.polls_before_done = 2
        yield srv


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_batch_run_scores_like_the_synchronous_run_at_half_the_price(provider, server, tmp_path):
    samples = load_dataset(str(DATA)).samples
    cfg = _config(provider, server)
    sync = run_rows(samples, _scorers(), config=cfg, store=Store(tmp_path / "sync.sqlite"))
    model_paths = ("/chat/completions", ":generateContent")
    before = sum(1 for r in server.requests if r.path.endswith(model_paths))
    lines: list[str] = []
    clock = FakeClock()
    store = Store(tmp_path / "batch.sqlite")
    batched = build_and_run_batched(RunSpec(samples, _scorers(), provider=cfg), store, poll_s=5, clock=clock, say=lines.append)

    assert _outcomes(batched.results) == _outcomes(sync.results)
    values = {r.value for r in batched.results if r.value is not None}
    assert len(values) > 2, "the responder must give rows different scores for the comparison to mean anything"
    # not one synchronous model request during the batched run: everything went through jobs
    assert sum(1 for r in server.requests if r.path.endswith(model_paths)) == before
    assert server.batches.request_lines == sync.provider_calls
    assert batched.provider_calls == sync.provider_calls
    assert batched.cost_usd == pytest.approx(sync.cost_usd * 0.5)
    # claims are extracted before they are verified: at least two rounds, each one job, polled on the clock
    settings = store.get_run(batched.run_id).settings["batch"]
    assert settings["rounds"] >= 2 and len(settings["jobs"]) == settings["rounds"]
    assert settings["requests"] == sync.provider_calls and settings["failed_requests"] == 0
    assert any("round 2" in line for line in lines)
    assert clock.sleeps and max(clock.sleeps) <= 1.0 and sum(clock.sleeps) >= 5.0  # short steps: Ctrl-C is seen
    # the call log holds every batch answer with its job
    calls = list(store.iter_calls(batched.run_id))
    assert len([c for c in calls if not c.cached]) == sync.provider_calls


def test_a_request_that_fails_inside_a_job_ends_only_its_result_unscored(server, tmp_path):
    samples = load_dataset(str(DATA)).samples[:4]
    target = samples[1].answer[:12]

    def fail(request: FakeRequest) -> str | None:
        return "content policy: refused" if target in request.prompt else None

    server.batches.fail_request = fail
    result = build_and_run_batched(RunSpec(samples, [JudgeScorer("rubric5")], provider=_config("openai", server)),
                                   Store(tmp_path / "s.sqlite"), poll_s=1, clock=FakeClock())
    by_row: dict[str, set] = {}
    for r in result.results:
        by_row.setdefault(r.sample_id, set()).add(r.unscored_reason)
    assert by_row[samples[1].id] == {"provider_error"}
    assert all(reasons == {None} for sid, reasons in by_row.items() if sid != samples[1].id)
    failed = [r for r in result.results if r.unscored_reason]
    assert "content policy: refused" in (failed[0].reason or "")


def test_cancel_while_polling_stops_and_keeps_the_job_for_the_next_run(server, tmp_path):
    samples = load_dataset(str(DATA)).samples[:2]
    server.batches.hold = True
    cancel = threading.Event()

    class CancelOnSleep(FakeClock):
        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            cancel.set()

    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(BatchCancelled, match="rerun the same command"):
        build_and_run_batched(RunSpec(samples, [JudgeScorer("rubric5")], provider=_config("openai", server)), store,
                    poll_s=1, clock=CancelOnSleep(), cancel=cancel)
    running = Ledger(store.path).running_jobs("openai", "gpt-4o-mini")
    assert len(running) == 1 and len(running[0].keys) == 2
    server.batches.release()
    jobs_before = len(server.batches.jobs)
    result = build_and_run_batched(RunSpec(samples, [JudgeScorer("rubric5")], provider=_config("openai", server)), store,
                                   poll_s=1, clock=FakeClock())
    assert len(server.batches.jobs) == jobs_before, "the job already submitted is picked up, not sent again"
    assert result.scored_results == len(result.results) > 0


def test_a_provider_without_a_batch_api_is_refused_through_the_cli(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "rageval_core", "evaluate", str(DATA), "--provider", "offline", "--judge", "rubric5",
         "--batch", "--out", str(tmp_path / "o.json")],
        capture_output=True, text=True, env=_env(tmp_path / "h"), cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--batch needs a provider with a batch API" in proc.stderr and "Traceback" not in proc.stderr


def _cli(server: FakeLLMServer, provider: str, out: Path, *extra: str) -> list[str]:
    url = server.openai_base_url if provider == "openai" else server.gemini_base_url
    return [
        sys.executable, "-m", "rageval_core", "evaluate", str(DATA), "--provider", provider, "--base-url", url,
        "--metrics", "faithfulness,context_recall", "--judge", "rubric5", "--out", str(out), "--quiet", *extra,
    ]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.update(RAGEVAL_HOME=str(home), PYTHONPATH=str(ROOT), OPENAI_API_KEY=KEY, GEMINI_API_KEY=KEY)
    return env


def _scores(path: Path) -> list[tuple]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return sorted(
        (row["id"], r["metric"], r["method"], r["value"], r.get("unscored_reason")) for row in data["rows"] for r in row["results"]
    )


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_killed_after_submission_then_resumed_by_job_id(provider, server, tmp_path):
    """SIGKILL the CLI once its first job is submitted; a fresh state folder resumes from the job id alone."""
    sync_out = tmp_path / "sync.json"
    sync = subprocess.run(_cli(server, provider, sync_out), env=_env(tmp_path / "h-sync"), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert sync.returncode in (0, 1), sync.stderr

    server.batches.hold = True
    proc = subprocess.Popen(_cli(server, provider, tmp_path / "killed.json", "--batch", "--batch-poll", "0.05"),
                            env=_env(tmp_path / "h1"), cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    job_id = None
    deadline = time.monotonic() + 240
    assert proc.stderr is not None
    while job_id is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if "sent as job" in line:
            job_id = line.split("sent as job ", 1)[1].split(" ", 1)[0]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert job_id is not None, "the CLI never said which job it submitted"
    jobs_at_kill = len(server.batches.jobs)
    server.batches.release()

    out = tmp_path / "resumed.json"
    resumed = subprocess.run(
        _cli(server, provider, out, "--batch", "--batch-poll", "0.05", "--batch-job", job_id),
        env=_env(tmp_path / "h2"), cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert resumed.returncode in (0, 1), resumed.stderr
    assert _scores(out) == _scores(sync_out)
    # round 1 was not sent again: the only new jobs are the later rounds
    assert "batch round 1:" not in resumed.stderr
    assert len(server.batches.jobs) > jobs_at_kill
    assert KEY not in resumed.stderr + resumed.stdout


def test_ledger_round_trip_and_batch_prices(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.add_job("job-1", "openai", "m", 1, ["a", "b"])
    ledger.save_answers([
        BatchAnswer("a", "job-1", ("x", "y"), Usage(10, 2, 1), status=200),
        BatchAnswer("b", "job-1", error_kind="bad_request", error_message="refused", status=400),
    ])
    assert ledger.answer("a") == BatchAnswer("a", "job-1", ("x", "y"), Usage(10, 2, 1), status=200)
    assert ledger.answer("b").error_message == "refused" and not ledger.answer("b").ok
    assert ledger.answer("c") is None
    assert [j.keys for j in ledger.running_jobs("openai", "m")] == [("a", "b")]
    assert ledger.jobs_for(["a", "b", "c"]) == ["job-1"]

    table = PriceTable({"m": ModelPrice(2.0, 8.0, 0.5)}).scaled(0.5)
    # 1,000,000 input tokens of which 200,000 cached, 100,000 output: (800k·1.0 + 200k·0.25 + 100k·4.0) / 1M
    assert table.cost("m", Usage(1_000_000, 100_000, 200_000)) == pytest.approx(0.8 + 0.05 + 0.4)
    samples = load_dataset(str(DATA)).samples
    full = estimate(samples, [JudgeScorer("rubric5")], provider="openai", model="gpt-4o-mini")
    half = estimate(samples, [JudgeScorer("rubric5")], provider="openai", model="gpt-4o-mini", discount=0.5)
    assert half.cost_usd == pytest.approx(full.cost_usd * 0.5) and half.llm_calls == full.llm_calls
