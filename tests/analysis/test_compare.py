"""Comparison analytics on hand-made results with hand-computed expectations."""

import math

import pandas as pd
import pytest

from rageval_core.analysis.compare import (
    agreement,
    agreement_note,
    category_comparison,
    category_table,
    cost_by_method,
    cost_by_scorer,
    cost_table,
    disagreements,
    one_sided,
    pair_methods,
    pearson,
    results_frame,
    run_delta,
    heuristic_only,
    side_by_side,
    summarize,
    summary_delta,
    version_changes,
)
from rageval_core.store.runs import CallEntry
from rageval_core.core.types import MetricResult, Usage

J = "judge:rubric5"


def R(sid, metric, method, value, why=None, reason=None):
    return MetricResult(sid, metric, method, value, unscored_reason=why, reason=reason)


CATS = {"1": "✅ 正確な回答", "2": "✅ 正確な回答", "3": "❌ ハルシネーション", "4": "❌ ハルシネーション"}
RESULTS = [
    R("1", "faithfulness", "decomposed", 1.0), R("1", "faithfulness", J, 1.0),
    R("2", "faithfulness", "decomposed", 0.5), R("2", "faithfulness", J, 0.75),
    R("3", "faithfulness", "decomposed", 0.0), R("3", "faithfulness", J, 0.0, reason="年号が誤り"),
    R("4", "faithfulness", "decomposed", None, "no_claims"), R("4", "faithfulness", J, 0.25),
    R("1", "answer_relevancy", "decomposed", 0.8), R("1", "answer_relevancy", J, 1.0),
    R("3", "answer_relevancy", "decomposed", 0.9, reason="looks relevant"), R("3", "answer_relevancy", J, 0.0, reason="wrong"),
    R("1", "context_recall", "decomposed", 1.0),
]


@pytest.fixture()
def frame():
    return results_frame(RESULTS, CATS)


def test_summary_means_over_scored_rows_with_unscored_counts():
    s = summarize(RESULTS)
    assert s["decomposed"]["faithfulness"] == {"mean": 0.5, "scored": 3, "unscored": 1, "unscored_reasons": {"no_claims": 1},
                                             "reasked": 0, "recovered": 0}
    assert s[J]["faithfulness"]["mean"] == 0.5 and s[J]["faithfulness"]["unscored"] == 0
    assert summarize([R("1", "faithfulness", "decomposed", None, "provider_error")])["decomposed"]["faithfulness"]["mean"] is None


def test_side_by_side_pairs_shared_criteria(frame):
    table = side_by_side(frame)
    assert list(table["sample_id"]) == ["1", "2", "3", "4"]
    assert [c for c in table.columns if c.startswith("faithfulness")] == ["faithfulness|decomposed", f"faithfulness|{J}", "faithfulness|diff"]
    assert "context_recall|decomposed" not in table.columns  # not shared with the judge
    assert table.loc[1, "faithfulness|diff"] == pytest.approx(0.25)
    assert math.isnan(table.loc[3, "faithfulness|decomposed"]) and math.isnan(table.loc[3, "faithfulness|diff"])
    assert table.loc[2, "category"] == "❌ ハルシネーション"


def test_category_table_in_seed_layout(frame):
    t = category_table(frame, "decomposed")
    assert list(t.index) == ["✅ 正確な回答", "❌ ハルシネーション"]
    assert list(t.columns) == ["faithfulness", "answer_relevancy", "context_recall"]
    assert t.loc["✅ 正確な回答", "faithfulness"] == pytest.approx(0.75)
    assert t.loc["❌ ハルシネーション", "faithfulness"] == 0.0  # row 4 unscored: mean over scored rows only
    assert math.isnan(t.loc["❌ ハルシネーション", "context_recall"])
    c = category_comparison(frame, "faithfulness")
    assert list(c.columns) == ["decomposed", J]
    assert c.loc["❌ ハルシネーション", J] == pytest.approx(0.125)


