"""Answer correctness, the claims it shares with faithfulness, and economy mode."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from rageval_core.llm.base import ProviderError
from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.answer_correctness import AnswerCorrectness
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.faithfulness import Faithfulness
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.core.types import Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

S = Sample(
    "ac",
    "Who invented backpropagation?",
    ("Backpropagation updates network weights with the chain rule.", "It was popularised in 1986."),
    "Backpropagation was invented by Alan Turing. It was popularised in 1986.",
    "Backpropagation was popularised in 1986 by Rumelhart and others. Werbos proposed it in 1974.",
)
ANSWER_CLAIMS = {"claims": ["Backpropagation was invented by Alan Turing.", "Backpropagation was popularised in 1986."]}
GT_CLAIMS = {"claims": ["Backpropagation was popularised in 1986 by Rumelhart and others.", "Werbos proposed it in 1974."]}
CLASSIFIED = {
    "TP": [{"statement": "Backpropagation was popularised in 1986.", "reason": "matches"}],
    "FP": [{"statement": "Backpropagation was invented by Alan Turing.", "reason": "not in the reference"}],
    "FN": [{"statement": "Werbos proposed it in 1974.", "reason": "missing"}],
}


def v(i, verdict, ref=None):
    item = {"claim_index": i, "verdict": verdict, "reason": "r", "context_index": None, "supporting_sentence": None}
    if ref is not None:
        item["reference_verdict"] = ref
    return item


def scripted():
    llm = ScriptedLLM()
    llm.script("extract_claims", lambda req: ANSWER_CLAIMS if req.inputs["answer"] == S.answer else GT_CLAIMS)
    llm.script("extract_claims", lambda req: ANSWER_CLAIMS if req.inputs["answer"] == S.answer else GT_CLAIMS)
    llm.script("classify_correctness", CLASSIFIED)
    llm.script("verify_claims", {"verdicts": [v(0, 0), v(1, 1)]})
    return llm


def test_weighted_f1_and_similarity_with_lists_kept():
    llm, emb = scripted(), HashEmbedder()
    [r] = AnswerCorrectness().score(S, EvalContext(llm, emb))
    vectors = HashEmbedder().embed([S.answer, S.ground_truth])
    sim = scoring.cosine(vectors[0], vectors[1])
    f1 = 2 * 1 / (2 * 1 + 1 + 1)
    assert r.value == pytest.approx(0.75 * f1 + 0.25 * sim)
    assert r.details["f1"] == pytest.approx(f1, abs=1e-4) and r.details["similarity"] == pytest.approx(sim, abs=1e-4)
    assert [x["statement"] for x in r.details["FN"]] == ["Werbos proposed it in 1974."]
    assert r.details["answer_claims"] == ANSWER_CLAIMS["claims"] and r.details["reference_claims"] == GT_CLAIMS["claims"]
    assert r.calls == 3 and emb.calls == 1  # answer claims, reference claims, classification; one embedding request
    classify = llm.calls("classify_correctness")[0]
    assert classify.inputs == {"question": S.question, "answer_claims": ANSWER_CLAIMS["claims"], "reference_claims": GT_CLAIMS["claims"]}
    assert "TP 1, FP 1, FN 1" in r.reason and "Alan Turing" in r.reason


def test_weights_are_settable():
    [r] = AnswerCorrectness(weights=(1.0, 0.0)).score(S, EvalContext(scripted(), HashEmbedder()))
    assert r.value == pytest.approx(0.5)
    [r2] = AnswerCorrectness().score(S, EvalContext(scripted(), HashEmbedder(), options={"answer_correctness_weights": (0, 1)}))
    assert r2.value == pytest.approx(r2.details["similarity"], abs=1e-4) and r2.details["weights"] == [0.0, 1.0]


def test_claims_extracted_once_for_faithfulness_and_answer_correctness():
    llm = scripted()
    ctx = EvalContext(llm, HashEmbedder())
    [f] = Faithfulness().score(S, ctx)
    [ac] = AnswerCorrectness().score(S, ctx)
    answer_extractions = [r for r in llm.calls("extract_claims") if r.inputs["answer"] == S.answer]
    assert len(answer_extractions) == 1
    assert f.value == 0.5 and f.calls == 2
    assert ac.calls == 2 and ac.details["shared_steps"] == ["answer_claims"]  # shown, not counted twice
    assert ac.details["shared_calls"][0]["task"] == "extract_claims"


def test_claims_shared_under_concurrency():
    llm = ScriptedLLM(default=lambda req: ANSWER_CLAIMS if req.task == "extract_claims" and req.inputs["answer"] == S.answer
                      else GT_CLAIMS if req.task == "extract_claims" else CLASSIFIED if req.task == "classify_correctness"
                      else {"verdicts": [v(0, 0), v(1, 1)]})
    ctx = EvalContext(llm, HashEmbedder())
    scorers = build_scorers(["faithfulness", "answer_correctness"])
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda s: s.score(S, ctx)[0], scorers * 3))
    assert len([r for r in llm.calls("extract_claims") if r.inputs["answer"] == S.answer]) == 1
    assert all(r.scored for r in results)


def test_shared_failure_reported_by_both():
    llm = ScriptedLLM().script("extract_claims", "garbage")
    ctx = EvalContext(llm, HashEmbedder())
    [f] = Faithfulness().score(S, ctx)
    [ac] = AnswerCorrectness().score(S, ctx)
    assert f.unscored_reason == ac.unscored_reason == "parse_error"
    assert f.details["raw_response"] == ac.details["raw_response"] == "garbage"
    assert [r.reask for r in llm.requests] == [0, 1]  # one extraction and its re-ask, shared by both metrics
    assert f.details["reask"] == {"asked": 1, "recovered": 0} and "reask" not in ac.details


def test_economy_mode_one_shared_verification_call():
    llm = ScriptedLLM()
    llm.script("extract_claims", ANSWER_CLAIMS)
    llm.script("verify_claims_with_reference", {"verdicts": [v(0, 0, ref=0), v(1, 1, ref=1)], "missing_reference_claims": [1]})
    ctx = EvalContext(llm, HashEmbedder(), options={"economy": True})
    [f] = Faithfulness().score(S, ctx)
    [ac] = AnswerCorrectness().score(S, ctx)
    assert [r.task for r in llm.requests] == ["extract_claims", "verify_claims_with_reference"]
    verify = llm.requests[1]
    assert verify.inputs["reference_claims"] == ["Backpropagation was popularised in 1986 by Rumelhart and others.", "Werbos proposed it in 1974."]
    assert f.value == 0.5 and f.details["mode"] == "economy" and f.calls == 2
    assert ac.calls == 0 and ac.details["mode"] == "economy"
    assert [x["statement"] for x in ac.details["TP"]] == ["Backpropagation was popularised in 1986."]
    assert [x["statement"] for x in ac.details["FN"]] == ["Werbos proposed it in 1974."]
    assert ac.details["f1"] == pytest.approx(0.5)


def test_economy_without_ground_truth_falls_back_for_faithfulness():
    sample = Sample("n", S.question, S.contexts, S.answer)
    llm = ScriptedLLM().script("extract_claims", ANSWER_CLAIMS).script("verify_claims", {"verdicts": [v(0, 1), v(1, 1)]})
    [f] = Faithfulness(economy=True).score(sample, EvalContext(llm, HashEmbedder()))
    assert f.value == 1.0 and f.details["mode"] == "default"


def test_unscored_paths():
    ctx = EvalContext(ScriptedLLM(), HashEmbedder())
    assert AnswerCorrectness().score(Sample("x", "q", ("c",), "a"), ctx)[0].unscored_reason == "missing_field"
    assert AnswerCorrectness().score(Sample("x", "q", ("c",), "", "gt"), ctx)[0].unscored_reason == "empty_answer"
    err = scripted()
    err._queues["classify_correctness"].clear()
    err.script("classify_correctness", ProviderError("read timed out", kind="timeout"))
    [r] = AnswerCorrectness().score(S, EvalContext(err, HashEmbedder()))
    assert r.unscored_reason == "timeout" and r.calls == 2
    bad = scripted()
    bad._queues["classify_correctness"].clear()
    bad.script("classify_correctness", '{"TP": "all of them"}')
    [r] = AnswerCorrectness().score(S, EvalContext(bad, HashEmbedder()))
    assert r.unscored_reason == "parse_error" and r.details["raw_response"] == '{"TP": "all of them"}'


def test_japanese_templates():
    sample = Sample("ja", "過学習とは？", ("過学習は汎化性能が落ちる現象です。",), "過学習は汎化性能が落ちる現象です。", "汎化性能が落ちる現象。")
    llm = ScriptedLLM(default=lambda req: {"claims": ["x"]} if req.task == "extract_claims"
                      else {"TP": [{"statement": "x", "reason": "一致"}], "FP": [], "FN": []})
    [r] = AnswerCorrectness().score(sample, EvalContext(llm, HashEmbedder()))
    assert all(x.language == "ja" for x in llm.requests) and "模範解答の主張" in llm.calls("classify_correctness")[0].prompt_text
    assert "意味的類似度" in r.reason
