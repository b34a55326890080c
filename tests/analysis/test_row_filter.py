"""The row filters Compare and Inspect share, on a hand-made results frame."""

from __future__ import annotations

from rageval_core.analysis.compare import results_frame
from rageval_core.analysis.row_filter import RowFilter, disagreement_by_row, filter_rows, labelled_rows
from rageval_core.core.types import MetricResult

J = "judge:rubric5"


def R(sid, metric, method, value, why=None):
    return MetricResult(sid, metric, method, value, unscored_reason=why)


CATS = {"1": "good", "2": "good", "3": "bad", "4": None}
FRAME = results_frame([
    R("1", "faithfulness", "decomposed", 1.0), R("1", "faithfulness", J, 1.0),
    R("2", "faithfulness", "decomposed", 0.5), R("2", "faithfulness", J, 0.75),
    R("3", "faithfulness", "decomposed", 0.0), R("3", "faithfulness", J, 1.0),
    R("3", "answer_relevancy", "decomposed", 0.9), R("3", "answer_relevancy", J, 0.5),
    R("4", "faithfulness", "decomposed", None, "no_claims"), R("4", "faithfulness", J, 0.25),
], CATS)


def test_no_filter_keeps_every_row_in_order():
    assert filter_rows(FRAME, RowFilter()) == ["1", "2", "3", "4"]
    assert filter_rows(FRAME, RowFilter(), order=["4", "3", "2", "1"]) == ["4", "3", "2", "1"]


def test_category_including_rows_without_one():
    assert filter_rows(FRAME, RowFilter(categories=("good",))) == ["1", "2"]
    assert filter_rows(FRAME, RowFilter(categories=("(none)", "bad"))) == ["3", "4"]


def test_score_range_looks_at_the_chosen_methods_only():
    assert filter_rows(FRAME, RowFilter(score_range=(0.0, 0.3))) == ["3", "4"]  # 3: decomposed 0.0; 4: judge 0.25
    assert filter_rows(FRAME, RowFilter(score_range=(0.0, 0.3), methods=("decomposed",))) == ["3"]
    assert filter_rows(FRAME, RowFilter(score_range=(0.7, 0.8))) == ["2"]


def test_disagreement_is_the_largest_gap_over_shared_criteria():
    gaps = disagreement_by_row(FRAME, J)
    assert gaps == {"1": 0.0, "2": 0.25, "3": 1.0}  # row 4: decomposed unscored, no shared score
    assert filter_rows(FRAME, RowFilter(min_disagreement=0.2), judge=J) == ["2", "3"]
    assert filter_rows(FRAME, RowFilter(min_disagreement=0.5), judge=J) == ["3"]
    assert filter_rows(FRAME, RowFilter(min_disagreement=0.5)) == []  # no judge to disagree with


def test_unscored_and_labels():
    assert filter_rows(FRAME, RowFilter(unscored_only=True)) == ["4"]
    assert filter_rows(FRAME, RowFilter(unscored_only=True, methods=(J,))) == []
    labelled = labelled_rows({"2": {"faithfulness": 1.0}, "3": {"faithfulness": None}})
    assert labelled == {"2"}  # a note without 👍 / 👎 is no label
    assert filter_rows(FRAME, RowFilter(labels="labelled"), labelled=labelled) == ["2"]
    assert filter_rows(FRAME, RowFilter(labels="unlabelled"), labelled=labelled) == ["1", "3", "4"]


def test_filters_combine():
    flt = RowFilter(categories=("bad", "good"), min_disagreement=0.1, score_range=(0.5, 1.0))
    assert filter_rows(FRAME, flt, judge=J) == ["2", "3"]
    assert flt.active() and not RowFilter().active()