def test_edge_cases_are_nan_with_a_note_never_a_number():
    assert agreement_note([], []) == "no row scored by both methods: every statistic undefined"
    assert "n < 2" in agreement_note([0.5], [0.7])
    note = agreement_note([1.0, 1.0, 1.0], [0.2, 0.9, 1.0], names=("decomposed", J))
    assert note.startswith("decomposed constant (1.000 on every row)") and J not in note
    assert "kappa undefined" in agreement_note([0.9, 1.0], [0.8, 0.6])
    assert agreement_note([0.1, 0.9], [0.2, 0.8]) is None
    # in the agreement table: a criterion where both sides are constant shows NaN and says why
    frame = results_frame([R(str(i), "faithfulness", m, 1.0) for i in range(3) for m in ("decomposed", J)])
    row = agreement(frame).iloc[0]
    assert row["n"] == 3 and row["mad"] == 0.0
    assert math.isnan(row["pearson"]) and math.isnan(row["spearman"]) and math.isnan(row["kappa"])
    assert "Pearson and Spearman undefined" in row["note"] and "kappa undefined" in row["note"]


def test_agreement_and_disagreements(frame):
    a = agreement(frame, threshold=0.5).set_index("criterion")
    assert list(a.index) == ["faithfulness", "answer_relevancy"]
    f = a.loc["faithfulness"]
    assert f["n"] == 3 and f["unscored_a"] == 1 and f["unscored_b"] == 0
    assert f["mad"] == pytest.approx(0.25 / 3)
    assert f["pearson"] == pytest.approx(pearson([1, 0.5, 0], [1, 0.75, 0]))
    assert f["kappa"] == pytest.approx(1.0)
    d = disagreements(frame, top=2)
    assert list(d["sample_id"]) == ["3", "2"] and d.loc[0, "criterion"] == "answer_relevancy"
    assert d.loc[0, "abs_diff"] == pytest.approx(0.9) and d.loc[0, "reason_b"] == "wrong"


def test_run_delta_with_changed_only_filter(frame):
    b_results = [r for r in RESULTS if not (r.sample_id == "2" and r.method == J)] + [R("2", "faithfulness", J, 0.5)]
    b_results = [R("4", "faithfulness", "decomposed", 0.5) if (r.sample_id == "4" and r.method == "decomposed") else r for r in b_results]
    b_results.append(R("5", "faithfulness", "decomposed", 1.0))
    delta = run_delta(frame, results_frame(b_results, CATS))
    assert len(delta) == len(RESULTS) + 1
    changed = run_delta(frame, results_frame(b_results, CATS), changed_only=True)
    assert {(r.sample_id, r.method) for r in changed.itertuples()} == {("2", J), ("4", "decomposed"), ("5", "decomposed")}
    row = changed.set_index(["sample_id", "method"]).loc[("2", J)]
    assert row["delta"] == pytest.approx(-0.25)
    s = summary_delta(frame, results_frame(b_results, CATS)).set_index(["metric", "method"])
    assert s.loc[("faithfulness", J), "changed_rows"] == 1
    assert s.loc[("faithfulness", "decomposed"), "unscored_a"] == 1 and s.loc[("faithfulness", "decomposed"), "unscored_b"] == 0


def test_disagreements_break_ties_by_criterion_then_dataset_order():
    """Hand-computed gaps: faithfulness rows b 0.5, a 0.5, c 0.25; answer relevancy a 0.5 (dataset order b, a, c;
    faithfulness comes before answer relevancy): equal gaps list faithfulness first, then rows in dataset order."""
    rows = [("b", "faithfulness", 1.0, 0.5), ("a", "faithfulness", 0.0, 0.5), ("c", "faithfulness", 0.5, 0.75),
            ("a", "answer_relevancy", 1.0, 0.5), ("b", "answer_relevancy", 0.5, None)]
    results = [r for sid, metric, d, j in rows
               for r in (R(sid, metric, "decomposed", d), R(sid, metric, J, j, None if j is not None else "error"))]
    d = disagreements(results_frame(results, {"b": "x", "a": "y", "c": "x"}), top=3)
    assert d[["sample_id", "criterion", "abs_diff"]].values.tolist() == [
        ["b", "faithfulness", 0.5], ["a", "faithfulness", 0.5], ["a", "answer_relevancy", 0.5]]
    assert list(d["category"]) == ["x", "y", "y"] and d["value_b"].tolist() == [0.5, 0.5, 0.5]
    assert disagreements(results_frame(results, {}), top=10)["sample_id"].tolist() == ["b", "a", "a", "c"]


