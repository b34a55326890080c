"""The offline provider answers every task in tasks.py in that task's schema, deterministically and for free."""

import json
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import numpy as np
import pytest

from rageval_core.core import tasks as T
from rageval_core.offline.encoder import OfflineEmbedder
from rageval_core.llm.base import LLM, Embedder, LLMRequest, Message, ProviderError
from rageval_core.offline.provider import UNSCORED_KEY, UNSUPPORTED_KEY, OfflineLLM, to_scale
from rageval_core.core.types import METRIC_IDS, Unscored

Q_JA = "ドロップアウトはどのような仕組みで過学習を防ぎますか？"
CTX_JA = [
    "ドロップアウト（Dropout）は、学習中にランダムに一部のニューロンを無効化（出力を0にする）する正則化手法です。",
    "ドロップアウト率（drop rate）は通常0.2〜0.5の間で設定されます。無効化するニューロンはミニバッチごとにランダムに選ばれます。",
]
A_JA = "ドロップアウトは学習中にランダムに一部のニューロンを無効化する正則化手法です。ドロップアウト率は必ず0.9に固定する必要があります。"
GT_JA = "ドロップアウトは学習中にランダムに一部のニューロンを無効化し、共適応を防ぐ。ドロップアウト率は0.2〜0.5の間で調整可能。"

Q_EN = "When was the Eiffel Tower completed and how tall is it?"
CTX_EN = [
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It was designed by the company of Gustave Eiffel.",
    "The tower is 330 metres tall and was the tallest man-made structure in the world until 1930.",
]
A_EN = "The Eiffel Tower was completed in 1889. It is 330 metres tall."
GT_EN = "It was completed in 1889 and is 330 metres tall."


@pytest.fixture(scope="module")
def embedder() -> OfflineEmbedder:
    return OfflineEmbedder()


@pytest.fixture(scope="module")
def llm(embedder) -> OfflineLLM:
    return OfflineLLM(embedder)


def ask(llm: OfflineLLM, task: str, inputs: dict, language: str = "ja", n: int = 1):
    completion = llm.complete(
        LLMRequest(
            task,
            (Message("user", "prompt text the heuristic ignores"),),
            inputs=inputs,
            language=language,
            n=n,
        )
    )
    return completion, json.loads(completion.text)


INPUTS = {
    T.EXTRACT_CLAIMS: {"question": Q_JA, "answer": A_JA},
    T.VERIFY_CLAIMS: {
        "contexts": CTX_JA,
        "claims": [
            "ドロップアウトはニューロンを無効化する正則化手法です。",
            "ドロップアウト率は必ず0.9です。",
        ],
    },
    T.VERIFY_CLAIMS_WITH_REFERENCE: {
        "contexts": CTX_JA,
        "reference": GT_JA,
        "claims": ["ドロップアウトはニューロンを無効化する正則化手法です。"],
        "reference_claims": [
            "ドロップアウトはニューロンを無効化する。",
            "ドロップアウト率は0.2〜0.5の間で調整可能。",
        ],
    },
    T.GENERATE_QUESTIONS: {"answer": A_JA, "contexts": CTX_JA, "n": 3},
    T.CONTEXT_VERDICTS: {
        "question": Q_JA,
        "contexts": CTX_JA,
        "reference": GT_JA,
        "reference_kind": "ground_truth",
    },
    T.ATTRIBUTE_REFERENCE: {
        "question": Q_JA,
        "contexts": CTX_JA,
        "reference_sentences": [
            "ドロップアウトはニューロンを無効化する。",
            "1970年にチューリングが発明した。",
        ],
    },
    T.EXTRACT_RELEVANT_SENTENCES: {"question": Q_JA, "contexts": CTX_JA},
    T.CLASSIFY_CORRECTNESS: {
        "question": Q_JA,
        "answer_claims": [
            "ドロップアウトはニューロンを無効化する。",
            "率は必ず0.9です。",
        ],
        "reference_claims": [
            "ドロップアウトはニューロンを無効化する。",
            "共適応を防ぐ。",
        ],
    },
    T.SYNTH_QA: {
        "title": "就業規則",
        "heading": "年次有給休暇",
        "n": 2,
        "text": "有給休暇は入社から6か月後に10日付与されます。未使用の休暇は翌年度に限り繰り越すことができます。",
    },
    T.SYNTH_REASONING: {
        "title": "就業規則",
        "heading": "経費",
        "n": 1,
        "text": "1件あたり5,000円未満の支出は、部門長の承認だけで精算できます。",
    },
    T.SYNTH_MULTI_CHUNK: {
        "title": "就業規則",
        "heading_a": "年次有給休暇",
        "text_a": "有給休暇は入社から6か月後に10日付与されます。",
        "heading_b": "経費",
        "text_b": "申請期限は支出日の翌月10日までです。",
        "n": 1,
    },
    T.SYNTH_OUT_OF_SCOPE: {
        "title": "就業規則",
        "heading": "年次有給休暇",
        "n": 1,
        "text": "有給休暇は入社から6か月後に10日付与されます。",
        "not_found": "文書には記載がありません。",
    },
    T.RAG_ANSWER: {"question": Q_JA, "contexts": CTX_JA},
}


