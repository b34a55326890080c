"""Batch runs on the new providers through their SDKs against the local server: Azure OpenAI's Batch API
(``/openai/files`` + ``/openai/batches``, lines naming ``/chat/completions``) and Anthropic's Message Batches score
like the synchronous run at half the price; a run stopped while its job is at the provider resumes by job id
alone in a fresh store, sending nothing twice; a batch the provider cancels ends with a clear error; Vertex is
refused with the reason (its batch prediction needs Cloud Storage or BigQuery)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rageval_core.data.datasets import load_dataset
from rageval_core.llm.base import ProviderError
from rageval_core.core.clock import FakeClock
from rageval_core.providers.config import ProviderConfig
from rageval_core.session.for_run import build_and_run_batched
from rageval_core.run import RunSpec
from rageval_core.run.batch import BatchCancelled, BatchError
from rageval_core.store.batch_ledger import Ledger
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.runs import run_rows
from tests.support.vertex_creds import LOCATION, PROJECT, service_account_file

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "sample_data" / "ml_qa_ja.json"
KEY = "batch-cloud-key-0123456789"
MODEL = {"azure-openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}


@pytest.fixture()
def server():
    with FakeLLMServer() as srv:
        srv.batches.polls_before_done = 2
        srv.anthropic_batches.polls_before_done = 2
        yield srv


def _config(provider: str, server: FakeLLMServer) -> ProviderConfig:
    # an Azure global-batch deployment named like its model, so the default price table prices it
    return ProviderConfig(provider=provider, api_key=KEY, base_url=server.url, model=MODEL[provider])


def _scorers() -> list:
    return list(build_scorers(["faithfulness", "context_recall"], {})) + [JudgeScorer("rubric5")]


def _outcomes(results) -> list[tuple]:
    return sorted((r.sample_id, r.metric, r.method, r.value, r.unscored_reason) for r in results)


@pytest.mark.parametrize("provider", ["azure-openai", "anthropic"])
def test_batch_run_scores_like_the_synchronous_run_at_half_the_price(provider, server, tmp_path):
    samples = load_dataset(str(DATA)).samples[:6]
    cfg = _config(provider, server)
    sync = run_rows(samples, _scorers(), config=cfg, store=Store(tmp_path / "sync.sqlite"))
    lines: list[str] = []
    store = Store(tmp_path / "batch.sqlite")
    batched = build_and_run_batched(RunSpec(samples, _scorers(), provider=cfg), store, poll_s=5, clock=FakeClock(), say=lines.append)
    assert _outcomes(batched.results) == _outcomes(sync.results)
    assert all(r.unscored_reason is None for r in batched.results)
    assert batched.provider_calls == sync.provider_calls and sync.cost_usd > 0
    assert batched.cost_usd == pytest.approx(sync.cost_usd * 0.5)
    settings = store.get_run(batched.run_id).settings["batch"]
    assert settings["rounds"] >= 2 and settings["requests"] == sync.provider_calls
    if provider == "azure-openai":
        assert any(r.path == "/openai/batches" and "api-version=" in r.query for r in server.requests)
        assert server.batches.request_lines == sync.provider_calls
    else:
        assert any(r.path == "/v1/messages/batches" for r in server.requests)
        assert server.anthropic_batches.request_lines == sync.provider_calls


@pytest.mark.parametrize("provider", ["azure-openai", "anthropic"])
def test_stopped_while_the_job_runs_then_resumed_by_job_id_in_a_fresh_store(provider, server, tmp_path):
    samples = load_dataset(str(DATA)).samples[:3]
    cfg = _config(provider, server)
    server.batches.hold = True  # jobs stay in progress (both APIs)
    cancel = threading.Event()

    class CancelOnSleep(FakeClock):
        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            cancel.set()

    first = Store(tmp_path / "first.sqlite")
    with pytest.raises(BatchCancelled, match="rerun the same command"):
        build_and_run_batched(RunSpec(samples, [JudgeScorer("rubric5")], provider=cfg), first, poll_s=1, clock=CancelOnSleep(), cancel=cancel)
    [job] = Ledger(first.path).running_jobs(provider, MODEL[provider])
    jobs = server.batches.jobs if provider == "azure-openai" else server.anthropic_batches.jobs
    submitted = len(jobs)
    server.batches.release()
    result = build_and_run_batched(RunSpec(samples, [JudgeScorer("rubric5")], provider=cfg), Store(tmp_path / "fresh.sqlite"),
                                   poll_s=1, clock=FakeClock(), attach=[job.job_id])
    assert len(jobs) == submitted, "the job named by id was collected, not sent again"
    assert result.scored_results == len(result.results) > 0


@pytest.mark.parametrize("provider", ["azure-openai", "anthropic"])
def test_a_batch_the_provider_cancels_ends_with_a_clear_error(provider, server, tmp_path):
    samples = load_dataset(str(DATA)).samples[:2]
    server.batches.end_state = "cancelled"
    server.anthropic_batches.cancel_on_create = True
    with pytest.raises(BatchError) as info:
        build_and_run_batched(RunSpec(samples, [JudgeScorer("rubric5")], provider=_config(provider, server)),
                              Store(tmp_path / "s.sqlite"), poll_s=1, clock=FakeClock())
    assert "cancel" in str(info.value) and KEY not in str(info.value)


def test_vertex_batch_is_refused_with_the_reason(server, tmp_path, monkeypatch):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account_file(tmp_path, server.url)))
    cfg = ProviderConfig(provider="vertex", project=PROJECT, location=LOCATION, base_url=server.url)
    with pytest.raises(ProviderError, match="Cloud Storage or BigQuery"):
        build_and_run_batched(RunSpec(load_dataset(str(DATA)).samples[:1], [JudgeScorer("rubric5")], provider=cfg),
                              Store(tmp_path / "s.sqlite"), poll_s=1, clock=FakeClock())
