"""The pytest helpers' pure parts: thresholds over results (mean / each row), failure messages naming the row,
score and reason, and how the session's judge is chosen."""

from __future__ import annotations

import pytest

from rageval_core.core.types import MetricResult
from rageval_core.testing.assertions import ScoreThresholdError, assert_thresholds, check
from rageval_core.testing.judge import choose, samples_of, unavailable


def r(row: str, value: float | None, metric: str = "faithfulness", method: str = "decomposed", reason: str | None = None,
      unscored: str | None = None) -> MetricResult:
    return MetricResult(row, metric, method, value, unscored, reason)


RESULTS = [r("a", 0.9, reason="all claims supported"), r("b", 0.5, reason="1 of 2 claims supported"), r("c", 0.7),
           r("a", 0.8, method="judge:rubric5")]


def test_mean_mode_passes_on_the_mean_and_lists_the_low_rows_when_it_misses() -> None:
    assert check(RESULTS, {"faithfulness": 0.7}) == []  # mean (0.9 + 0.5 + 0.7) / 3 = 0.7
    [failure] = check(RESULTS, {"faithfulness": 0.75})
    assert failure.mean == pytest.approx(0.7) and [x.row_id for x in failure.rows] == ["b", "c"]
    assert failure.message().splitlines() == [
        "faithfulness >= 0.75 (mean): mean 0.700 over 3 scored row(s)",
        "  row b: faithfulness 0.500 — 1 of 2 claims supported",
        "  row c: faithfulness 0.700",
    ]


def test_each_mode_names_every_row_under_the_bar_and_the_unscored() -> None:
    results = [*RESULTS, r("d", None, reason="the answer is blank", unscored="empty_answer")]
    with pytest.raises(ScoreThresholdError) as exc:
        assert_thresholds(results, ["faithfulness=0.6", "judge:rubric5:faithfulness=0.9"], mode="each")
    text = str(exc.value)
    assert "faithfulness >= 0.6 (each): mean 0.700 over 3 scored row(s)" in text
    assert "  row b: faithfulness 0.500 — 1 of 2 claims supported" in text
    assert "  row d: unscored (empty_answer) — the answer is blank" in text
    assert "judge:rubric5:faithfulness >= 0.9 (each): mean 0.800 over 1 scored row(s)\n  row a: judge:rubric5:faithfulness 0.800" in text
    assert isinstance(exc.value, AssertionError)


def test_no_scored_row_is_a_miss_and_bad_input_is_an_error() -> None:
    [failure] = check([r("a", None, unscored="no_claims")], {"faithfulness": 0.1})
    assert failure.mean is None and failure.message().startswith("faithfulness >= 0.1 (mean): no scored row")
    with pytest.raises(ValueError, match="mode must be one of"):
        check(RESULTS, {"faithfulness": 0.5}, mode="median")
    with pytest.raises(ValueError, match="rows that cannot be scored:\n  rows.json row 1, question"):
        samples_of([{"id": "x", "contexts": ["c"], "answer": "a"}])


def test_the_judge_is_chosen_explicitly_never_guessed() -> None:
    assert choose(environ={}).provider is None
    assert "no judge chosen: pass --rageval-provider offline" in unavailable(choose(environ={}), environ={})
    assert choose("offline", environ={}).how == "--rageval-provider"
    assert choose(environ={"RAGEVAL_PROVIDER": "offline"}).provider == "offline"
    assert choose(environ={"OPENAI_API_KEY": "sk-test"}).provider == "openai"
    assert unavailable(choose("offline", environ={}), environ={}) is None
    reason = unavailable(choose("gemini", environ={}), environ={})
    assert reason.startswith("judge gemini/default model (--rageval-provider) cannot run:") and "GEMINI_API_KEY" in reason