def test_every_task_of_the_catalogue_is_covered(llm):
    assert set(llm.tasks) == set(T.SCHEMAS) | {T.JUDGE}
    assert set(INPUTS) == set(T.SCHEMAS)


@pytest.mark.parametrize("task", sorted(T.SCHEMAS))
def test_each_task_matches_its_schema(llm, task):
    completion, data = ask(llm, task, INPUTS[task])
    # the task's schema plus the documented offline extras (graded "support" per claim verdict)
    jsonschema.validate(data, T.offline_schema_for(task))
    assert completion.provider == "offline" and completion.model == "heuristic-v4"
    assert (
        completion.usage.input_tokens == 0
        and completion.usage.output_tokens == 0
        and completion.cost_usd == 0.0
    )
    assert not completion.cached and completion.raw["task"] == task


def test_protocols(llm, embedder):
    assert isinstance(llm, LLM) and isinstance(embedder, Embedder)
    assert embedder.provider == "offline" and "use" in embedder.model.lower()


def test_verify_claims_verdicts_and_reasons(llm):
    _, data = ask(llm, T.VERIFY_CLAIMS, INPUTS[T.VERIFY_CLAIMS])
    good, bad = data["verdicts"]
    assert (good["verdict"], bad["verdict"]) == (1, 0)
    assert good["context_index"] == 0 and "無効化" in good["supporting_sentence"]
    assert bad["context_index"] is None and "0.9" in bad["reason"]
    assert all(  # the reason is what was measured; "offline" is the result's provider tag, not a sentence here
        "ヒューリスティック" not in v["reason"] and "スコア" in v["reason"]
        for v in data["verdicts"]
    )
    _, en = ask(
        llm,
        T.VERIFY_CLAIMS,
        {"contexts": CTX_EN, "claims": ["It was designed by Alan Turing."]},
        language="en",
    )
    assert (
        en["verdicts"][0]["verdict"] == 0
        and "ignores the prompt text" not in en["verdicts"][0]["reason"]
        and "alan" in en["verdicts"][0]["reason"]  # the reason names what is missing, without a disclaimer
    )


def test_claims_are_the_answers_sentences(llm):
    _, data = ask(llm, T.EXTRACT_CLAIMS, INPUTS[T.EXTRACT_CLAIMS])
    assert data["claims"] == [
        "ドロップアウトは学習中にランダムに一部のニューロンを無効化する正則化手法です。",
        "ドロップアウト率は必ず0.9に固定する必要があります。",
    ]
    _, blank = ask(llm, T.EXTRACT_CLAIMS, {"question": Q_JA, "answer": "  "})
    assert blank["claims"] == []


def test_generate_questions_stands_in_with_the_answer(llm):
    completion, data = ask(llm, T.GENERATE_QUESTIONS, INPUTS[T.GENERATE_QUESTIONS], n=3)
    assert len(completion.texts) == 3 and len(data["questions"]) == 3
    assert {q["question"] for q in data["questions"]} == {A_JA} and data["questions"][
        0
    ]["noncommittal"] == 0
    _, evasive = ask(
        llm, T.GENERATE_QUESTIONS, {"answer": "分かりません。", "contexts": [], "n": 1}
    )
    assert evasive["questions"][0]["noncommittal"] == 1


