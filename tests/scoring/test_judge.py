"""The one-call rubric judge through a scripted LLM: prompts, request keys, results, options, raw templates."""

from pathlib import Path

import pytest

from rageval_core.llm.base import ProviderError
from rageval_core.scoring.metrics.base import EvalContext, Scorer
from rageval_core.scoring.metrics.judge import (
    JudgeScorer,
    TemplateMismatchError,
    check_template,
    judge_output_schema,
    literal_score_ranges,
    template_from_text,
    template_notes,
    judge_template,
    render_judge_prompt,
)
from rageval_core.scoring.rubric import Criterion, load_rubric
from rageval_core.core.tasks import JUDGE
from rageval_core.core.types import (
    ANSWER_CORRECTNESS,
    FAITHFULNESS,
    SEED_METRICS,
    Sample,
    Unscored,
)
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

SAMPLE_FILE = Path(__file__).resolve().parents[2] / "sample_data" / "ml_qa_ja.json"

# Two seed-000 rows, used when sample_data/ml_qa_ja.json is not there yet.
_INLINE_ROWS = [
    {
        "id": 1,
        "category": "correct",
        "question": "機械学習における過学習（オーバーフィッティング）とは何ですか？",
        "contexts": [
            "過学習（オーバーフィッティング）とは、モデルが訓練データに過度に適合してしまい、未知のデータに対して汎化性能が低下する現象です。",
            "過学習を防ぐ手法としては、正則化（L1・L2正則化）、ドロップアウト、早期終了（Early Stopping）、データ拡張などがあります。",
        ],
        "answer": "過学習（オーバーフィッティング）とは、モデルが訓練データに過度に適合し、未知データへの汎化性能が低下する現象です。",
        "ground_truth": "過学習とは、モデルが訓練データに過度に適合し、未知のデータに対して性能が低下する現象。",
    },
    {
        "id": 4,
        "category": "hallucination",
        "question": "バックプロパゲーションアルゴリズムはいつ誰が発明しましたか？",
        "contexts": [
            "バックプロパゲーション（誤差逆伝播法）は、ニューラルネットワークの重みを更新するためのアルゴリズムです。損失関数の勾配を出力層から入力層に向かって伝播させることで各層の重みを更新します。",
            "連鎖律（Chain Rule）を利用して効率的に勾配計算を行うことができます。",
        ],
        "answer": "バックプロパゲーションは1970年にアラン・チューリングによって発明されました。当初は暗号解読の研究の一環として開発されたアルゴリズムです。",
        "ground_truth": "バックプロパゲーションは1986年にRumelhartらが広く普及させた（Werbosが1974年に提案）。アラン・チューリングとは無関係。",
    },
]


def _sample(row) -> Sample:
    return Sample(
        id=str(row["id"]),
        question=row["question"],
        contexts=tuple(row["contexts"]),
        answer=row["answer"],
        ground_truth=row.get("ground_truth"),
        metadata={"category": row.get("category")},
    )


def seed_samples() -> list[Sample]:
    """The seed-000 rows as the workbench loads them (``datasets.load_dataset``), inline rows without the file."""
    if not SAMPLE_FILE.is_file():
        return [_sample(r) for r in _INLINE_ROWS]
    from rageval_core.data.datasets import load_dataset

    return list(load_dataset(SAMPLE_FILE).samples)


@pytest.fixture
def row4() -> Sample:
    return next(s for s in seed_samples() if s.id == "4")


def scores_for(request, score=3):
    """A well-formed answer for whatever criteria the request asks for (flat seed-000 shape)."""
    out = {}
    for c in request.inputs["criteria"]:
        out[f"{c['id']}_score"] = min(max(score, c["min"]), c["max"])
        out[f"{c['id']}_reason"] = f"{c['name']} の理由"
    return out


def ctx_for(llm) -> EvalContext:
    return EvalContext(llm=llm, embedder=HashEmbedder())


POLITE = Criterion(
    id="polite",
    name="丁寧さ（Politeness）",
    description="回答が丁寧な言葉遣いで書かれているか。",
    min=1,
    max=3,
    levels={3: "終始丁寧な言葉遣い", 2: "おおむね丁寧", 1: "ぞんざい・失礼な表現がある"},
)


# ------------------------------------------------------------------------------------ the default rubric


