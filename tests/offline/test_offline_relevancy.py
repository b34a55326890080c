"""The offline answer-relevancy heuristic piece by piece: asks, answer types, topic-word weights,
noncommittal sentences, and the value on RAGAS's scale (lexical only, or with the hash embedder)."""

import pytest

from rageval_core.offline import answer_types as T
from rageval_core.offline import relevancy as R
from tests.support.scripted_llm import HashEmbedder


def test_split_asks_on_compound_questions_only():
    assert R.split_asks("Where is Mount Brown located and what is its elevation?", "en") == [
        "Where is Mount Brown located",
        "what is its elevation",
    ]
    # "and" between nouns is not a new ask
    assert len(R.split_asks("What is the difference between precision and recall?", "en")) == 1
    assert R.split_asks("有給休暇は何日ですか？繰り越せますか？", "ja") == ["有給休暇は何日ですか", "繰り越せますか"]
    # a condition clause is context, not an ask of its own
    assert len(R.split_asks("1件2万円の備品を立て替えた場合、誰の承認が必要ですか？", "ja")) == 1


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("バックプロパゲーションはいつ誰が発明しましたか？", [T.WHEN, T.WHO]),
        ("How many parameters does GPT-4 have?", [T.NUMBER]),
        ("Why does batch normalisation stabilise training?", [T.WHY]),
        ("Can I carry over unused leave?", [T.YES_NO]),
        ("使わなかった有給休暇は繰り越せますか？", [T.YES_NO]),
        ("過学習とは何ですか？", []),
        # "when" / "who" inside a clause are conjunctions or relatives, not question words
        ("Why am I unstable on my bike when it's stationary?", [T.WHY]),
        ("Why do people who sleep late dream more?", [T.WHY]),
        ("Explain the Q-learning algorithm.", []),
    ],
)
def test_question_kinds(question, kinds):
    assert T.question_kinds(question) == kinds


def test_answer_types():
    q = "When was the tower completed?"
    assert T.has_answer_type(T.WHEN, "It was completed in 1896.", q, "en")
    assert not T.has_answer_type(T.WHEN, "It is a beautiful landmark.", q, "en")
    assert T.has_answer_type(T.NUMBER, "It is 6,958 feet high.", "What is its elevation?", "en")
    assert not T.has_answer_type(T.NUMBER, "It is very high.", "What is its elevation?", "en")
    # a number already in the question does not answer it
    assert not T.has_answer_type(T.NUMBER, "GPT-4 is large.", "How many parameters does GPT-4 have?", "en")
    assert T.has_answer_type(T.WHO, "Christopher Nolan directed it.", "Who directed Oppenheimer?", "en")
    assert T.has_answer_type(T.WHO, "部門長と経理部の承認が必要です。", "誰の承認が必要ですか？", "ja")
    assert T.has_answer_type(T.YES_NO, "翌年度に限って繰り越すことができます。", "繰り越せますか？", "ja")
    assert T.has_answer_type(T.YES_NO, "You cannot carry it over.", "Can I carry over leave?", "en")
    assert not T.has_answer_type(T.YES_NO, "最近は生成AIの活用が進んでいます。", "入力してもよいですか？", "ja")


def test_scope_words_weigh_less_and_glosses_are_alternatives():
    units = {u.word: u for u in R.ask_units("In machine learning, what is overfitting?", "en")}
    assert units["overfitting"].weight == 1.0 and units["machine"].weight == R.SCOPE_WEIGHT
    units = {u.word: u for u in R.ask_units("ベクトルデータベースのANNS（近似最近傍探索）について説明してください", "ja")}
    assert units["anns"].weight == 1.0 and units["ベクトル"].weight == R.SCOPE_WEIGHT
    assert "探索" in units["anns"].keys and "探索" not in units  # the gloss is an alternative, not a requirement
    # 「XのY」 where Y asks (役割): X stays the focus, and the asking word is dropped
    units = {u.word: u for u in R.ask_units("アテンション機構の役割を説明してください", "ja")}
    assert units["アテンション"].weight == 1.0 and "役割" not in units and "説明" not in units


def test_trailing_scope_is_a_short_phrase_not_a_clause():
    short = {u.word: u.weight for u in R.ask_units("Explain the Q-learning algorithm in reinforcement learning", "en")}
    assert short["algorithm"] == 1.0 and short["reinforcement"] == R.SCOPE_WEIGHT
    clause = {u.word: u.weight for u in R.ask_units("Why am I unstable on my bike when it's stationary", "en")}
    assert clause["bike"] == 1.0 and clause["stationary"] == 1.0


def test_missing_scope_costs_nothing_missing_focus_costs_much():
    q = "In machine learning, what is overfitting?"
    on_focus = R.score_ask(q, "Overfitting is fitting the training data too closely.", q, "en")
    off_focus = R.score_ask(q, "Machine learning learns from data.", q, "en")
    assert on_focus.coverage == pytest.approx(1.0)  # the scope "machine learning" need not be repeated
    assert off_focus.coverage == pytest.approx(R.SCOPE_WEIGHT)  # scope words alone make up little
    assert off_focus.missing == ["overfitting"]


def test_typed_ask_without_its_type_loses_half():
    q = "Where is Mount Brown located and what is its elevation?"
    full = R.answer_relevancy(q, "Mount Brown is located in Montana. Its elevation is 6,958 feet.")
    part = R.answer_relevancy(q, "Mount Brown is located in New Zealand. It is a popular hiking destination.")
    assert full.value == pytest.approx(1.0) and [a.score for a in full.asks] == [1.0, 1.0]
    assert part.asks[1].types_found == {T.NUMBER: False} and part.value == pytest.approx(0.5)


def test_definitional_answer_scores_high_off_topic_low():
    q = "機械学習における過学習（オーバーフィッティング）とは何ですか？"
    good = R.answer_relevancy(q, "過学習とは、モデルが訓練データに過度に適合し、未知データへの汎化性能が低下する現象です。")
    off = R.answer_relevancy(q, "経費は社内システムから申請します。")
    assert good.value >= 0.8 and off.value <= 0.2 and good.semantic is None  # lexical only: no embedder


def test_noncommittal_sentences_scale_the_value_down():
    q = "When is the launch scheduled?"
    assert R.answer_relevancy(q, "I don't know.").value == 0.0
    assert R.noncommittal_answer("分かりません。") and not R.noncommittal_answer("分かりやすい説明です。")
    mixed = R.answer_relevancy(q, "The launch date has not been provided.The mission is important for India.")
    assert len(mixed.noncommittal_sentences) == 1  # glued sentences ("provided.The") are split
    assert 0.0 < mixed.noncommittal_share < 1.0 and mixed.value < 0.5


def test_embedder_adds_the_best_sentence_cosine_and_the_reason_says_so():
    emb = HashEmbedder()
    q = "What is dropout?"
    rel = R.answer_relevancy(q, "Dropout disables random neurons during training. It was popular in 2014.", emb)
    assert rel.cosine is not None and 0.0 <= rel.semantic <= 1.0
    assert rel.value == pytest.approx(R.COVERAGE_WEIGHT * rel.ask_score + (1 - R.COVERAGE_WEIGHT) * rel.semantic)
    assert rel.best_sentence == "Dropout disables random neurons during training."
    en, ja = R.relevancy_reason(rel)
    assert "no questions can be generated" in en and "cosine" in en and "逆生成" in ja
    data = rel.to_dict()
    assert data["asks"][0]["text"] == "What is dropout" and isinstance(data["value"], float)