def test_disagreements_and_run_delta_on_frames_without_reasons_give_the_same_rows(frame):
    """The pages' frames have no ``reason`` column: the same disagreements and deltas, less the reasons."""
    bare = frame.drop(columns=["reason"])
    d, bare_d = disagreements(frame, top=3), disagreements(bare, top=3)
    assert "reason_a" not in bare_d.columns
    pd.testing.assert_frame_equal(bare_d, d.drop(columns=["reason_a", "reason_b"]))
    b = results_frame([R("2", "faithfulness", J, 0.5), *RESULTS[1:]], CATS)
    delta, bare_delta = run_delta(frame, b), run_delta(bare, b.drop(columns=["reason"]))
    assert "reason_a" not in bare_delta.columns and bare_delta["changed"].sum() == delta["changed"].sum() > 0
    pd.testing.assert_frame_equal(bare_delta, delta.drop(columns=["reason_a", "reason_b"]))
    assert "reason_a" not in run_delta(frame, b.drop(columns=["reason"])).columns  # reasons on one side only: none


def test_cost_per_method_from_the_call_log():
    calls = [
        CallEntry("r", "1", "faithfulness", None, "extract_claims", "k", usage=Usage(100, 10), cost_usd=0.01, latency_s=0.2),
        CallEntry("r", "1", "faithfulness", None, "verify_claims", "k2", usage=Usage(50, 5), cost_usd=0.005, latency_s=0.3),
        CallEntry("r", "1", J, J, "judge", "k3", usage=Usage(300, 40), cost_usd=0.02, latency_s=0.5),
        CallEntry("r", "2", J, J, "judge", "k4", cached=True, usage=Usage(300, 40), latency_s=0.0),
        CallEntry("r", "3", J, J, "judge", "k5", error="timeout"),
    ]
    by = cost_by_method(calls)
    assert (by["decomposed"].calls, by["decomposed"].input_tokens, by["decomposed"].cost_usd) == (2, 150, pytest.approx(0.015))
    assert (by[J].calls, by[J].cached_calls, by[J].errors, by[J].output_tokens) == (1, 1, 1, 40)
    t = cost_table(calls).set_index("method")
    assert t.loc["decomposed", "mean_latency_s"] == pytest.approx(0.25)


def test_two_rubrics_are_paired_so_per_row_deltas_compare_them(frame):
    # run B: the same rows judged with another rubric (another method name)
    b = results_frame([R(r.sample_id, r.metric, "judge:binary" if r.method == J else r.method,
                         (0.0 if r.sample_id == "2" else r.value) if r.method == J else r.value, r.unscored_reason)
                       for r in RESULTS], CATS)
    assert pair_methods(frame, b) == {"judge:binary": J}
    unpaired = run_delta(frame, b)
    assert set(unpaired.loc[unpaired["method"] == J, "present"]) == {"A"}  # without pairing nothing lines up
    assert run_delta(frame, b, changed_only=True).empty  # ... and a judge on one side only is no change per row
    paired = run_delta(frame, b, changed_only=True, methods=pair_methods(frame, b))
    assert list(zip(paired["sample_id"], paired["metric"], paired["method"], paired["method_b"])) == [
        ("2", "faithfulness", J, "judge:binary")
    ]
    assert paired.loc[0, "delta"] == pytest.approx(-0.75) and paired.loc[0, "present"] == "both"
    s = summary_delta(frame, b, methods={"judge:binary": J}).set_index(["metric", "method"])
    assert s.loc[("faithfulness", f"{J} → judge:binary"), "changed_rows"] == 1
    assert one_sided(frame, b, {"judge:binary": J}) == ([], [])
    only_a, only_b = one_sided(frame, results_frame([R("1", "faithfulness", "decomposed", 1.0)]))
    assert "context_recall (decomposed)" in only_a and only_b == []
    # two judges on each side: ambiguous, nothing paired
    two = pd.concat([b, b.assign(method="judge:binary-strict")])
    assert pair_methods(frame, two) == {}