def test_judge_scorer_implements_the_scorer_protocol():
    scorer = JudgeScorer(load_rubric("rubric5", "ja"))
    assert isinstance(scorer, Scorer)
    assert scorer.name == scorer.method == "judge:rubric5"
    assert scorer.metrics == SEED_METRICS


def test_default_rubric_gives_four_scores_and_reasons_per_row():
    samples = seed_samples()
    if SAMPLE_FILE.is_file():
        assert len(samples) == 12 and [s.id for s in samples] == [str(i) for i in range(1, 13)]
    llm = ScriptedLLM(default=lambda r: scores_for(r, 4))
    scorer = JudgeScorer("rubric5")
    for sample in samples:
        results = scorer.score(sample, ctx_for(llm))
        assert [r.metric for r in results] == list(SEED_METRICS)
        for r in results:
            assert r.method == "judge:rubric5" and r.sample_id == sample.id
            assert r.raw_score == 4 and r.value == pytest.approx(0.75)
            assert r.reason and r.reason.endswith("の理由")
            assert r.details["parsed"][f"{r.metric}_score"] == 4
            assert r.details["raw_text"].startswith("{")
            assert r.provider == "scripted"
    assert len(llm.requests) == len(samples)  # one call per row for all four criteria
    request = llm.requests[0]
    assert request.task == JUDGE and request.language == "ja" and request.n == 1
    assert request.schema == judge_output_schema(load_rubric("rubric5", "ja"))
    assert [c["id"] for c in request.inputs["criteria"]] == list(SEED_METRICS)
    assert request.inputs["criteria"][0] == {"id": "faithfulness", "name": "Faithfulness（忠実性）", "min": 1, "max": 5}
    assert set(request.inputs) == {"question", "contexts", "answer", "ground_truth", "criteria"}


def test_call_cost_is_counted_once_per_call(row4):
    llm = ScriptedLLM(default=scores_for)
    results = JudgeScorer("rubric5").score(row4, ctx_for(llm))
    assert sum(r.calls for r in results) == 1
    assert sum(r.usage.input_tokens for r in results) == results[0].usage.input_tokens > 0
    assert all(r.details["calls"][0]["prompt"] for r in results)  # every criterion can show its prompt
    assert results[1].details["calls_counted_on"] == FAITHFULNESS


def test_rendered_prompt_follows_the_seed_structure(row4):
    prompt = render_judge_prompt(load_rubric("rubric5", "ja"), row4)
    assert prompt.startswith("あなたはRAGシステムの回答品質を評価する専門家です。\n以下の4つの観点で1〜5点の整数で評価し")
    order = ["## 1. Faithfulness", "## 4. Answer Correctness", '"faithfulness_score"', "【質問】", "【参照コンテキスト】", "【模範解答】", "【生成された回答】"]
    positions = [prompt.index(marker) for marker in order]
    assert positions == sorted(positions)  # stable parts first, the answer last
    assert "<answer>\nバックプロパゲーションは1970年にアラン・チューリング" in prompt
    assert '<context index="2">\n連鎖律' in prompt
    en = render_judge_prompt(load_rubric("rubric5", "en"), row4)
    assert en.startswith("You are an expert") and "[Generated answer]" in en


def test_english_rows_use_the_english_preset():
    sample = Sample("1-en", "What is overfitting?", ("Overfitting is when a model fits its training data too closely.",),
                    "Overfitting means the model memorises training data.", "A model fits training data too closely.")
    llm = ScriptedLLM(default=scores_for)
    JudgeScorer("rubric5").score(sample, ctx_for(llm))
    assert llm.requests[0].language == "en"
    assert "You are an expert who evaluates" in llm.requests[0].prompt_text


# ------------------------------------------------------------------------------------ edits change the prompt


