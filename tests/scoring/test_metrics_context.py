"""Context precision, context recall and context relevance through a scripted LLM."""

import pytest

from rageval_core.llm.base import ProviderError
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.context_precision import ContextPrecision
from rageval_core.scoring.metrics.context_recall import ContextRecall
from rageval_core.scoring.metrics.context_relevance import ContextRelevance
from rageval_core.core.types import Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

THREE = Sample(
    "cp",
    "What is dropout?",
    ("Dropout randomly disables units during training.", "Paris is in France.", "Dropout reduces overfitting."),
    "Dropout disables random units to reduce overfitting.",
    "Dropout randomly disables units. It reduces overfitting.",
)
JA = Sample(
    "ja",
    "ドロップアウトとは何ですか？",
    ("ドロップアウトは学習中にユニットをランダムに無効化する手法です。過学習を抑えます。", "パリはフランスの首都です。"),
    "ドロップアウトはユニットを無効化する手法です。",
    "ドロップアウトは学習中にユニットを無効化する。過学習を抑える効果がある。",
)


def run(scorer, sample, llm, **options):
    [r] = scorer.score(sample, EvalContext(llm, HashEmbedder(), options=options))
    return r


def cv(i, useful, reason="r"):
    return {"context_index": i, "useful": useful, "reason": reason}


# ---------------------------------------------------------------- context precision


def test_precision_all_chunks_in_one_call_is_average_precision():
    llm = ScriptedLLM().script("context_verdicts", {"verdicts": [cv(0, 1), cv(1, 0, "off topic"), cv(2, 1)]})
    r = run(ContextPrecision(), THREE, llm)
    assert r.value == pytest.approx((1 + 2 / 3) / 2)
    assert [v["useful"] for v in r.details["verdicts"]] == [1, 0, 1] and r.details["verdicts"][1]["reason"] == "off topic"
    assert r.details["precision_at_k"] == pytest.approx([1.0, 0.5, 0.6667], abs=1e-4)
    [request] = llm.requests
    assert request.inputs["reference_kind"] == "ground_truth" and request.inputs["reference"] == THREE.ground_truth
    assert "2 of 3 chunks useful" in r.reason and r.calls == 1


def test_precision_per_chunk_sends_one_call_per_chunk():
    llm = ScriptedLLM().script("context_verdicts", *[{"verdicts": [cv(0, b)]} for b in (0, 1, 1)])
    r = run(ContextPrecision(calls="per_chunk"), THREE, llm)
    assert r.value == pytest.approx((1 / 2 + 2 / 3) / 2) and r.calls == 3
    assert [x.inputs["contexts"] for x in llm.requests] == [[c] for c in THREE.contexts]
    assert [v["context_index"] for v in r.details["verdicts"]] == [0, 1, 2]


def test_precision_uses_the_answer_without_ground_truth():
    sample = Sample("n", THREE.question, THREE.contexts, THREE.answer)
    llm = ScriptedLLM().script("context_verdicts", {"verdicts": [cv(0, 0), cv(1, 0), cv(2, 0)]})
    r = run(ContextPrecision(), sample, llm)
    assert r.value == 0.0 and r.details["reference_kind"] == "answer"
    assert llm.requests[0].inputs["reference"] == THREE.answer


def test_precision_unscored_paths():
    assert run(ContextPrecision(), Sample("x", "q?", (), "a"), ScriptedLLM()).unscored_reason == "missing_field"
    assert run(ContextPrecision(), Sample("x", "q?", ("c",), " "), ScriptedLLM()).unscored_reason == "empty_answer"
    mismatch = ScriptedLLM().script("context_verdicts", {"verdicts": [cv(0, 1), cv(1, 1)]})
    assert run(ContextPrecision(), THREE, mismatch).unscored_reason == "verdict_mismatch"
    bad = ScriptedLLM().script("context_verdicts", '{"verdicts": [')
    r = run(ContextPrecision(), THREE, bad)
    assert r.unscored_reason == "parse_error" and r.details["raw_response"] == '{"verdicts": ['
    not_bit = ScriptedLLM().script("context_verdicts", {"verdicts": [cv(0, 1), cv(1, "maybe"), cv(2, 0)]})
    assert run(ContextPrecision(), THREE, not_bit).unscored_reason == "parse_error"