def test_version_changes_name_the_leaf_that_differs():
    a = {"judge:rubric5": {"rubrics": {"ja": {"rubric_hash": "h1", "template_hash": "t1"}}}, "_templates": {"ja/x": "1"}}
    b = {"judge:rubric5": {"rubrics": {"ja": {"rubric_hash": "h1", "template_hash": "t2"}}}, "_templates": {"ja/x": "1"}, "new": 1}
    assert version_changes(a, b) == [("judge:rubric5.rubrics.ja.template_hash", "t1", "t2"), ("new", None, 1)]
    assert version_changes(a, a) == []


def test_cost_per_scorer_from_the_call_log():
    calls = [
        CallEntry("r", "1", "faithfulness", "decomposed", "extract_claims", "k", usage=Usage(100, 10), cost_usd=0.01),
        CallEntry("r", "1", "answer_correctness", "decomposed", "classify_correctness", "k2", usage=Usage(50, 5)),
        CallEntry("r", "2", "faithfulness", "decomposed", "extract_claims", "k3", cached=True),
        CallEntry("r", "1", J, J, "judge", "k4", error="timeout"),
    ]
    by = cost_by_scorer(calls)
    assert (by["faithfulness"].calls, by["faithfulness"].cached_calls, by["faithfulness"].input_tokens) == (1, 1, 100)
    assert list(by) == ["faithfulness", "answer_correctness", J] and by["answer_correctness"].output_tokens == 5
    assert by[J] == Usage(errors=1)  # an error counts as an error only: no tokens, no cost


def test_a_judge_only_run_a_had_is_no_change_on_every_row(frame):
    """The "48 results changed" bug: B drops one of A's judges and changes nothing else."""
    extra = [R(r.sample_id, r.metric, "judge:binary", r.value, r.unscored_reason) for r in RESULTS if r.method == J]
    a = results_frame([*RESULTS, *extra], CATS)
    b = results_frame(RESULTS, CATS)
    assert pair_methods(a, b) == {}  # A's extra judge has no partner in B
    assert run_delta(a, b, changed_only=True).empty
    only_a, only_b = one_sided(a, b)
    assert only_a == sorted({f"{r.metric} (judge:binary)" for r in extra}) and only_b == []
    s = summary_delta(a, b).set_index(["metric", "method"])
    assert int(s["changed_rows"].sum()) == 0
    # A row really changed on a shared method still counts, and only that one.
    b2 = results_frame([R("2", "faithfulness", J, 0.5) if (r.sample_id == "2" and r.metric == "faithfulness" and r.method == J)
                        else r for r in RESULTS], CATS)
    changed = run_delta(a, b2, changed_only=True)
    assert list(zip(changed["sample_id"], changed["method"])) == [("2", J)]


def test_heuristic_only_is_true_only_when_both_methods_are_offline():
    offline = [R(r.sample_id, r.metric, r.method, r.value, r.unscored_reason) for r in RESULTS]
    for r in offline:
        r.provider = "offline"
    frame = results_frame(offline, CATS)
    assert heuristic_only(frame, "decomposed", J)
    mixed = [*offline[:-1], R(offline[-1].sample_id, offline[-1].metric, offline[-1].method, offline[-1].value,
                               offline[-1].unscored_reason)]
    mixed[-1].provider = "replay"
    assert not heuristic_only(results_frame(mixed, CATS), "decomposed", J)  # one real-model result: not heuristic-only
    assert not heuristic_only(frame, "decomposed", "judge:absent")
