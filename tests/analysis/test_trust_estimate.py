"""The corrected (prediction-powered) estimate and label-next ranking, against hand-computed values and
a seeded simulation of a biased judge."""

import math

import numpy as np
import pytest

from rageval_core.analysis.trust.estimate import Z95, corrected_estimate, mean_interval, ppi_mean
from rageval_core.analysis.trust.ranking import label_next, uncertainty


def test_corrected_estimate_hand_computed():
    # judge 1,1,0,1 on a..d (mean .75); people labelled a=1, b=0 -> judge − human = 0, 1 -> bias .5
    est = corrected_estimate({"a": 1.0, "b": 1.0, "c": 0.0, "d": 1.0}, {"a": 1, "b": 0})
    assert est.judge_bias == pytest.approx(0.5)
    assert est.corrected.value == pytest.approx(0.25)
    # Var = var(f)/N + var(Δ)/n − 2 cov(f, Δ)/N = (.75/3)/4 + .5/2 − 0 = .3125; k = var(y) / Var = .5 / .3125
    half = Z95 * math.sqrt(0.3125)
    assert est.corrected.low == pytest.approx(max(0.0, 0.25 - half)) and est.corrected.high == pytest.approx(min(1.0, 0.25 + half))
    assert est.effective_labels == pytest.approx(1.6)
    assert (est.n_labelled, est.n_judged) == (2, 4)
    assert est.judge_only.value == pytest.approx(0.75) and est.labels_only.value == pytest.approx(0.5)
    # judge-only: var(f)/N = .0625 -> ± 1.96 × .25
    assert est.judge_only.low == pytest.approx(0.75 - Z95 * 0.25)


def test_labels_only_uses_the_wilson_interval():
    # 16 of 16 pass: centre (1 + z²/32) / (1 + z²/16) = .90320, half z·√(z²/1024) / (1 + z²/16) = .09681
    est = corrected_estimate({str(i): 0.9 for i in range(16)}, {str(i): 1 for i in range(16)})
    assert est.labels_only.value == 1.0
    assert est.labels_only.low == pytest.approx(0.8064, abs=1e-4) and est.labels_only.high == pytest.approx(1.0)
    assert est.effective_labels is None  # the labels' own variance is 0: k undefined
    # 1 of 2: centre .5, half z·√(.125 + z²/16) / (1 + z²/2) = .4055... -> [.0945, .9055]
    half = Z95 * math.sqrt(0.25 / 2 + Z95**2 / 16) / (1 + Z95**2 / 2)
    est = corrected_estimate({"a": 1.0, "b": 1.0}, {"a": 1, "b": 0})
    assert (est.labels_only.low, est.labels_only.high) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))


def test_no_labels_means_no_correction():
    est = corrected_estimate({"a": 0.8, "b": 0.6}, {})
    assert est.corrected.value is None and est.effective_labels is None and est.judge_only.value == pytest.approx(0.7)
    assert mean_interval([]).value is None


def test_every_row_labelled_equals_labels_alone():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50).astype(float)
    f = np.clip(y * 0.6 + rng.random(50) * 0.4, 0, 1)
    est = corrected_estimate(dict(enumerate(f)), dict(enumerate(y)))
    assert est.corrected.value == pytest.approx(float(np.mean(y)))
    assert est.effective_labels == pytest.approx(50.0)  # as tight as its own 50 labels, no more


def test_interval_covers_the_truth_in_95_percent_of_simulations_of_a_biased_judge():
    # people pass 60% of answers; the judge passes 90% of the good ones and 50% of the bad ones
    # (judge mean 0.74: biased by +0.14). 2,000 judged rows, 150 of them labelled at random.
    rng = np.random.default_rng(20261201)
    truth, big_n, n, covered, widths = 0.6, 2000, 150, 0, []
    for _ in range(1000):
        y = (rng.random(big_n) < truth).astype(float)
        f = np.where(y == 1, rng.random(big_n) < 0.9, rng.random(big_n) < 0.5).astype(float)
        lab = rng.choice(big_n, n, replace=False)
        est = ppi_mean(f, f[lab], y[lab])
        covered += est.low <= truth <= est.high
        widths.append(est.high - est.low)
    assert 930 <= covered <= 970
    # the judge alone is off by 0.14 and would never cover; the correction costs width, not validity
    assert float(np.mean(widths)) < 0.2


def test_label_next_prefers_uncertain_disagreeing_unstable_rows():
    scores = {"faithfulness": {"decomposed": {"a": 0.95, "b": 0.5, "c": 0.9, "d": 0.1}, "judge:x": {"a": 1.0, "b": 0.5, "c": 0.1}}}
    labelled = {"d": ["faithfulness"]}
    ranked = label_next(scores, labelled, threshold=0.5)
    assert [c.row_id for c in ranked] == ["c", "b", "a"]  # d is labelled
    c, b, a = ranked
    assert b.uncertainty == pytest.approx(1.0) and b.disagreement == 0.0 and b.reason == "near the threshold"
    # c: mean .5 -> uncertainty 1, disagreement .8 -> priority 1.8 > b's 1.0
    assert c.priority == pytest.approx(1.8) and c.reason == "near the threshold"
    assert a.uncertainty == pytest.approx(1 - 0.475 / 0.5)
    reps = {"faithfulness": {"judge:x": {"a": [0.0, 1.0, 1.0, 0.0]}}}
    with_repeats = label_next(scores, labelled, threshold=0.5, repeats=reps)
    # a's repeats: std 0.5 -> spread 1.0 -> priority .05 + .05 + 1 = 1.1 > b's 1.0
    assert [x.row_id for x in with_repeats][:2] == ["c", "a"] and with_repeats[1].spread == pytest.approx(1.0)
    assert with_repeats[1].reason == "repeats differ"
    assert len(label_next(scores, labelled, top=1)) == 1
    assert uncertainty(0.8, 0.8) == 1.0 and uncertainty(0.0, 0.8) == 0.0
