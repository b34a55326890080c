"""Prompt versions side by side (rageval_core.analysis.version_grid; issue 38 item 6): each version's score and reason
per row and criterion, the rows where they differ first, and the versions' agreement."""

from __future__ import annotations

import math

import pytest

from rageval_core.analysis.version_grid import (
    grid,
    reason_column,
    score_column,
    version_agreement,
    version_summary,
    versions_frame,
)
from rageval_core.core.types import MetricResult


def r(row: str, value: float | None, reason: str = "", metric: str = "faithfulness") -> MetricResult:
    return MetricResult(row, metric, "judge:binary", value, None if value is not None else "parse_error", reason)


RESULTS = {
    "v1": [r("a", 1.0, "fine"), r("b", 1.0, "fine"), r("c", 1.0, "fine"), r("d", 0.0, "wrong year"),
           r("a", 1.0, "ok", "answer_correctness")],
    "v2 strict": [r("a", 1.0, "fine"), r("b", 0.0, "a claim unsupported"), r("c", None, "no JSON"),
                  r("d", 0.0, "wrong year"), r("a", 0.5, "partly", "answer_correctness")],
}
CATEGORIES = {"a": "correct", "b": "hallucination", "c": "correct", "d": "hallucination"}


def test_rows_where_the_versions_differ_come_first_with_both_scores_and_reasons() -> None:
    frame = versions_frame(RESULTS, CATEGORIES)
    assert set(frame["method"]) == {"v1", "v2 strict"}
    table = grid(frame, ["v1", "v2 strict"])
    keys = list(zip(table["sample_id"], table["criterion"]))
    # differs: b (1 vs 0, widest), a/correctness (1 vs 0.5), c (one unscored); then the same rows in dataset order
    assert keys == [("b", "faithfulness"), ("a", "answer_correctness"), ("c", "faithfulness"), ("a", "faithfulness"),
                    ("d", "faithfulness")]
    assert list(table["differs"]) == [True, True, True, False, False]
    assert table.loc[0, "spread"] == 1.0 and table.loc[1, "spread"] == 0.5 and table.loc[2, "spread"] == 0.0
    b = table.iloc[0]
    assert (b[score_column("v1")], b[score_column("v2 strict")]) == (1.0, 0.0)
    assert (b[reason_column("v1")], b[reason_column("v2 strict")]) == ("fine", "a claim unsupported")
    c = table.iloc[2]
    assert math.isnan(c[score_column("v2 strict")]) and c[reason_column("v2 strict")] == "[parse_error] no JSON"
    assert b["category"] == "hallucination"
    only = grid(frame, ["v1", "v2 strict"], criteria=["answer_correctness"])
    assert list(only["sample_id"]) == ["a"]


def test_a_pass_fail_split_at_the_threshold_differs_even_when_scores_are_close() -> None:
    frame = versions_frame({"x": [r("a", 0.49)], "y": [r("a", 0.5)], "z": [r("a", 0.5)]})
    assert bool(grid(frame, ["x", "y", "z"]).loc[0, "differs"])
    assert not bool(grid(frame, ["y", "z"]).loc[0, "differs"])
    assert grid(frame, ["y", "nobody"]).shape[0] == 1  # a version with no result is a blank column, not a crash


def test_summary_and_agreement_between_versions() -> None:
    frame = versions_frame(RESULTS, CATEGORIES)
    summary = version_summary(frame, ["v1", "v2 strict"]).set_index(["version", "criterion"])
    faith = summary.loc[("v2 strict", "faithfulness")]
    assert (faith["scored"], faith["unscored"], faith["rows that differ"]) == (3, 1, 2)
    assert faith["mean"] == pytest.approx(1 / 3) and faith["pass share"] == pytest.approx(1 / 3)
    pairs = version_agreement(frame, ["v1", "v2 strict"], iterations=200)
    row = pairs[pairs["criterion"] == "faithfulness"].iloc[0]
    assert (row["judge_a"], row["judge_b"], row["n"]) == ("v1", "v2 strict", 3)  # rows both scored
    assert -1.0 <= row["kappa"] <= 1.0


def test_no_results_is_an_empty_grid() -> None:
    frame = versions_frame({})
    assert grid(frame, ["v1", "v2"]).empty
    assert version_summary(frame, ["v1"]).empty