def test_reference_steps(llm):
    _, with_ref = ask(
        llm, T.VERIFY_CLAIMS_WITH_REFERENCE, INPUTS[T.VERIFY_CLAIMS_WITH_REFERENCE]
    )
    assert with_ref["verdicts"][0]["verdict"] == 1  # the reference lacks 正則化手法: its verdict is the model's call
    assert with_ref["missing_reference_claims"] == [1]
    _, attr = ask(llm, T.ATTRIBUTE_REFERENCE, INPUTS[T.ATTRIBUTE_REFERENCE])
    assert [a["attributed"] for a in attr["attributions"]] == [1, 0]
    _, cls = ask(llm, T.CLASSIFY_CORRECTNESS, INPUTS[T.CLASSIFY_CORRECTNESS])
    assert [s["statement"] for s in cls["TP"]] == [
        "ドロップアウトはニューロンを無効化する。"
    ]
    assert [s["statement"] for s in cls["FP"]] == ["率は必ず0.9です。"]
    assert [s["statement"] for s in cls["FN"]] == ["共適応を防ぐ。"]


def test_context_steps(llm):
    _, verdicts = ask(
        llm,
        T.CONTEXT_VERDICTS,
        {
            **INPUTS[T.CONTEXT_VERDICTS],
            "contexts": CTX_JA + ["Pythonはインタープリタ型の言語です。"],
        },
    )
    assert [v["useful"] for v in verdicts["verdicts"]] == [1, 1, 0]
    assert [v["context_index"] for v in verdicts["verdicts"]] == [0, 1, 2]
    _, rel = ask(
        llm,
        T.EXTRACT_RELEVANT_SENTENCES,
        {
            "question": "ドロップアウト率は通常いくつに設定されますか？",
            "contexts": CTX_JA,
        },
    )
    assert rel["sentences"] == [
        "ドロップアウト率（drop rate）は通常0.2〜0.5の間で設定されます。"
    ]


def test_rag_and_synth(llm):
    _, rag = ask(
        llm,
        T.RAG_ANSWER,
        {"question": "ドロップアウト率はいくつですか？", "contexts": CTX_JA},
    )
    assert "0.2〜0.5" in rag["answer"]
    _, synth = ask(llm, T.SYNTH_QA, INPUTS[T.SYNTH_QA])
    assert len(synth["pairs"]) == 2 and all(
        "年次有給休暇" in p["question"] for p in synth["pairs"]
    )


def criteria(lo: int, hi: int, ids=METRIC_IDS) -> list[dict]:
    return [{"id": cid, "name": cid, "min": lo, "max": hi} for cid in ids]


@pytest.mark.parametrize("lo, hi", [(1, 5), (0, 1), (1, 10)])
def test_judge_scores_every_standard_criterion_on_its_scale(llm, lo, hi):
    inputs = {
        "question": Q_EN,
        "contexts": CTX_EN,
        "answer": A_EN,
        "ground_truth": GT_EN,
        "criteria": criteria(lo, hi),
    }
    _, data = ask(llm, T.JUDGE, inputs, language="en")
    jsonschema.validate(data, T.judge_schema(METRIC_IDS, min_score=lo, max_score=hi))
    assert data["faithfulness_score"] >= hi - 1 and data["context_recall_score"] >= hi - 1
    assert "support" in data["faithfulness_reason"] and "ignores the prompt text" not in data["faithfulness_reason"]


def test_judge_binary_fails_a_hallucination(llm):
    inputs = {
        "question": Q_EN,
        "contexts": CTX_EN,
        "answer": "The Eiffel Tower was completed in 1750 by Alan Turing.",
        "ground_truth": GT_EN,
        "criteria": criteria(0, 1, ["faithfulness", "answer_correctness"]),
    }
    _, data = ask(llm, T.JUDGE, inputs, language="en")
    assert data["faithfulness_score"] == 0 and data["answer_correctness_score"] == 0


def test_judge_japanese_reasons_and_custom_criteria(llm):
    crit = criteria(1, 5, ["faithfulness", "tone"])
    _, data = ask(
        llm,
        T.JUDGE,
        {
            "question": Q_JA,
            "contexts": CTX_JA,
            "answer": A_JA,
            "ground_truth": GT_JA,
            "criteria": crit,
        },
    )
    assert data[UNSUPPORTED_KEY] == ["tone"] and "tone_score" not in data
    assert "ヒューリスティック" not in data["faithfulness_reason"] and "0.9" in data["faithfulness_reason"]
    assert (
        1 <= data["faithfulness_score"] <= 3
    )  # one of two sentences contradicts the contexts


