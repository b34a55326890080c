"""Version against version on the same rows (rageval_core.analysis.trust.versus), against hand-computed values."""

import numpy as np
import pytest

from rageval_core.core import stats
from rageval_core.analysis.trust.versus import compare_versions, paired_difference, resamples, statistics

Y = [1, 1, 0, 0]
OLD = [1.0, 0.0, 1.0, 0.0]  # pred 1,0,1,0: TPR 1/2, TNR 1/2, balanced accuracy 0.5, kappa 0, AUROC 0.5
NEW = [1.0, 1.0, 0.0, 0.0]  # perfect


def test_paired_difference_of_balanced_accuracy_by_hand():
    bacc = statistics()["balanced_accuracy"]
    # Draw by draw (labels, old predictions -> balanced accuracy; new is perfect on every draw, 1.0):
    # [0,1,2,3] y 1100 old 1010 -> 0.5, diff 0.5;  [0,2,2,3] y 1000 old 1110 -> (1 + 1/3)/2 = 2/3, diff 1/3;
    # [1,2,3,3] y 1000 old 0100 -> (0 + 2/3)/2 = 1/3, diff 2/3;  [0,0,2,2] old 1111 -> 0.5;  [1,1,3,3] old 0000 -> 0.5.
    draws = [[0, 1, 2, 3], [0, 2, 2, 3], [1, 2, 3, 3], [0, 0, 2, 2], [1, 1, 3, 3]]
    full = paired_difference(bacc, OLD, NEW, Y, draws, alpha=0.0)  # alpha 0: the smallest and largest difference
    assert full.value == pytest.approx(0.5)
    assert (full.low, full.high) == pytest.approx((1 / 3, 2 / 3))
    # Sorted diffs 1/3, 1/2, 1/2, 1/2, 2/3: the 25th and 75th percentiles fall on the 2nd and 4th (1/2 each).
    half = paired_difference(bacc, OLD, NEW, Y, draws, alpha=0.5)
    assert (half.low, half.high) == pytest.approx((0.5, 0.5))


def test_a_draw_where_the_statistic_is_undefined_is_skipped():
    auc = statistics()["auroc"]
    # [0,1,0,1] holds positives only: AUROC undefined on both sides, skipped. [0,1,2,3]: 1.0 - 0.5 = 0.5;
    # [0,2,2,3] y 1000, old 1,1,1,0: the positive (1) beats the negative 0 once and ties 1 twice -> (1 + 0.5*2)/3 = 2/3,
    # new 1,0,0,0 -> 1.0, diff 1/3.
    got = paired_difference(auc, OLD, NEW, Y, [[0, 1, 0, 1], [0, 1, 2, 3], [0, 2, 2, 3]], alpha=0.0)
    assert got.value == pytest.approx(0.5)
    assert (got.low, got.high) == pytest.approx((1 / 3, 0.5))


def test_undefined_point_difference_and_bad_lengths():
    assert paired_difference(statistics()["auroc"], [1.0, 0.0], [1.0, 1.0], [1, 1], [[0, 1]]).value is None
    with pytest.raises(ValueError):
        paired_difference(statistics()["auroc"], [1.0], [1.0, 0.0], [1, 0], [])


def test_resamples_are_the_draws_of_bootstrap_ci():
    s, y = [0.9, 0.2, 0.7, 0.4, 0.6, 0.1], [1, 0, 1, 0, 0, 1]
    draws = resamples(len(s), iterations=200, seed=3)
    values = [v for idx in draws if (v := stats.auroc([s[i] for i in idx], [y[i] for i in idx])) is not None]
    expected = tuple(float(q) for q in np.quantile(values, [0.025, 0.975]))
    got = stats.bootstrap_ci(lambda idx: stats.auroc([s[i] for i in idx], [y[i] for i in idx]), len(s), iterations=200, seed=3)
    assert got == pytest.approx(expected)


def test_compare_versions_by_hand():
    rows = ["a", "b", "c", "d"]
    labels = {"faithfulness": dict(zip(rows, Y))}
    old = ("v1", {"faithfulness": dict(zip(rows, OLD))})
    new = ("v2", {"faithfulness": {"a": 1.0, "b": 1.0, "c": 0.0}})  # d unscored by the new version
    rep = compare_versions(old, new, labels, rows, iterations=100)
    v1, v2 = rep.find("v1", "faithfulness"), rep.find("v2", "faithfulness")
    assert (v1.tpr.value, v1.tnr.value, v1.agreement.balanced_accuracy.value, v1.agreement.kappa.value) == (0.5, 0.5, 0.5, 0.0)
    assert v1.agreement.auroc.value == 0.5
    assert (v2.agreement.n_labelled, v2.agreement.unscored_labelled, v2.tpr.value, v2.tnr.value) == (3, 1, 1.0, 1.0)
    diff = rep.differences[0]
    # Paired on a, b, c only: old 1,0,1 vs y 1,1,0 -> TPR 1/2, TNR 0, balanced accuracy 1/4; new perfect -> +3/4.
    assert diff.n == 3
    assert diff.differences["balanced_accuracy"].value == pytest.approx(0.75)
    assert diff.differences["tnr"].value == pytest.approx(1.0)
    assert any("only 3 paired" in n for n in rep.notes)
    assert rep.to_dict()["differences"][0]["balanced_accuracy"]["value"] == pytest.approx(0.75)


def test_identical_versions_differ_by_exactly_zero():
    rows = [f"r{i}" for i in range(12)]
    y = [i % 2 for i in range(12)]
    s = [0.9 if (i % 3) else 0.2 for i in range(12)]
    scores = {"faithfulness": dict(zip(rows, s))}
    rep = compare_versions(("a", scores), ("b", scores), {"faithfulness": dict(zip(rows, y))}, rows, iterations=200)
    for name, d in rep.differences[0].differences.items():
        assert (d.value, d.low, d.high) == (0.0, 0.0, 0.0), name
        assert not rep.differences[0].excludes_zero(name)
    assert rep.notes == []


def test_a_zero_width_difference_is_called_what_it_is():
    rows = [f"r{i}" for i in range(10)]
    y = [1, 0] * 5
    old = ("a", {"faithfulness": {r: 1.0 for r in rows}})  # passes everything
    new = ("b", {"faithfulness": dict(zip(rows, map(float, y)))})  # right on every row
    rep = compare_versions(old, new, {"faithfulness": dict(zip(rows, y))}, rows, iterations=200)
    d = rep.differences[0].differences
    assert (d["tnr"].value, d["tnr"].low, d["tnr"].high) == (1.0, 1.0, 1.0)
    assert any("zero-width interval" in n and "tnr" in n for n in rep.notes)
