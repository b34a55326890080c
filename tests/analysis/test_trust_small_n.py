"""Small-n honesty and the Rogan-Gladen correction, against hand-computed values: Newcombe's AUROC score
interval, the Wilson-mean balanced accuracy, the smoothed kappa, the report switching to them, and the
notes where a figure carries no information."""

import numpy as np
import pytest

from rageval_core.analysis.trust.labels import Label, merge_labels
from rageval_core.analysis.trust.report import build_report
from rageval_core.analysis.trust.rogan_gladen import corrected_share, rogan_gladen
from rageval_core.analysis.trust.small_n import (
    is_small,
    kappa_of_cells,
    newcombe_auroc,
    smoothed_kappa,
    wilson_mean_bacc,
)
from rageval_core.core.types import MetricResult

Z2 = 1.959963984540054 ** 2


def test_newcombe_auroc_does_not_collapse_at_perfect_separation():
    low, high = newcombe_auroc(1.0, 9, 9)
    assert high == 1.0
    # by hand at A = 0.78: (1 - A)^2 = .0484; z^2 A(1-A)/81 [1 + 8((1-A)/(2-A) + A/(1+A))] = .048409 -> root ~.7800
    assert low == pytest.approx(0.77997, abs=1e-4)
    for a_hat, m, n in ((0.8, 5, 5), (0.62, 12, 20)):
        lo, hi = newcombe_auroc(a_hat, m, n)
        for bound in (lo, hi):  # each bound solves (A - Â)^2 = z^2 V(A)
            star = (m + n) / 2
            v = bound * (1 - bound) / (m * n) * (1 + (star - 1) * ((1 - bound) / (2 - bound) + bound / (1 + bound)))
            assert (a_hat - bound) ** 2 == pytest.approx(Z2 * v, abs=1e-9)
        assert lo < a_hat < hi
    assert newcombe_auroc(0.5, 0, 4) is None


def test_wilson_mean_balanced_accuracy_by_hand():
    # 9 of 9: centre (1 + z^2/18)/(1 + z^2/9) = .85043, half 1.96 sqrt(z^2/324)/(1 + z^2/9) = .14958
    assert wilson_mean_bacc(9, 0, 9, 0) == pytest.approx((0.70085, 1.0), abs=1e-5)
    assert wilson_mean_bacc(5, 0, 5, 0) == pytest.approx((0.56552, 1.0), abs=1e-5)
    # one class only: balanced accuracy is that class's rate, with its own Wilson interval (5 of 5 as above)
    assert wilson_mean_bacc(5, 0, 0, 0) == pytest.approx((0.56552, 1.0), abs=1e-5)
    assert wilson_mean_bacc(0, 0, 0, 0) is None


def test_smoothed_kappa():
    assert kappa_of_cells(np.array([0.4]), np.array([0.1]), np.array([0.1]), np.array([0.4]))[0] == pytest.approx(0.6)
    assert np.isnan(kappa_of_cells(np.array([1.0]), np.array([0.0]), np.array([0.0]), np.array([0.0]))[0])
    low, high = smoothed_kappa(9, 0, 9, 0, seed=1)
    assert 0.4 < low < 0.8 and high == 1.0  # not [1, 1]; the observed kappa (1) stays inside
    assert smoothed_kappa(9, 0, 9, 0, seed=1) == (low, high)
    lo, hi = smoothed_kappa(5, 5, 5, 5)
    assert lo < 0 < hi and abs(lo + hi) < 0.1


def test_rogan_gladen_by_hand():
    verdicts = [1] * 6 + [0] * 4
    lab_verdicts, labels = [1, 1, 1, 1, 0, 1, 0, 0, 0, 0], [1] * 5 + [0] * 5
    got = rogan_gladen(verdicts, lab_verdicts, labels, iterations=500, seed=3)
    # p = .6, Se = 4/5, Sp = 4/5: (.6 + .8 - 1)/(.8 + .8 - 1) = 2/3
    assert (got.apparent, got.sensitivity, got.specificity) == pytest.approx((0.6, 0.8, 0.8))
    assert got.value == pytest.approx(2 / 3) and got.low < got.value < got.high and got.note is None
    assert got == rogan_gladen(verdicts, lab_verdicts, labels, iterations=500, seed=3)
    coin = rogan_gladen(verdicts, [1, 0, 1, 0], [1, 1, 0, 0])  # Se = Sp = .5
    assert coin.value is None and "no better than chance" in coin.note
    assert rogan_gladen(verdicts, [1, 0], [1, 1]).note.startswith("people's labels hold one class only")
    assert float(corrected_share(0.9, 0.95, 0.9)) == pytest.approx(0.8 / 0.85)  # (.9 + .9 - 1)/(.95 + .9 - 1)
    assert float(corrected_share(0.99, 0.9, 0.95)) == 1.0  # (.99 + .95 - 1)/.85 = 1.106, clipped
    assert float(corrected_share(0.2, 0.9, 0.9)) == pytest.approx(0.125)  # (.2 + .9 - 1)/.8


def _results(scores: dict[str, float]) -> list[MetricResult]:
    return [MetricResult(metric="faithfulness", method="decomposed", value=v, sample_id=rid) for rid, v in scores.items()]


def test_report_uses_small_sample_intervals_and_says_where_figures_say_nothing():
    ids = [f"r{i:02d}" for i in range(18)]
    scores = {rid: (0.9 if i % 2 else 0.1) for i, rid in enumerate(ids)}  # perfect separation
    labels = merge_labels([Label(rid, "faithfulness", i % 2, "dataset", i % 2) for i, rid in enumerate(ids)])
    rep = build_report(_results(scores), labels, iterations=200)
    a = rep.agreement[0]
    assert a.auroc.value == 1.0 and a.auroc.interval == "newcombe" and a.auroc.low == pytest.approx(0.77997, abs=1e-4)
    assert a.balanced_accuracy.interval == "wilson_mean" and a.balanced_accuracy.low == pytest.approx(0.70085, abs=1e-5)
    assert a.kappa.interval == "smoothed_bootstrap" and a.kappa.low < 1.0
    assert a.to_dict()["auroc"]["interval"] == "newcombe" and a.notes == []
    est = rep.estimates[0]
    assert any("every row is labelled" in n for n in est.notes)
    assert est.rogan_gladen.value == pytest.approx(0.5) and est.rogan_gladen.sensitivity == 1.0
    few = merge_labels([Label(rid, "faithfulness", 1, "dataset", 1) for rid in ids[:6]])
    b = build_report(_results(scores), few, iterations=50).agreement[0]
    assert any("one verdict only on these rows (pass)" in n for n in b.notes) and any("only 6 labelled rows" in n for n in b.notes)
    assert is_small(25, 4) and is_small(14, 14) and not is_small(15, 15)
