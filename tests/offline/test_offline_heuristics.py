"""Pure offline heuristics: pre-checks, claim support, soft-min, chunk usefulness, attribution,
context relevance, correctness, answer relevancy stand-in, extractive synthetic QA and RAG answer."""

import numpy as np
import pytest

from rageval_core.offline import steps
from rageval_core.offline.checks import faithfulness_precheck, is_bare_yes_no, non_blank
from rageval_core.offline.generate import NOT_FOUND, key_phrase, rag_answer, synth_qa
from rageval_core.offline.support import (
    aggregate_support,
    build_evidence,
    faithfulness_score,
    score_claims,
    soft_min,
    squash,
    support_threshold,
)
from rageval_core.core.types import Unscored
from tests.support.scripted_llm import HashEmbedder

CTX_JA = [
    "ドロップアウト（Dropout）は、学習中にランダムに一部のニューロンを無効化（出力を0にする）する正則化手法です。",
    "ドロップアウト率（drop rate）は通常0.2〜0.5の間で設定されます。無効化するニューロンはミニバッチごとにランダムに選ばれます。",
]
CTX_EN = [
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It was designed by the company of Gustave Eiffel.",
    "The tower is 330 metres tall and was the tallest man-made structure in the world until 1930.",
]


@pytest.mark.parametrize(
    "answer, contexts, reason",
    [
        ("", ["ctx"], Unscored.EMPTY_ANSWER),
        ("   ", ["ctx"], Unscored.EMPTY_ANSWER),
        ("An answer.", [], Unscored.MISSING_FIELD),
        ("An answer.", ["", "  "], Unscored.MISSING_FIELD),
        ("Yes.", ["ctx"], Unscored.UNCHECKABLE),
        ("はい。", ["ctx"], Unscored.UNCHECKABLE),
        ("いいえ", ["ctx"], Unscored.UNCHECKABLE),
        ("No, it was built in 1889.", ["ctx"], None),
    ],
)
def test_faithfulness_precheck(answer, contexts, reason):
    assert faithfulness_precheck(answer, contexts) == reason


def test_bare_yes_no_and_non_blank():
    assert is_bare_yes_no("ＹＥＳ！") and is_bare_yes_no("そうです。")
    assert not is_bare_yes_no("はい、そうです。ドロップアウトは正則化です。")
    assert non_blank(["a", " ", "", "b"]) == ["a", "b"]


def test_supported_japanese_claim_scores_high_and_a_missing_number_is_reported_and_never_rewarded():
    ev = build_evidence(CTX_JA, "ja")
    good, bad = score_claims(
        [
            "ドロップアウトは学習中にランダムに一部のニューロンを無効化する正則化手法です。",
            "ドロップアウト率は必ず0.8に固定する必要があります。",
        ],
        ev,
    )
    assert good.score >= support_threshold("ja") and good.supported
    assert good.context_index == 0 and "無効化" in (good.supporting_sentence or "")
    # the penalty weights are fitted at or below 0 (bench/fit_offline.py); Japanese dev claims with a missing
    # number are too few to give the weight a value, so it may be 0 there, but never a reward
    assert bad.missing_numbers == ["0.8"] and bad.penalty >= 0 and not bad.supported
    assert bad.score < good.score and not bad.supported


def test_english_entity_mismatch_is_penalised():
    ev = build_evidence(CTX_EN, "en")
    right, wrong = score_claims(
        [
            "The Eiffel Tower was designed by the company of Gustave Eiffel.",
            "The Eiffel Tower was designed by Alan Turing.",
        ],
        ev,
    )
    assert right.supported
    assert set(wrong.missing_entities) == {"alan", "turing"}
    assert wrong.score < right.score and not wrong.supported


def test_entities_named_in_the_question_are_not_penalised():
    ev = build_evidence(["The tower is 330 metres tall."], "en")
    (plain,) = score_claims(["The tower in Paris is 330 metres tall."], ev)
    (asked,) = score_claims(
        ["The tower in Paris is 330 metres tall."],
        ev,
        question="How tall is the tower in Paris?",
    )
    assert plain.missing_entities == ["paris"] and asked.missing_entities == []