def test_changed_level_description_changes_prompt_and_request_key(row4):
    rubric = load_rubric("rubric5", "ja")
    edited = rubric.with_level(FAITHFULNESS, 2, "裏付けのある主張は一部だけ")
    llm = ScriptedLLM(default=scores_for)
    first = JudgeScorer(rubric).score(row4, ctx_for(llm))
    again = JudgeScorer(load_rubric("rubric5", "ja")).score(row4, ctx_for(llm))
    changed = JudgeScorer(edited).score(row4, ctx_for(llm))
    keys = [r.key() for r in llm.requests]
    assert keys[0] == keys[1] != keys[2]  # same rubric → same key (cache hit is right); edit → new key
    assert "- 2: 裏付けのある主張は一部だけ" in llm.requests[2].prompt_text
    assert "- 2: 裏付けのある主張は一部だけ" not in llm.requests[0].prompt_text
    assert first[0].details["request_keys"] == [keys[0]] and changed[0].details["request_keys"] == [keys[2]]
    assert first[0].details["rubric_hash"] == again[0].details["rubric_hash"] != changed[0].details["rubric_hash"]


def test_custom_criterion_appears_in_prompt_schema_and_results(row4):
    rubric = load_rubric("rubric5", "ja").with_criterion(POLITE)
    llm = ScriptedLLM(default=lambda r: scores_for(r, 3))
    scorer = JudgeScorer(rubric)
    results = scorer.score(row4, ctx_for(llm))
    prompt = llm.requests[0].prompt_text
    assert "## 5. 丁寧さ（Politeness）: 1〜3点" in prompt and "- 1: ぞんざい・失礼な表現がある" in prompt
    assert '"polite_score": <1-3の整数>' in prompt
    assert "以下の5つの観点を、見出しに示した点数範囲の整数で評価" in prompt
    schema = llm.requests[0].schema
    assert schema["properties"]["polite_score"] == {"type": "integer", "minimum": 1, "maximum": 3}
    assert schema["properties"]["faithfulness_score"]["maximum"] == 5
    assert scorer.metrics[-1] == "polite" and [r.metric for r in results][-1] == "polite"
    polite = results[-1]
    assert polite.raw_score == 3 and polite.value == 1.0 and polite.reason == "丁寧さ（Politeness） の理由"
    assert results[0].value == 0.5  # faithfulness 3 on 1..5


# ------------------------------------------------------------------------------------ malformed output through the scorer


@pytest.mark.parametrize(
    "text, expected",
    [
        ('```json\n{"faithfulness_score": 1, "faithfulness_reason": "根拠なし", "answer_correctness_score": 0, "answer_correctness_reason": "誤り"}\n```',
         {FAITHFULNESS: 1, ANSWER_CORRECTNESS: 0}),
        ('評価結果です。\n{"faithfulness": {"score": 1, "reason": "OK"}, "answer_correctness": {"score": 1, "reason": "OK"}}\n以上です。',
         {FAITHFULNESS: 1, ANSWER_CORRECTNESS: 1}),
        ('{"faithfulness_score": 1, "faithfulness_reason": "OK"}', {FAITHFULNESS: 1, ANSWER_CORRECTNESS: Unscored.PARSE_ERROR}),
        ('{"faithfulness_score": 2, "faithfulness_reason": "範囲外", "answer_correctness_score": 1, "answer_correctness_reason": "OK"}',
         {FAITHFULNESS: Unscored.PARSE_ERROR, ANSWER_CORRECTNESS: 1}),
        ('{"faithfulness_score": 0.5, "faithfulness_reason": "半分", "answer_correctness_score": "1", "answer_correctness_reason": "OK"}',
         {FAITHFULNESS: Unscored.PARSE_ERROR, ANSWER_CORRECTNESS: 1}),
        ("faithfulness: 1, correctness: 0", {FAITHFULNESS: Unscored.PARSE_ERROR, ANSWER_CORRECTNESS: Unscored.PARSE_ERROR}),
    ],
    ids=["code-fence", "nested-with-prose", "missing-criterion", "out-of-range", "non-integer", "no-json"],
)
def test_malformed_output_unscores_only_the_broken_criterion(row4, text, expected):
    llm = ScriptedLLM().script(JUDGE, text)
    results = {r.metric: r for r in JudgeScorer(load_rubric("binary", "ja")).score(row4, ctx_for(llm))}
    for metric, want in expected.items():
        r = results[metric]
        if isinstance(want, int):
            assert r.raw_score == want and r.value == float(want)
        else:
            assert r.value is None and r.unscored_reason == want and r.raw_score is None
            assert r.details["raw_text"] == text  # raw text kept for the inspector
            assert r.reason and r.details["error"]