def test_judge_leaves_uncheckable_rows_unscored(llm):
    crit = criteria(1, 5, ["faithfulness", "context_recall", "answer_relevancy"])
    _, data = ask(
        llm,
        T.JUDGE,
        {
            "question": Q_JA,
            "contexts": CTX_JA,
            "answer": "はい。",
            "ground_truth": None,
            "criteria": crit,
        },
    )
    assert data[UNSCORED_KEY] == {
        "faithfulness": Unscored.UNCHECKABLE,
        "context_recall": Unscored.MISSING_FIELD,
    }
    assert (
        "faithfulness_score" not in data
        and "faithfulness_reason" in data
        and "answer_relevancy_score" in data
    )
    _, blank = ask(
        llm,
        T.JUDGE,
        {
            "question": Q_JA,
            "contexts": [],
            "answer": "",
            "criteria": criteria(1, 5, ["faithfulness"]),
        },
    )
    assert blank[UNSCORED_KEY] == {"faithfulness": Unscored.EMPTY_ANSWER}


@pytest.mark.parametrize(
    "value, lo, hi, pivot, expected",
    [
        (0.0, 1, 5, 0.5, 1),
        (1.0, 1, 5, 0.5, 5),
        (0.5, 1, 5, 0.5, 3),
        (0.7, 0, 1, 0.7, 1),
        (0.69, 0, 1, 0.7, 0),
        (0.35, 1, 5, 0.7, 2),
        (0.5, 0, 1, 0.5, 1),
        (0.49, 0, 1, 0.5, 0),
        (1.5, 1, 5, 0.5, 5),
    ],
)
def test_to_scale_puts_the_threshold_on_the_middle(value, lo, hi, pivot, expected):
    assert to_scale(value, lo, hi, pivot) == expected


def test_deterministic_and_thread_safe(llm):
    inputs = {
        "question": Q_JA,
        "contexts": CTX_JA,
        "answer": A_JA,
        "ground_truth": GT_JA,
        "criteria": criteria(1, 5),
    }
    first = ask(llm, T.JUDGE, inputs)[0].text
    with ThreadPoolExecutor(max_workers=4) as pool:
        texts = list(pool.map(lambda _: ask(llm, T.JUDGE, inputs)[0].text, range(8)))
    assert texts == [first] * 8


def test_unknown_task_and_bad_inputs_are_provider_errors(llm):
    with pytest.raises(ProviderError) as err:
        ask(llm, "translate", {})
    assert err.value.kind == "bad_request" and not err.value.retryable
    with pytest.raises(ProviderError):
        ask(
            llm,
            T.JUDGE,
            {
                "question": "q",
                "contexts": [],
                "answer": "a",
                "criteria": [{"name": "no id"}],
            },
        )


def test_lexical_only_mode_needs_no_embedder():
    llm = OfflineLLM(use_embeddings=False)
    _, data = ask(llm, T.VERIFY_CLAIMS, INPUTS[T.VERIFY_CLAIMS])
    assert [v["verdict"] for v in data["verdicts"]] == [1, 0]
    _, judged = ask(
        llm,
        T.JUDGE,
        {
            "question": Q_EN,
            "contexts": CTX_EN,
            "answer": A_EN,
            "criteria": criteria(1, 5, ["answer_relevancy"]),
        },
        "en",
    )
    # answer relevancy falls back to the question's asks alone (no cosine term)
    assert UNSCORED_KEY not in judged and 1 <= judged["answer_relevancy_score"] <= 5
    assert "no embedder" in judged["answer_relevancy_reason"]


def test_embedder_rows_are_normalised_batched_and_cached(embedder):
    texts = [
        "過学習とは何ですか。",
        "What is overfitting?",
        "",
        "過学習とは何ですか。",
    ] + [f"文 {i}" for i in range(70)]
    v = embedder.embed(texts)
    assert v.shape == (74, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(v[0], v[3])
    assert embedder.embed([]).shape == (0, 512)
    para = embedder.embed(
        [
            "有給休暇は入社から半年後に10日付与されます。",
            "入社して6か月が経つと、年次有給休暇が10日与えられます。",
            "富士山は日本で最も高い山です。",
        ]
    )
    assert float(para[0] @ para[1]) > float(para[0] @ para[2])