def test_the_cosine_enters_every_claim_with_its_fitted_weight():
    """No 40-character gate any more: the fitted model weighs the cosine for short and long claims alike."""
    ev = build_evidence(CTX_EN, "en")
    short, long_ = score_claims(
        [
            "It is 330 m.",
            "The tower is 330 metres tall and it was completed in 1889 in Paris.",
        ],
        ev,
        embedder=HashEmbedder(),
    )
    assert short.embedding_cosine is not None and long_.embedding_cosine is not None
    assert short.embedding_weight == long_.embedding_weight != 0.0


def test_soft_min_and_aggregate():
    assert soft_min([]) is None
    assert soft_min([1.0, 0.0]) == pytest.approx(0.5 * 0.0 + 0.5 * 0.5)
    assert soft_min([1.0, 0.0], [3.0, 1.0]) == pytest.approx(0.5 * 0.0 + 0.5 * 0.75)
    assert soft_min([0.8]) == pytest.approx(0.8)
    assert (
        squash(0.2) == 0.0 and squash(0.9) == 1.0 and squash(0.55) == pytest.approx(0.5)
    )


def test_faithfulness_score_separates_faithful_from_hallucinated_rows():
    faithful, scores = faithfulness_score(
        "ドロップアウトとは？",
        CTX_JA,
        "ドロップアウトは学習中にランダムに一部のニューロンを無効化する正則化手法です。ドロップアウト率は通常0.2〜0.5の間で設定されます。",
    )
    hallucinated, _ = faithfulness_score(
        "ドロップアウトとは？",
        CTX_JA,
        "ドロップアウトは1970年にアラン・チューリングが暗号解読のために発明しました。",
    )
    assert len(scores) == 2 and aggregate_support(scores) == faithful
    assert faithful is not None and hallucinated is not None
    assert faithful >= 0.6 and hallucinated < 0.2
    assert faithfulness_score("q", [], "answer") == (None, [])


def test_chunk_usefulness_and_average_precision():
    chunks = steps.chunk_usefulness(
        "ドロップアウト率は0.2〜0.5の間で設定されます。",
        [CTX_JA[1], "Pythonはインタープリタ型のプログラミング言語です。", ""],
    )
    assert [c.useful for c in chunks] == [True, False, False]
    assert steps.average_precision([True, False, True]) == pytest.approx(
        (1 + 2 / 3) / 2
    )
    assert steps.average_precision([False, False]) == 0.0
    assert steps.average_precision([]) is None


def test_attribute_reference_sentences():
    scores = steps.attribute_sentences(
        ["The tower is 330 metres tall.", "It was painted gold by Napoleon in 1750."],
        CTX_EN,
        language="en",
    )
    assert [s.supported for s in scores] == [True, False]


def test_context_relevance_counts_sentences_that_cover_question_or_answer():
    contexts = [
        (
            "Found in 2014 by Theodore Scott, PharmaCann is a cannabis company headquartered in Illinois. "
            "The weather in Chicago is cold in winter. Many people enjoy jazz music."
        )
    ]
    value, rel = steps.context_relevance_score(
        "When was PharmaCann founded and where is its headquarters?", contexts
    )
    assert len(rel) == 3 and [r.relevant for r in rel] == [True, False, False]
    assert value == pytest.approx(1 / 3)
    value_a, _ = steps.context_relevance_score(
        "Where?", contexts, answer="People there enjoy jazz music a lot."
    )
    assert value_a == pytest.approx(1 / 3)
    assert steps.context_relevance_score("q", []) == (None, [])


def test_classify_correctness_tp_fp_fn():
    result = steps.classify_correctness(
        ["The Eiffel Tower is 330 metres tall.", "It was designed by Alan Turing."],
        ["The Eiffel Tower is 330 metres tall.", "It was completed in 1889."],
        language="en",
    )
    assert [c.claim for c in result.tp] == ["The Eiffel Tower is 330 metres tall."]
    assert [c.claim for c in result.fp] == ["It was designed by Alan Turing."]
    assert [c.claim for c in result.fn] == ["It was completed in 1889."]
    assert result.f1 == pytest.approx(1 / (1 + 0.5 * 2))
    assert steps.Correctness([], [], []).f1 is None