def test_out_of_range_is_not_clamped(row4):
    llm = ScriptedLLM().script(JUDGE, {**scores_for_ids(SEED_METRICS, 3), "faithfulness_score": 6})
    results = JudgeScorer("rubric5").score(row4, ctx_for(llm))
    assert results[0].value is None and "outside 1..5" in results[0].reason
    assert [r.raw_score for r in results[1:]] == [3, 3, 3]


def scores_for_ids(ids, score):
    return {k: v for cid in ids for k, v in ((f"{cid}_score", score), (f"{cid}_reason", "理由"))}


@pytest.mark.parametrize("kind, reason", [("rate_limit", Unscored.PROVIDER_ERROR), ("timeout", Unscored.TIMEOUT), ("replay_miss", Unscored.REPLAY_MISS)])
def test_provider_error_unscores_every_criterion(row4, kind, reason):
    llm = ScriptedLLM().script(JUDGE, ProviderError("boom", kind=kind))
    results = JudgeScorer("rubric5").score(row4, ctx_for(llm))
    assert [r.unscored_reason for r in results] == [reason] * 4
    assert all(kind in r.reason for r in results)
    assert results[0].details["calls"][0]["error"] == "boom" and results[0].calls == 0


def test_offline_unsupported_marker(row4):
    rubric = load_rubric("rubric5", "ja").with_criterion(POLITE)
    answer = {**scores_for_ids(SEED_METRICS, 5), "_unsupported": ["polite"]}
    llm = ScriptedLLM().script(JUDGE, answer)
    results = JudgeScorer(rubric).score(row4, ctx_for(llm))
    assert [r.value for r in results[:4]] == [1.0] * 4
    assert results[4].value is None and results[4].unscored_reason == Unscored.OFFLINE_UNSUPPORTED


# ------------------------------------------------------------------------------------ rows missing inputs


def test_blank_answer_is_unscored_without_a_call(row4):
    blank = Sample("b", row4.question, row4.contexts, "  ", row4.ground_truth)
    llm = ScriptedLLM()
    scorer = JudgeScorer("rubric5")
    results = scorer.score(blank, ctx_for(llm))
    assert [r.unscored_reason for r in results] == [Unscored.EMPTY_ANSWER] * 4 and not llm.requests
    assert scorer.estimate(blank).llm_calls == 0


def test_missing_ground_truth_drops_only_the_criteria_that_need_it(row4):
    no_reference = Sample("n", row4.question, row4.contexts, row4.answer, None)
    llm = ScriptedLLM(default=scores_for)
    results = JudgeScorer("rubric5").score(no_reference, ctx_for(llm))
    assert [r.unscored_reason for r in results] == [None, None, None, Unscored.MISSING_FIELD]
    request = llm.requests[0]
    assert [c["id"] for c in request.inputs["criteria"]] == list(SEED_METRICS[:3])
    assert "answer_correctness_score" not in request.prompt_text and "（模範解答なし）" in request.prompt_text
    assert "以下の3つの観点" in request.prompt_text


# ------------------------------------------------------------------------------------ options


def test_per_criterion_mode_makes_one_call_per_criterion(row4):
    llm = ScriptedLLM(default=lambda r: scores_for(r, 2))
    scorer = JudgeScorer("rubric5", per_criterion=True)
    assert scorer.estimate(row4).llm_calls == 4
    results = scorer.score(row4, ctx_for(llm))
    assert len(llm.requests) == 4
    assert [[c["id"] for c in r.inputs["criteria"]] for r in llm.requests] == [[m] for m in SEED_METRICS]
    assert "以下の観点を1〜5点の整数で評価し、理由を述べてください。" in llm.requests[1].prompt_text
    assert "## 1. Answer Relevancy" in llm.requests[1].prompt_text
    assert [r.raw_score for r in results] == [2] * 4 and [r.calls for r in results] == [1] * 4


def _with_scores(score_by_repeat):
    answers = [scores_for_ids(SEED_METRICS, s) if isinstance(s, int) else s for s in score_by_repeat]
    return ScriptedLLM().script(JUDGE, *answers)


