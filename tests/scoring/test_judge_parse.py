"""The judge output parser and repeat aggregation: pure functions, every malformed case."""

import pytest

from rageval_core.scoring.metrics.judge import aggregate_scores, parse_judge_output
from rageval_core.scoring.rubric import load_rubric
from rageval_core.core.types import Unscored

RUBRIC5 = load_rubric("rubric5", "ja")
CRITERIA = RUBRIC5.criteria


def _flat(**scores):
    return "{" + ", ".join(f'"{k}_score": {v}, "{k}_reason": "r-{k}"' for k, v in scores.items()) + "}"


ALL_FOUR = dict(faithfulness=1, answer_relevancy=5, context_precision=4, answer_correctness=1)


def test_flat_seed_shape():
    result = parse_judge_output(_flat(**ALL_FOUR), CRITERIA)
    assert {k: v.score for k, v in result.verdicts.items()} == ALL_FOUR
    assert result.verdicts["faithfulness"].reason == "r-faithfulness"
    assert result.parsed["answer_relevancy_score"] == 5 and result.error is None


def test_nested_shape_and_flat_wins_when_both_present():
    text = '{"faithfulness": {"score": 2, "reason": "nested"}, "faithfulness_score": 3, "faithfulness_reason": "flat"}'
    v = parse_judge_output(text, CRITERIA[:1]).verdicts["faithfulness"]
    assert (v.score, v.reason) == (3, "flat")
    v = parse_judge_output('{"faithfulness": {"score": 2, "reason": "nested"}}', CRITERIA[:1]).verdicts["faithfulness"]
    assert (v.score, v.reason) == (2, "nested")


@pytest.mark.parametrize(
    "text",
    [
        "```json\n" + _flat(**ALL_FOUR) + "\n```",
        "```\n" + _flat(**ALL_FOUR) + "\n```",
        "以下が評価です。\n" + _flat(**ALL_FOUR) + "\nよろしくお願いします。",
        "Here you go: " + _flat(**ALL_FOUR),
    ],
)
def test_fences_and_surrounding_text_are_tolerated(text):
    assert {k: v.score for k, v in parse_judge_output(text, CRITERIA).verdicts.items()} == ALL_FOUR


@pytest.mark.parametrize("value", ["4", '"4"', "4.0", '" 4 "'])
def test_integral_scores_written_differently_are_read_as_written(value):
    assert parse_judge_output('{"faithfulness_score": %s}' % value, CRITERIA[:1]).verdicts["faithfulness"].score == 4


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("4.5", "not an integer"),
        ('"4/5"', "not an integer"),
        ('"high"', "not an integer"),
        ("null", "not an integer"),
        ("true", "not an integer"),
        ("[4]", "not an integer"),
        ("0", "outside 1..5"),
        ("6", "outside 1..5"),
        ("-1", "outside 1..5"),
    ],
)
def test_bad_scores_unscore_that_criterion_only(value, fragment):
    text = '{"faithfulness_score": %s, "faithfulness_reason": "kept", "answer_relevancy_score": 3}' % value
    verdicts = parse_judge_output(text, CRITERIA[:2]).verdicts
    bad = verdicts["faithfulness"]
    assert bad.score is None and bad.unscored_reason == Unscored.PARSE_ERROR and fragment in bad.error
    assert bad.reason == "kept"  # the judge's words are still shown
    assert verdicts["answer_relevancy"].score == 3


def test_missing_criterion_and_nested_without_score():
    text = '{"faithfulness": {"reason": "no score"}, "answer_relevancy_score": 4}'
    verdicts = parse_judge_output(text, CRITERIA).verdicts
    assert verdicts["answer_relevancy"].score == 4
    for cid in ("faithfulness", "context_precision", "answer_correctness"):
        assert verdicts[cid].unscored_reason == Unscored.PARSE_ERROR
        assert "missing" in verdicts[cid].error


@pytest.mark.parametrize("text", [None, "", "   ", "no json at all", "[1, 2, 3]", '{"faithfulness_score": '])
def test_unreadable_response_unscores_everything_and_keeps_raw(text):
    result = parse_judge_output(text, CRITERIA)
    assert result.parsed is None and result.raw == (text or "") and result.error
    assert {v.unscored_reason for v in result.verdicts.values()} == {Unscored.PARSE_ERROR}


def test_offline_unsupported_ids():
    text = '{"faithfulness_score": 5, "faithfulness_reason": "ok", "_unsupported": ["answer_relevancy", "unknown_x"], "answer_relevancy_reason": "heuristic cannot"}'
    verdicts = parse_judge_output(text, CRITERIA[:3]).verdicts
    assert verdicts["faithfulness"].score == 5
    assert verdicts["answer_relevancy"].unscored_reason == Unscored.OFFLINE_UNSUPPORTED
    assert verdicts["answer_relevancy"].reason == "heuristic cannot"
    assert verdicts["context_precision"].unscored_reason == Unscored.PARSE_ERROR  # absent and not declared unsupported


def test_binary_scale_bounds():
    binary = load_rubric("binary", "en").criteria
    verdicts = parse_judge_output('{"faithfulness_score": 1, "answer_correctness_score": 2}', binary).verdicts
    assert verdicts["faithfulness"].score == 1
    assert verdicts["answer_correctness"].unscored_reason == Unscored.PARSE_ERROR


@pytest.mark.parametrize(
    "scores, how, expected",
    [
        ([3, 4, 5], "mean", 4.0),
        ([1, 2], "mean", 1.5),
        ([5, 2, 4], "median", 4.0),
        ([5, 1], "median", 3.0),
        ([2, 5, 2], "majority", 2.0),
        ([3], "majority", 3.0),
        ([4, 4, 4, 5, 1], "majority", 4.0),
        # The case: 5 / 2 / 4 has no majority (it used to return 2, the lowest of a three-way tie).
        ([5, 2, 4], "majority", None),
        ([5, 1], "majority", None),
        ([4, 4, 5, 5, 3], "majority", None),  # 4 holds 2 of 5: a plurality, not a majority
        ([5, 2, 4], "majority_or_median", 4.0),
        ([4, 4, 5, 5], "majority_or_median", 4.5),
        ([2, 5, 2], "majority_or_median", 2.0),
        ([0.1 + 0.2, 0.3, 1.0], "majority", 0.3),  # float noise does not split a vote
    ],
)
def test_aggregate_scores(scores, how, expected):
    got = aggregate_scores(scores, how)
    assert got == (None if expected is None else pytest.approx(expected))


def test_aggregate_rejects_nothing_and_unknown():
    with pytest.raises(ValueError):
        aggregate_scores([], "mean")
    with pytest.raises(ValueError):
        aggregate_scores([1], "mode")  # type: ignore[arg-type]


def test_declared_unscored_reasons_are_taken_only_when_known_and_without_a_score():
    text = (
        '{"faithfulness_reason": "bare yes", "_unscored": {"faithfulness": "uncheckable", "answer_relevancy": "made_up",'
        ' "context_precision": "uncheckable"}, "context_precision_score": 4}'
    )
    verdicts = parse_judge_output(text, CRITERIA[:3]).verdicts
    assert verdicts["faithfulness"].unscored_reason == Unscored.UNCHECKABLE
    assert verdicts["faithfulness"].reason == "bare yes"
    assert verdicts["answer_relevancy"].unscored_reason == Unscored.PARSE_ERROR  # unknown reason → not taken
    assert verdicts["context_precision"].score == 4  # a score given wins
