"""The judge through the real provider stack (build_llm: retry, rate limit, SQLite response cache, usage)
against the local fake server: an edited rubric reaches the wire and is never answered from a stale cache."""

from __future__ import annotations

import json

import pytest

from rageval_core.core.clock import FakeClock
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_llm
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.rubric import load_rubric
from rageval_core.core.types import FAITHFULNESS, SEED_METRICS
from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest
from tests.support.scripted_llm import HashEmbedder
from tests.scoring.test_judge import POLITE, seed_samples

EDITED_LEVEL = "裏付けのない主張が一つでもある"


def judge_responder(request: FakeRequest) -> dict:
    """Answers whatever criteria the schema asks for; faithfulness is 2 when the edited level is in the prompt.

    The answer depends on the prompt text, so a stale cache entry would show up as a wrong score.
    """
    ids = [key[: -len("_score")] for key in (request.schema or {}).get("properties", {}) if key.endswith("_score")]
    edited = EDITED_LEVEL in request.prompt
    out: dict = {}
    for cid in ids:
        out[f"{cid}_score"] = 2 if (cid == FAITHFULNESS and edited) else 3 if cid == "polite" else 5
        out[f"{cid}_reason"] = f"{cid}: {'edited rubric' if edited else 'shipped rubric'}"
    return out


def _config(provider: str, server: FakeLLMServer) -> ProviderConfig:
    if provider == "gemini":
        return ProviderConfig(provider="gemini", model="gemini-2.5-flash", api_key="test-key-not-real", base_url=server.gemini_base_url, max_retries=0)
    return ProviderConfig(provider="openai-compatible", model="local-judge", base_url=server.openai_base_url, max_retries=0)


@pytest.mark.parametrize("provider", ["openai-compatible", "gemini"])
def test_edited_rubric_reaches_the_server_and_is_never_a_stale_cache_hit(tmp_path, provider):
    row4 = next(s for s in seed_samples() if s.id == "4")
    shipped = load_rubric("rubric5", "ja")
    edited = shipped.with_level(FAITHFULNESS, 1, EDITED_LEVEL)
    custom = shipped.with_criterion(POLITE)
    with FakeLLMServer() as server:
        server.responder = judge_responder
        cfg = _config(provider, server)

        def judge(rubric):
            # A fresh stack every time, as a new run would build: the cache lives in the SQLite file.
            llm = build_llm(cfg, db_path=tmp_path / "db.sqlite", clock=FakeClock())
            results = JudgeScorer(rubric).score(row4, EvalContext(llm=llm, embedder=HashEmbedder()))
            return {r.metric: r for r in results}, server.total_requests

        first, calls = judge(shipped)
        assert calls == 1 and first[FAITHFULNESS].raw_score == 5 and first[FAITHFULNESS].cached_calls == 0
        again, calls = judge(shipped)
        assert calls == 1 and again[FAITHFULNESS].cached_calls == 1  # same rubric: a cache hit is right
        assert again[FAITHFULNESS].raw_score == 5

        changed, calls = judge(edited)
        assert calls == 2, "an edited level description must reach the server"
        assert changed[FAITHFULNESS].cached_calls == 0 and changed[FAITHFULNESS].raw_score == 2
        assert changed[FAITHFULNESS].reason == "faithfulness: edited rubric"
        wire = json.dumps(server.requests[-1].body, ensure_ascii=False)
        assert f"- 1: {EDITED_LEVEL}" in wire.replace("\\n", "\n")
        assert changed[FAITHFULNESS].details["request_keys"] != first[FAITHFULNESS].details["request_keys"]
        assert changed[FAITHFULNESS].details["rubric_hash"] != first[FAITHFULNESS].details["rubric_hash"]

        changed_again, calls = judge(edited)
        assert calls == 2 and changed_again[FAITHFULNESS].cached_calls == 1 and changed_again[FAITHFULNESS].raw_score == 2

        reverted, calls = judge(shipped)  # undoing the edit finds the shipped rubric's own entry again
        assert calls == 2 and reverted[FAITHFULNESS].raw_score == 5 and reverted[FAITHFULNESS].cached_calls == 1

        with_custom, calls = judge(custom)
        assert calls == 3, "a new criterion changes the prompt and the schema: a fresh call"
        assert [*with_custom] == [*SEED_METRICS, "polite"]
        assert with_custom["polite"].raw_score == 3 and with_custom["polite"].value == 1.0
        assert "丁寧さ（Politeness）" in json.dumps(server.requests[-1].body, ensure_ascii=False)
