"""Re-ask after an unusable answer: once by default, the problem stated, counted, marked in the call log."""

from __future__ import annotations

import json

from rageval_core import cli
from rageval_core.analysis.compare import summarize
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.faithfulness import Faithfulness
from rageval_core.scoring.metrics.judge import JudgeScorer
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.core.types import Sample
from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

EN = Sample("r1", "What is dropout?", ("Dropout randomly disables units during training.",),
            "Dropout disables random units. It reduces overfitting.", "Dropout disables units.")
CLAIMS = {"claims": ["Dropout disables random units.", "Dropout reduces overfitting."]}


def verdict(i: int, v: int) -> dict:
    return {"claim_index": i, "verdict": v, "reason": "r", "context_index": 0, "supporting_sentence": None}


def test_a_verdict_mismatch_is_re_asked_once_with_the_problem_stated_and_recovers():
    llm = ScriptedLLM().script("extract_claims", CLAIMS)
    llm.script("verify_claims", {"verdicts": [verdict(0, 1)]}, {"verdicts": [verdict(0, 1), verdict(1, 0)]})
    [r] = Faithfulness().score(EN, EvalContext(llm, HashEmbedder()))
    assert r.value == 0.5 and r.unscored_reason is None
    first, again = llm.calls("verify_claims")
    assert (first.reask, again.reask) == (0, 1)
    assert again.messages[: len(first.messages)] == first.messages  # the same request, continued
    assert again.messages[-2].role == "assistant" and json.loads(again.messages[-2].content) == {"verdicts": [verdict(0, 1)]}
    assert "the judge returned 1 verdicts for 2 claims" in again.messages[-1].content  # the problem, stated
    assert "verdicts" in again.messages[-1].content  # and the keys the schema expects
    assert again.key() != first.key()
    assert r.details["reask"] == {"asked": 1, "recovered": 1}
    assert [c.get("reask", 0) for c in r.details["calls"]] == [0, 0, 1] and r.details["calls"][-1]["recovered"]
    s = summarize([r])["decomposed"]["faithfulness"]
    assert (s["reasked"], s["recovered"], s["scored"]) == (1, 1, 1)


def test_reask_zero_turns_it_off_and_n_allows_more():
    llm = ScriptedLLM().script("extract_claims", CLAIMS).script("verify_claims", "not json")
    [r] = Faithfulness().score(EN, EvalContext(llm, HashEmbedder(), options={"reask": 0}))
    assert r.unscored_reason == "parse_error" and len(llm.calls("verify_claims")) == 1 and "reask" not in r.details

    llm = ScriptedLLM().script("extract_claims", CLAIMS)
    llm.script("verify_claims", "not json", "still not", {"verdicts": [verdict(0, 1), verdict(1, 1)]})
    [r] = Faithfulness().score(EN, EvalContext(llm, HashEmbedder(), options={"reask": 2}))
    assert r.value == 1.0 and [c.reask for c in llm.calls("verify_claims")] == [0, 1, 2]
    assert r.details["reask"] == {"asked": 2, "recovered": 1}


def test_an_unrecovered_re_ask_names_both_problems_and_a_failed_re_ask_keeps_the_first():
    llm = ScriptedLLM().script("extract_claims", CLAIMS).script("verify_claims", "not json", {"verdicts": []})
    [r] = Faithfulness().score(EN, EvalContext(llm, HashEmbedder()))
    assert r.unscored_reason == "verdict_mismatch" and "after 1 re-ask" in r.reason and "first:" in r.reason
    assert r.details["reask"] == {"asked": 1, "recovered": 0}

    from rageval_core.llm.base import ProviderError

    llm = ScriptedLLM().script("extract_claims", CLAIMS)
    llm.script("verify_claims", "not json", ProviderError("replay miss", kind="replay_miss"))
    [r] = Faithfulness().score(EN, EvalContext(llm, HashEmbedder()))
    assert r.unscored_reason == "parse_error" and "re-ask failed" in r.reason  # not replay_miss


def test_the_judge_re_asks_only_for_its_broken_criterion():
    llm = ScriptedLLM()
    good = {f"{c}_score": 4 for c in ("faithfulness", "answer_relevancy", "context_relevance", "answer_correctness")}
    good |= {f"{c}_reason": "ok" for c in ("faithfulness", "answer_relevancy", "context_relevance", "answer_correctness")}
    broken = dict(good, answer_correctness_score=9)
    llm.script("judge", broken, dict(good, faithfulness_score=1, answer_correctness_score=2))
    results = {r.metric: r for r in JudgeScorer("rubric5").score(EN, EvalContext(llm, HashEmbedder()))}
    assert results["answer_correctness"].raw_score == 2 and results["faithfulness"].raw_score == 4  # first usable kept
    assert results["answer_correctness"].details["reask"] == {"asked": 1, "recovered": 1}
    assert "reask" not in results["faithfulness"].details
    assert "answer_correctness_score 9 is outside 1..5" in llm.calls("judge")[1].messages[-1].content


def _responder(request: FakeRequest) -> dict:
    name = request.body["response_format"]["json_schema"]["name"]
    if name == "extract_claims":
        return CLAIMS
    if "could not be used" in request.messages[-1][1]:
        return {"verdicts": [verdict(0, 1), verdict(1, 1)]}
    return {"verdicts": [verdict(0, 1)]}


def test_through_the_sdk_the_re_ask_is_marked_in_the_call_log_and_counted_in_export(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    with FakeLLMServer(responder=_responder) as server:
        cfg = ProviderConfig("openai-compatible", model="m", base_url=server.openai_base_url, embedding_model="e", cache=False)
        store = Store(tmp_path / "db.sqlite")
        result = run_rows([EN], [Faithfulness()], config=cfg, store=store)
        calls = store.calls(result.run_id)
        assert [(c.task, c.reask) for c in calls] == [("extract_claims", 0), ("verify_claims", 0), ("verify_claims", 1)]
        assert {c.structured_output for c in calls} == {"json_schema"}
        assert result.summary["decomposed"]["faithfulness"]["reasked"] == 1

        data = tmp_path / "rows.json"
        data.write_text(json.dumps([{"id": EN.id, "question": EN.question, "contexts": list(EN.contexts), "answer": EN.answer}]))
        out = tmp_path / "out.json"
        code = cli.main(["evaluate", str(data), "--provider", "openai-compatible", "--base-url", server.openai_base_url,
                         "--model", "m", "--embedding-model", "e", "--metrics", "faithfulness", "--no-cache", "--quiet",
                         "--out", str(out)])
        assert code == 0
        summary = json.loads(out.read_text())["summary"]["decomposed"]["faithfulness"]
        assert (summary["reasked"], summary["recovered"]) == (1, 1)
        before = server.total_requests
        code = cli.main(["evaluate", str(data), "--provider", "openai-compatible", "--base-url", server.openai_base_url,
                         "--model", "m", "--embedding-model", "e", "--metrics", "faithfulness", "--no-cache", "--quiet",
                         "--reask", "0", "--out", str(out)])
        assert server.total_requests - before == 2  # extract + verify, no re-ask
        assert json.loads(out.read_text())["summary"]["decomposed"]["faithfulness"]["unscored_reasons"] == {"verdict_mismatch": 1}