def test_answer_relevancy_stand_in():
    emb = HashEmbedder()
    on_topic = steps.answer_relevancy_score(
        "What is dropout?", "Dropout disables random neurons during training.", emb
    )
    off_topic = steps.answer_relevancy_score(
        "What is dropout?", "Paris is the capital of France.", emb
    )
    assert on_topic > off_topic
    assert steps.answer_relevancy_score("What is dropout?", "I don't know.", emb) == 0.0
    assert steps.is_noncommittal(
        "申し訳ありませんが、分かりません。"
    ) and not steps.is_noncommittal("分かりやすい説明です。")
    assert (
        steps.question_coverage(
            "ドロップアウトについて説明してください。", "ドロップアウトは正則化です。"
        )
        == 1.0
    )


def test_synth_qa_is_extractive_and_uses_heading():
    text = "有給休暇は入社から6か月後に10日付与されます。また、未使用の休暇は翌年度に限り繰り越すことができます。"
    pairs = synth_qa("就業規則", "年次有給休暇", text, 2, "ja")
    assert [p.answer for p in pairs] == [
        "有給休暇は入社から6か月後に10日付与されます。",
        "また、未使用の休暇は翌年度に限り繰り越すことができます。",
    ]
    assert all(
        "年次有給休暇" in p.question and p.question.endswith("？") for p in pairs
    )
    assert pairs[0].key_phrase == "有給休暇"
    en = synth_qa(
        "Handbook",
        "Paid leave",
        "Unused leave can be carried over to the next year only.",
        3,
        "en",
    )
    assert (
        en[0].question
        == 'According to "Paid leave", what is stated about unused leave?'
    )
    assert key_phrase("Requests must be sent early.", "en") == "requests"
    assert synth_qa("t", "h", "", 3) == []


def test_rag_answer_picks_matching_sentences_or_says_not_found():
    text = "有給休暇は入社から6か月後に10日付与されます。経費の精算は月末までに申請してください。"
    result = rag_answer("有給休暇は何日付与されますか？", [text], language="ja")
    assert result.found and result.answer.startswith(
        "有給休暇は入社から6か月後に10日付与されます。"
    )
    assert result.sentences[0] == "有給休暇は入社から6か月後に10日付与されます。"
    missing = rag_answer("量子コンピュータとは何ですか？", [text], language="ja")
    assert not missing.found and missing.answer == NOT_FOUND["ja"]
    with_emb = rag_answer(
        "How many days of paid leave?",
        ["Employees receive ten days of paid leave.", "Lunch is at noon."],
        embedder=HashEmbedder(),
        language="en",
    )
    assert with_emb.sentences == ["Employees receive ten days of paid leave."]


def test_hash_embedder_rows_are_unit_length():
    v = HashEmbedder().embed(["a b c", "d e f"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)


def test_a_changed_amount_is_a_wrong_fact_not_a_paraphrase():
    """Correctness classification: a claim whose numbers the reference lacks is FP (and the reference's FN),
    even when the rest of the sentence is word for word the same (lexical support alone would pass it)."""
    from rageval_core.offline.steps import classify_correctness

    reference = "経費精算の申請は、所定のフォームを使って翌月10日までに所属長の承認を得て経理部へ提出してください。"
    changed = reference.replace("10日", "15日")
    same = classify_correctness([reference], [reference], language="ja")
    moved = classify_correctness([changed], [reference], language="ja")
    assert (len(same.tp), len(same.fp), len(same.fn)) == (1, 0, 0)
    assert moved.fp[0].missing_numbers == ["15"]
    assert moved.fp[0].contradiction is not None and moved.fp[0].contradiction["kind"] == "number"  # 15 where it says 10
    assert (len(moved.tp), len(moved.fp), len(moved.fn)) == (0, 1, 1)
