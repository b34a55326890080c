"""Issue 27, must show: every metric and judge scores through both SDKs against the bundled fake server (a demo
with no key shows all of them), and the estimate counts what the run sends: per scorer, the calls made lie in
the estimate's range (its low end with no re-ask, its top with every re-ask), offline and through the openai
and google-genai SDKs. The issue measured answer correctness at 24 estimated, 36 made (offline)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from rageval_core.core.types import METRIC_IDS
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.run import estimate
from tests.support.runs import run_rows
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT
from rageval_core.testing.fake_llm import FakeLLMServer

KEY = "sk-test-estimate-0123456789abcdef"
JUDGES = ("rubric5", "binary")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as srv:
        yield srv


def _config(provider: str, server: FakeLLMServer) -> ProviderConfig:
    if provider == "offline":
        return ProviderConfig()
    base = server.openai_base_url if provider == "openai" else server.gemini_base_url
    return ProviderConfig(provider=provider, api_key=KEY, base_url=base, cache=False, max_retries=1)


@pytest.mark.parametrize(("provider", "lang"), [("offline", "ja"), ("openai", "ja"), ("gemini", "ja"), ("openai", "en")])
def test_every_metric_and_judge_scores_and_the_estimate_covers_the_calls(provider, lang, server, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    samples = load_dataset(ROOT / "sample_data" / f"ml_qa_{lang}.json").samples[:3]
    scorers = [*build_scorers(list(METRIC_IDS)), *(JudgeScorer(j) for j in JUDGES)]
    cfg = _config(provider, server)
    est = estimate(samples, scorers, provider=provider, reask=1)
    done = run_rows(samples, scorers, config=cfg, options={"reask": 1}, concurrency=4)
    unscored = [(r.sample_id, r.metric, r.method, r.unscored_reason) for r in done.results if r.value is None]
    assert not unscored, unscored
    assert {(r.metric, r.method) for r in done.results} >= {(m, "decomposed") for m in METRIC_IDS}
    calls = Counter(c.scorer for c in Store().iter_calls(done.run_id) if not c.cached and c.task != "embed")
    for row in est.rows:
        low, high = row.llm_calls, row.max_llm_calls
        assert low <= calls[row.scorer] <= high, (row.scorer, low, high, calls[row.scorer])
        if provider == "offline":
            assert calls[row.scorer] == low == high, row.scorer
    assert sum(calls.values()) >= est.llm_calls