def test_precision_ten_contexts_and_single_context():
    contexts = tuple(f"Chunk {i} about dropout." for i in range(10))
    useful = [0, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    llm = ScriptedLLM().script("context_verdicts", {"verdicts": [cv(i, b) for i, b in enumerate(useful)]})
    r = run(ContextPrecision(), Sample("ten", "q?", contexts, "a", "gt"), llm)
    assert r.value == pytest.approx((1 / 3 + 2 / 10) / 2)
    one = ScriptedLLM().script("context_verdicts", {"verdicts": [cv(0, 1)]})
    assert run(ContextPrecision(), Sample("one", "q?", ("c",), "a", "gt"), one).value == 1.0


def test_precision_japanese_template():
    llm = ScriptedLLM().script("context_verdicts", {"verdicts": [cv(0, 1), cv(1, 0)]})
    r = run(ContextPrecision(), JA, llm)
    assert llm.requests[0].language == "ja" and "役立ったか" in llm.requests[0].prompt_text and "チャンク" in r.reason


def test_precision_provider_error():
    llm = ScriptedLLM().script("context_verdicts", ProviderError("boom", kind="server", status=500))
    r = run(ContextPrecision(), THREE, llm)
    assert r.unscored_reason == "provider_error" and "boom" in r.reason


# ---------------------------------------------------------------- context recall


def att(i, a):
    return {"sentence_index": i, "attributed": a, "reason": "r"}


def test_recall_attributes_each_ground_truth_sentence():
    llm = ScriptedLLM().script("attribute_reference", {"attributions": [att(1, 0), att(0, 1)]})
    r = run(ContextRecall(), JA, llm)
    assert r.value == 0.5
    sentences = llm.requests[0].inputs["reference_sentences"]
    assert sentences == ["ドロップアウトは学習中にユニットを無効化する。", "過学習を抑える効果がある。"]
    assert [s["attributed"] for s in r.details["reference_sentences"]] == [1, 0]
    assert "過学習を抑える効果がある" in r.reason and "模範解答の2文" in r.reason


def test_recall_needs_ground_truth_and_matching_counts():
    r = run(ContextRecall(), Sample("x", "q?", ("c",), "a"), ScriptedLLM())
    assert r.unscored_reason == "missing_field" and r.calls == 0
    llm = ScriptedLLM().script("attribute_reference", {"attributions": [att(0, 1)]})
    assert run(ContextRecall(), JA, llm).unscored_reason == "verdict_mismatch"
    assert run(ContextRecall(), Sample("x", "q?", (), "a", "gt."), ScriptedLLM()).unscored_reason == "missing_field"


# ---------------------------------------------------------------- context relevance


def test_relevance_is_extracted_over_all_context_sentences():
    llm = ScriptedLLM().script(
        "extract_relevant_sentences",
        {"sentences": ["Dropout randomly disables units during training.", "Dropout reduces overfitting.",
                       "Dropout randomly disables the units in training."]},  # a paraphrase of the first
    )
    r = run(ContextRelevance(), THREE, llm)
    assert r.details["context_sentence_count"] == 3
    assert r.value == 1.0  # three extracted, capped at the three sentences
    assert [s["in_context"] for s in r.details["extracted_sentences"]] == [True, True, False]
    assert [s["counted"] for s in r.details["extracted_sentences"]] == [True, True, True]
    assert "not found verbatim" in r.reason


@pytest.mark.parametrize("invented", ["Insufficient Information", "Batch normalization rescales activations per mini-batch."])
def test_relevance_does_not_count_text_that_is_not_from_the_contexts(invented):
    llm = ScriptedLLM().script("extract_relevant_sentences", {"sentences": ["Dropout reduces overfitting.", invented]})
    r = run(ContextRelevance(), THREE, llm)
    assert r.value == pytest.approx(1 / 3)  # the invented text is kept for the inspector, not counted
    row = r.details["extracted_sentences"][1]
    assert row["sentence"] == invented and row["counted"] is False and row["overlap"] < 0.5
    assert "not counted" in r.reason


def test_relevance_japanese_counts_with_the_project_splitter():
    llm = ScriptedLLM().script("extract_relevant_sentences", {"sentences": ["ドロップアウトは学習中にユニットをランダムに無効化する手法です。"]})
    r = run(ContextRelevance(), JA, llm)
    assert r.details["context_sentence_count"] == 3 and r.value == pytest.approx(1 / 3)
    assert llm.requests[0].language == "ja" and "必要な文" in llm.requests[0].prompt_text


def test_relevance_nothing_needed_and_unscored_paths():
    none = ScriptedLLM().script("extract_relevant_sentences", {"sentences": []})
    assert run(ContextRelevance(), THREE, none).value == 0.0
    assert run(ContextRelevance(), Sample("x", "q?", ("",), "a"), ScriptedLLM()).unscored_reason == "missing_field"
    bad = ScriptedLLM().script("extract_relevant_sentences", {"sentences": [1, 2]})
    assert run(ContextRelevance(), THREE, bad).unscored_reason == "parse_error"
