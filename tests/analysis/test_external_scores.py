"""Their score vs ours (``analysis.external_scores``) against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from rageval_core.analysis.compare import results_frame
from rageval_core.analysis.external_scores import NO_METRIC, NOT_IN_RUN, our_metric, theirs_vs_ours, unmatched_reason
from rageval_core.core.stats import mean_difference, pass_agreement
from rageval_core.core.types import MetricResult, Sample

THEIRS = {"r1": 0.2, "r2": 0.4, "r3": 0.9, "r4": 1.0, "r5": None}  # r5: ragas left it unscored (NaN in its CSV)
OURS = {"r1": 0.3, "r2": 0.6, "r3": 0.8, "r4": None, "r5": 0.5}  # r4: unscored by us


def _sample(sid: str) -> Sample:
    return Sample(sid, "q", ("c",), "a", external_scores={
        "ragas:faithfulness": THEIRS[sid], "ragas:context_recall": 0.5, "ragas:factual_correctness(mode=f1)": 0.7})


def _frame():  # type: ignore[no-untyped-def]
    results = [MetricResult(sid, "faithfulness", "decomposed", v, None if v is not None else "no_claims")
               for sid, v in OURS.items()]
    results += [MetricResult(sid, "faithfulness", "judge:binary", 1.0) for sid in OURS]
    return results_frame(results, {sid: ("a" if sid < "r3" else "b") for sid in OURS})


def test_mean_difference_and_pass_agreement_by_hand() -> None:
    assert mean_difference([0.2, 0.4, 0.9], [0.3, 0.6, 0.8]) == pytest.approx((0.1 + 0.2 - 0.1) / 3)
    assert pass_agreement([0.2, 0.4, 0.9], [0.3, 0.6, 0.8], 0.5) == pytest.approx(2 / 3)  # 0.4 vs 0.6 split
    assert pass_agreement([0.5], [0.49], 0.5) == 0.0  # 0.5 passes (>=), 0.49 fails
    assert mean_difference([], []) is None and pass_agreement([], [], 0.5) is None
    with pytest.raises(ValueError):
        mean_difference([1.0], [])


def test_agreement_of_their_faithfulness_with_ours_by_hand() -> None:
    view = theirs_vs_ours(_frame(), {sid: _sample(sid) for sid in OURS})
    line = view.agreement[(view.agreement["column"] == "faithfulness") & (view.agreement["method"] == "decomposed")].iloc[0]
    # scored by both: r1, r2, r3 -> theirs (0.2, 0.4, 0.9), ours (0.3, 0.6, 0.8)
    assert (line["source"], line["metric"], line["n"]) == ("ragas", "faithfulness", 3)
    assert line["spearman"] == pytest.approx(1.0)  # the same order on both sides
    # Pearson: deviations (-0.3, -0.1, 0.4) and (-4/15, 1/30, 7/30): 0.17 / sqrt(0.26 * 0.38/3)
    assert line["pearson"] == pytest.approx(0.17 / math.sqrt(0.26 * 0.38 / 3))
    assert line["mad"] == pytest.approx(0.4 / 3) and line["mean_diff"] == pytest.approx(0.2 / 3)  # ours − theirs
    # at 0.5: theirs (0, 0, 1), ours (0, 1, 1): po 2/3, pe 1/3·2/3 + 2/3·1/3 = 4/9, kappa (2/9) / (5/9) = 0.4
    assert line["agree"] == pytest.approx(2 / 3) and line["kappa"] == pytest.approx(0.4)
    assert (line["unscored_theirs"], line["unscored_ours"]) == (1, 1)
    judge = view.agreement[view.agreement["method"] == "judge:binary"].iloc[0]
    assert judge["n"] == 4 and math.isnan(judge["pearson"]) and "constant" in judge["note"]


def test_rows_disagreeing_most_come_first_and_unscored_last() -> None:
    view = theirs_vs_ours(_frame(), {sid: _sample(sid) for sid in OURS})
    faith = next(c for c in view.matched if c.column == "faithfulness")
    rows = view.rows(faith, "decomposed")
    assert list(rows["sample_id"]) == ["r2", "r1", "r3", "r4", "r5"]  # |diff| 0.2, 0.1, 0.1 (ties in row order), then unscored
    assert rows.iloc[0][["theirs", "ours", "diff"]].tolist() == pytest.approx([0.4, 0.6, 0.2])
    assert list(rows["category"]) == ["a", "a", "b", "b", "b"]
    assert (faith.rows, faith.scored) == (5, 4)


def test_columns_are_matched_by_name_and_the_rest_say_why_not() -> None:
    view = theirs_vs_ours(_frame(), {sid: _sample(sid) for sid in OURS})
    assert [(c.column, c.metric) for c in view.matched] == [("faithfulness", "faithfulness")]
    reasons = {c.column: unmatched_reason(c) for c in view.unmatched}
    assert reasons == {"context_recall": (NOT_IN_RUN, "context_recall"), "factual_correctness(mode=f1)": (NO_METRIC, None)}
    paired = theirs_vs_ours(_frame(), {sid: _sample(sid) for sid in OURS},
                            pairs={"ragas:factual_correctness(mode=f1)": "faithfulness", "ragas:faithfulness": ""})
    assert [c.column for c in paired.matched] == ["factual_correctness(mode=f1)"]
    assert unmatched_reason(next(c for c in paired.unmatched if c.column == "faithfulness"))[0] == NO_METRIC


@pytest.mark.parametrize(("source", "column", "metric"), [
    ("ragas", "faithfulness", "faithfulness"), ("ragas", "llm_context_precision_with_reference", "context_precision"),
    ("ragas", "response_relevancy", "answer_relevancy"), ("deepeval", "Contextual Precision", "context_precision"),
    ("deepeval", "contextual_relevancy", "context_relevance"), ("phoenix", "hallucination", None),
    ("ragas", "non_llm_context_recall", None), ("ragas", "factual_correctness(mode=f1)", None),
])
def test_metric_names_of_other_tools(source: str, column: str, metric: str | None) -> None:
    assert our_metric(source, column) == metric


def test_a_frame_without_external_scores_has_no_columns() -> None:
    view = theirs_vs_ours(_frame(), {sid: Sample(sid, "q", ("c",), "a") for sid in OURS})
    assert view.columns == [] and view.agreement.empty


def test_a_metric_only_one_method_computed_is_compared_with_that_method_only() -> None:
    frame = results_frame([*(MetricResult(sid, "context_recall", "decomposed", 0.5) for sid in OURS),
                           *(MetricResult(sid, "faithfulness", "judge:binary", 1.0) for sid in OURS)])
    view = theirs_vs_ours(frame, {sid: _sample(sid) for sid in OURS})
    recall = next(c for c in view.matched if c.column == "context_recall")
    assert view.methods_for(recall) == ["decomposed"]  # the wide table has a judge:binary column too, all NaN
    assert view.rows(recall, "judge:binary").empty
    assert list(zip(view.agreement["column"], view.agreement["method"])) == [
        ("faithfulness", "judge:binary"), ("context_recall", "decomposed")]
