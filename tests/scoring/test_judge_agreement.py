"""Judge vs judge agreement, splits and cost per judge, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from rageval_core.analysis.compare import results_frame
from rageval_core.analysis.judge_agreement import cost_per_judge, pairwise, splits
from rageval_core.store.runs import CallEntry
from rageval_core.core.types import MetricResult, Usage

A = [0.2, 0.4, 0.6, 0.8, 1.0]
B = [0.25, 0.5, 0.5, 1.0, 0.75]


def _frame():
    results = [MetricResult(str(i), "faithfulness", "judge:rubric5", v, details={"judge": j})
               for j, values in (("a", A), ("b", B)) for i, v in enumerate(values, 1)]
    results.append(MetricResult("6", "faithfulness", "judge:rubric5", None, "parse_error", details={"judge": "b"}))
    results.append(MetricResult("6", "faithfulness", "judge:rubric5", 0.9, details={"judge": "a"}))
    return results_frame(results, {str(i): "cat" for i in range(1, 7)})


def test_pairwise_spearman_and_kappa_hand_computed():
    table = pairwise(_frame(), iterations=200)
    assert len(table) == 1
    row = table.iloc[0]
    assert (row.judge_a, row.judge_b, row.n) == ("judge:rubric5@a", "judge:rubric5@b", 5)  # row 6: b unscored
    # Ranks a = 1..5, b = 1, 2.5, 2.5, 5, 4: rho = 8.5 / sqrt(10 * 9.5).
    assert row.spearman == pytest.approx(8.5 / math.sqrt(95))
    # Split at 0.5: a = 0,0,1,1,1 and b = 0,1,1,1,1; po = 0.8, pe = 0.6*0.8 + 0.4*0.2 = 0.56.
    assert row.kappa == pytest.approx((0.8 - 0.56) / 0.44)
    assert row.spearman_lo <= row.spearman <= row.spearman_hi
    assert row.kappa_lo <= row.kappa_hi
    again = pairwise(_frame(), iterations=200)
    assert again.iloc[0].spearman_lo == row.spearman_lo  # seeded: the same interval twice


def test_splits_lists_rows_where_one_passes_and_one_fails():
    out = splits(_frame())
    assert out["sample_id"].tolist() == ["2"]  # a 0.4 fails, b 0.5 passes
    assert out.iloc[0]["spread"] == pytest.approx(0.1) and out.iloc[0]["passes"] == 1


def test_cost_per_judge_per_row():
    calls = [
        CallEntry("r", "1", "judge:rubric5@a", "judge:rubric5", "judge", "k1", usage=Usage(100, 20), cost_usd=0.01, latency_s=2.0),
        CallEntry("r", "2", "judge:rubric5@a", "judge:rubric5", "judge", "k2", usage=Usage(50, 10), cost_usd=0.005, latency_s=1.0),
        CallEntry("r", "1", "judge:rubric5@b", "judge:rubric5", "judge", "k3", cached=True),
        CallEntry("r", "2", "judge:rubric5@b", "judge:rubric5", "judge", "k4", error="boom", latency_s=0.5),
    ]
    table = cost_per_judge(calls, n_rows=2).set_index("judge")
    a, b = table.loc["judge:rubric5@a"], table.loc["judge:rubric5@b"]
    assert (a.calls, a.tokens, a.cost_usd, a.seconds) == (2, 180, pytest.approx(0.015), 3.0)
    assert (a.calls_per_row, a.tokens_per_row, a.seconds_per_row) == (1.0, 90.0, 1.5)
    assert (b.calls, b.cached_calls, b.errors, b.tokens) == (0, 1, 1, 0)