def test_repeats_aggregate_by_mean(row4):
    llm = _with_scores([3, 4, 5])
    scorer = JudgeScorer("rubric5", repeats=3)
    assert scorer.estimate(row4).llm_calls == 3
    results = scorer.score(row4, ctx_for(llm))
    assert results[0].raw_score == 4.0 and results[0].value == 0.75
    assert [rep["score"] for rep in results[0].details["repeats"]] == [3, 4, 5]
    assert [r.seed for r in llm.requests] == [None, 1, 2]
    single = JudgeScorer("rubric5").build_request(load_rubric("rubric5", "ja"), row4)
    assert results[0].details["request_keys"][0] == single.key()  # the first repeat reuses a single run's cache
    assert len(set(results[0].details["request_keys"])) == 3  # repeats are distinct requests, not cache hits


def test_repeats_aggregate_by_majority_or_unscored_no_majority(row4):
    results = JudgeScorer("rubric5", repeats=3, aggregate="majority").score(row4, ctx_for(_with_scores([2, 5, 2])))
    assert results[0].raw_score == 2 and results[0].value == 0.25
    split = JudgeScorer("rubric5", repeats=3, aggregate="majority").score(row4, ctx_for(_with_scores([5, 2, 4])))
    assert split[0].value is None and split[0].unscored_reason == Unscored.NO_MAJORITY
    assert "5, 2, 4" in split[0].reason
    assert [rep["score"] for rep in split[0].details["repeats"]] == [5, 2, 4]  # every repeat kept for the drill-down
    median = JudgeScorer("rubric5", repeats=3, aggregate="majority_or_median").score(row4, ctx_for(_with_scores([5, 2, 4])))
    assert median[0].raw_score == 4 and median[0].value == 0.75
    tie = JudgeScorer("rubric5", repeats=2, aggregate="median").score(row4, ctx_for(_with_scores([5, 2])))
    assert tie[0].raw_score == 3.5 and tie[0].value == 0.625


def test_repeats_skip_unparseable_repeats_and_keep_them(row4):
    ctx = ctx_for(_with_scores([4, "not json", 2]))
    ctx.options["reask"] = 0  # repeats alone: an unusable repeat is kept, not re-asked
    results = JudgeScorer("rubric5", repeats=3).score(row4, ctx)
    assert results[0].raw_score == 3.0 and results[0].details["scored_repeats"] == 2
    assert results[0].details["repeats"][1]["unscored_reason"] == Unscored.PARSE_ERROR
    assert results[0].details["repeats"][1]["raw_text"] == "not json"


def test_invalid_options():
    with pytest.raises(ValueError):
        JudgeScorer("rubric5", repeats=0)
    with pytest.raises(ValueError):
        JudgeScorer("rubric5", aggregate="mode")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ raw-template mode

# The seed-000 prompt exactly as the article writes it (``{context}``, literal JSON block with ``{{ }}``).
SEED_PROMPT = """\
あなたはRAGシステムの回答品質を評価する専門家です。
以下の4つの観点で1〜5点の整数で評価し、それぞれ理由を述べてください。

【質問】
{question}

【参照コンテキスト】
{context}

【生成された回答】
{answer}

【模範解答】
{ground_truth}

## 1. Faithfulness（忠実性）: 1〜5点
回答に含まれる各主張が、コンテキストの情報だけで裏付けられるか。
- 5: 全ての主張がコンテキストで完全に裏付けられる
- 1: 主張の大半がコンテキストと無関係、または明らかな事実誤認を含む

以下のJSON形式のみで回答してください（説明文・コードブロック記号は不要）:

{{
"faithfulness_score": <1-5の整数>,
"faithfulness_reason": "<理由（日本語・1〜2文）>",
"answer_relevancy_score": <1-5の整数>,
"answer_relevancy_reason": "<理由（日本語・1〜2文）>",
"context_precision_score": <1-5の整数>,
"context_precision_reason": "<理由（日本語・1〜2文）>",
"answer_correctness_score": <1-5の整数>,
"answer_correctness_reason": "<理由（日本語・1〜2文）>"
}}
"""


def test_seed_prompt_pasted_verbatim_works_as_a_raw_template(row4):
    rubric = load_rubric("rubric5", "ja")
    assert check_template(SEED_PROMPT, rubric) == []
    llm = ScriptedLLM(default=scores_for)
    results = JudgeScorer(rubric, template=SEED_PROMPT).score(row4, ctx_for(llm))
    prompt = llm.requests[0].prompt_text
    assert "<context>\nバックプロパゲーション（誤差逆伝播法）" in prompt and "連鎖律" in prompt
    assert '{\n"faithfulness_score": <1-5の整数>' in prompt
    assert results[0].details["template"] == "ja/judge-custom" and all(r.scored for r in results)


