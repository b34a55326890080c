"""Answer relevancy through a scripted LLM and the hash embedder."""

import pytest

from rageval_core.llm.base import ProviderError
from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.answer_relevancy import AnswerRelevancy
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.core.types import Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

JA = Sample("ja", "過学習とは何ですか？", ("過学習は汎化性能が下がる現象です。",), "過学習は訓練データに適合しすぎる現象です。")
EN = Sample("en", "What is overfitting?", ("Overfitting hurts generalisation.",), "Overfitting is fitting the training data too closely.")


def q(text, flag=0):
    return {"question": text, "noncommittal": flag}


def run(sample, llm, scorer=None, embedder=None, **options):
    embedder = embedder or HashEmbedder()
    [r] = (scorer or AnswerRelevancy()).score(sample, EvalContext(llm, embedder, options=options))
    return r


def test_one_call_mean_cosine_with_questions_kept():
    qs = ["過学習とは何ですか？", "過学習はどんな現象ですか？", "訓練データに適合しすぎることを何と呼ぶ？"]
    llm = ScriptedLLM().script("generate_questions", {"questions": [q(x) for x in qs]})
    emb = HashEmbedder()
    r = run(JA, llm, embedder=emb)
    [request] = llm.requests
    assert request.inputs == {"answer": JA.answer, "contexts": list(JA.contexts), "n": 3} and request.language == "ja"
    assert "日本語で 3 件" in request.prompt_text  # Japanese questions are asked for in Japanese
    vectors = HashEmbedder().embed([JA.question] + qs)
    expected = [scoring.cosine(vectors[0], v) for v in vectors[1:]]
    assert [x["cosine"] for x in r.details["questions"]] == pytest.approx(expected, abs=1e-4)
    assert r.details["questions"][0]["cosine"] == pytest.approx(1.0, abs=1e-4)
    assert r.value == pytest.approx(sum(expected) / 3, abs=1e-3)
    assert emb.calls == 1 and r.details["embedding_calls"] == 1 and r.calls == 1
    assert "平均コサイン類似度" in r.reason


def test_per_question_mode_sends_n_requests_with_distinct_seeds():
    llm = ScriptedLLM().script("generate_questions", *[{"questions": [q(f"What is overfitting {i}?")]} for i in range(3)])
    r = run(EN, llm, AnswerRelevancy(calls="per_question"))
    assert [x.seed for x in llm.requests] == [0, 1, 2] and all(x.inputs["n"] == 1 for x in llm.requests)
    assert len({x.key() for x in llm.requests}) == 3 and r.calls == 3 and len(r.details["questions"]) == 3


def test_n_option_from_run_context():
    llm = ScriptedLLM().script("generate_questions", {"questions": [q("What is overfitting?")] * 5})
    r = run(EN, llm, answer_relevancy_n=5)
    assert llm.requests[0].inputs["n"] == 5 and r.details["n"] == 5


def test_zero_only_when_all_noncommittal():
    some = ScriptedLLM().script("generate_questions", {"questions": [q("What is overfitting?", 1), q("What is overfitting?")]})
    assert run(EN, some).value == pytest.approx(1.0, abs=1e-4)
    every = ScriptedLLM().script("generate_questions", {"questions": [q("What is overfitting?", 1)] * 3})
    r = run(EN, every)
    assert r.value == 0.0 and "noncommittal" in r.reason


def test_fewer_questions_than_asked_are_noted():
    llm = ScriptedLLM().script("generate_questions", {"questions": [q("What is overfitting?")]})
    r = run(EN, llm)
    assert r.value == pytest.approx(1.0, abs=1e-4) and "got 1" in r.details["count_note"]


@pytest.mark.parametrize("answer", ["not json at all", '{"questions": [{"q": "x"}]}', '{"questions": []}'])
def test_unusable_output_is_parse_error_with_raw(answer):
    r = run(EN, ScriptedLLM().script("generate_questions", answer))
    assert r.unscored_reason == "parse_error" and r.details["raw_response"] == answer


def test_empty_answer_and_missing_question():
    assert run(Sample("e", "q?", (), ""), ScriptedLLM()).unscored_reason == "empty_answer"
    assert run(Sample("e", " ", (), "a"), ScriptedLLM()).unscored_reason == "missing_field"


def test_embedder_error_is_unscored():
    class Broken(HashEmbedder):
        def embed(self, texts):
            raise ProviderError("embedding quota", kind="rate_limit", status=429)

    llm = ScriptedLLM().script("generate_questions", {"questions": [q("What?")] * 3})
    r = run(EN, llm, embedder=Broken())
    assert r.unscored_reason == "provider_error" and "embedding quota" in r.reason and r.calls == 1


def test_bad_options_are_rejected():
    with pytest.raises(ValueError):
        AnswerRelevancy(n=0)
    with pytest.raises(ValueError):
        AnswerRelevancy(calls="three")