def test_template_rubric_mismatch_is_reported_before_any_call():
    llm = ScriptedLLM()
    binary = load_rubric("binary", "ja")
    problems = check_template(SEED_PROMPT, binary)
    assert any("answer_relevancy" in p and "no criterion" in p for p in problems)
    with pytest.raises(TemplateMismatchError) as info:
        JudgeScorer(binary, template=SEED_PROMPT)
    assert info.value.problems == problems
    custom = load_rubric("rubric5", "ja").with_criterion(POLITE)
    assert check_template(SEED_PROMPT, custom) == [
        "the template never asks for polite_score: add {output_format} or write those keys into the JSON block"
    ]
    assert not llm.requests


@pytest.mark.parametrize(
    "template, fragment",
    [
        ("{rubric}\n{output_format}\n{question}\n{contexts}\n{ground_truth}\n{answr}", "unknown placeholder {answr}"),
        ("{rubric}\n{output_format}\n{question}\n{contexts}\n{ground_truth}", "never shows the answer"),
        ("{rubric}\n{output_format}\n{question}\n{answer}\n{ground_truth}", "needs contexts"),
        ("{rubric}\n{output_format}\n{question}\n{contexts}\n{answer}", "needs ground_truth"),
        ("{rubric}\n{question}\n{contexts}\n{ground_truth}\n{answer}", "never asks for faithfulness_score"),
        ('{rubric}\n{output_format}\n{{"faithfulness": {{"reason": "..."}}}}\n{question}\n{contexts}\n{ground_truth}\n{answer}',
         "asks for faithfulness_reason but not faithfulness_score"),
        ("{rubric}\n{output_format\n{answer}", "literal braces"),
    ],
)
def test_check_template_problems(template, fragment):
    problems = check_template(template, load_rubric("rubric5", "ja"))
    assert any(fragment in p for p in problems), problems
    with pytest.raises(TemplateMismatchError):
        JudgeScorer("rubric5", template=template)


def test_nested_output_keys_in_an_edited_template_are_accepted(row4):
    template = (
        "{instructions}\n{rubric}\n"
        '{{"faithfulness": {{"score": 0, "reason": "..."}}, "answer_correctness": {{"score": 0, "reason": "..."}}}}\n'
        "{question}\n{contexts}\n{ground_truth}\n{answer}"
    )
    rubric = load_rubric("binary-strict", "ja")
    assert check_template(template, rubric) == []
    llm = ScriptedLLM().script(JUDGE, {"faithfulness": {"score": 0, "reason": "x"}, "answer_correctness": {"score": 0, "reason": "y"}})
    results = JudgeScorer(rubric, template=template).score(row4, ctx_for(llm))
    assert [r.raw_score for r in results] == [0, 0] and results[0].method == "judge:binary-strict"


def test_judges_page_shows_the_current_row4_prompt(row4):
    page = (Path(__file__).resolve().parents[2] / "docs" / "judges.md").read_text(encoding="utf-8")
    section = page.split("<!-- section:judges -->", 1)[1].split("<!-- /section:judges -->", 1)[0]
    shown = section.split("```text\n", 1)[1].split("\n```", 1)[0]
    assert shown == render_judge_prompt(load_rubric("rubric5", "ja"), row4)


def test_per_criterion_mode_rejects_a_template_with_a_fixed_json_block():
    rubric = load_rubric("rubric5", "ja")
    assert any("per-criterion" in p for p in check_template(SEED_PROMPT, rubric, per_criterion=True))
    with pytest.raises(TemplateMismatchError, match="per-criterion"):
        JudgeScorer(rubric, template=SEED_PROMPT, per_criterion=True)
    JudgeScorer(rubric, template=judge_template("ja").source, per_criterion=True)


def test_edited_rubric_is_never_served_from_the_response_cache(tmp_path, row4):
    from rageval_core.llm.transport.cache import CachedLLM, ResponseCache

    inner = ScriptedLLM().script(JUDGE, scores_for_ids(SEED_METRICS, 5), scores_for_ids(SEED_METRICS, 2))
    llm = CachedLLM(inner, ResponseCache(tmp_path / "cache.sqlite"))
    rubric = load_rubric("rubric5", "ja")
    first = JudgeScorer(rubric).score(row4, ctx_for(llm))
    repeated = JudgeScorer(rubric).score(row4, ctx_for(llm))
    edited = JudgeScorer(rubric.with_level(FAITHFULNESS, 1, "裏付けのない主張が一つでもある")).score(row4, ctx_for(llm))
    assert len(inner.requests) == 2  # the repeat was a cache hit, the edit was not
    assert repeated[0].cached_calls == 1 and repeated[0].raw_score == first[0].raw_score == 5
    assert edited[0].cached_calls == 0 and edited[0].raw_score == 2


def test_a_literal_score_range_that_differs_from_the_rubric_is_reported_before_any_call():
    # The seed prompt trimmed to the two binary criteria still asks for <1-5の整数>: every 0/1 answer
    # would be fine, but a 2..5 answer would be a parse_error, so the mismatch is reported up front.
    trimmed = SEED_PROMPT.replace(
        '"answer_relevancy_score": <1-5の整数>,\n"answer_relevancy_reason": "<理由（日本語・1〜2文）>",\n', ""
    ).replace('"context_precision_score": <1-5の整数>,\n"context_precision_reason": "<理由（日本語・1〜2文）>",\n', "")
    assert literal_score_ranges(template_from_text(trimmed, "ja")) == {FAITHFULNESS: (1, 5), ANSWER_CORRECTNESS: (1, 5)}
    binary = load_rubric("binary", "ja")
    problems = check_template(trimmed, binary)
    assert problems == [
        f"the template asks for {cid}_score on 1-5 but the rubric scores {cid} on 0..1:"
        " every answer outside 0..1 would be a parse_error"
        for cid in (FAITHFULNESS, ANSWER_CORRECTNESS)
    ]
    with pytest.raises(TemplateMismatchError):
        JudgeScorer(binary, template=trimmed)
    nested = '{answer}{contexts}{ground_truth}{{"faithfulness": {{"score": <integer 0 to 1>, "reason": "..."}}}}'
    assert literal_score_ranges(template_from_text(nested, "en")) == {FAITHFULNESS: (0, 1)}
    assert check_template(nested, load_rubric("rubric5", "en").subset([FAITHFULNESS]))[0].startswith(
        "the template asks for faithfulness_score on 0-1 but the rubric scores faithfulness on 1..5"
    )
    assert literal_score_ranges(judge_template("ja")) == {}  # the shipped template renders its block


def test_template_notes_say_which_rubric_edits_a_raw_template_does_not_send(row4):
    rubric = load_rubric("rubric5", "ja")
    assert template_notes(judge_template("ja"), rubric) == []
    notes = template_notes(SEED_PROMPT, rubric)
    assert any("no {rubric}" in n and "level descriptions" in n for n in notes)
    assert any("no {instructions}" in n for n in notes)
    scorer = JudgeScorer(rubric, template=SEED_PROMPT)
    assert scorer.notes == notes and scorer.describe()["template_notes"] == notes
    assert "template_notes" not in JudgeScorer(rubric).describe()
    assert SEED_PROMPT.strip() in scorer.describe()["template_text"]  # the raw template is recorded with a run
    # Indeed: with such a template an edited level does not change the request (nothing stale, nothing sent).
    edited = rubric.with_level(FAITHFULNESS, 2, "裏付けのある主張は一部だけ")
    same = [JudgeScorer(r, template=SEED_PROMPT).build_request(r, row4).key() for r in (rubric, edited)]
    assert same[0] == same[1]


def test_judge_and_decomposed_metrics_agree_on_a_rows_language():
    """A Japanese question over English documents is judged in Japanese by both methods."""
    from rageval_core.scoring.metrics import judge, steps
    from rageval_core.core.types import Sample

    row = Sample("x", "ドロップアウト率はいくつですか？", ("Dropout rates are usually set between 0.2 and 0.5.",) * 2, "通常0.2〜0.5です。")
    assert judge.sample_language is steps.sample_language
    assert steps.sample_language(row) == "ja"
