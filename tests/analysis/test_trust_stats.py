"""The trust statistics against hand-computed values (one test per rule; undefined is always None)."""

import numpy as np
import pytest

from rageval_core.core.stats import (
    auroc,
    average_ranks,
    balanced_accuracy,
    best_threshold,
    binarize,
    bootstrap_ci,
    cohen_kappa,
    confusion,
    pairwise_agreement,
    pearson,
    spearman,
)


def test_auroc_counts_ties_half():
    assert auroc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert auroc([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 0.0
    # pairs (pos, neg): (0.8,0.5) win, (0.8,0.8) tie, (0.4,0.5) loss, (0.4,0.8) loss -> 1.5 / 4
    assert auroc([0.8, 0.4, 0.5, 0.8], [1, 1, 0, 0]) == pytest.approx(0.375)
    # every score equal: every pair a tie -> 0.5
    assert auroc([0.7, 0.7, 0.7], [1, 0, 1]) == pytest.approx(0.5)
    assert auroc([0.5, 0.5], [1, 1]) is None


def test_balanced_accuracy_at_a_threshold():
    scores, labels = [0.9, 0.6, 0.55, 0.2], [1, 1, 0, 0]
    # at 0.5: predictions 1,1,1,0 -> recall on 1s = 1, on 0s = 1/2 -> 0.75
    assert binarize(scores, 0.5) == [1, 1, 1, 0]
    assert balanced_accuracy(binarize(scores, 0.5), labels) == pytest.approx(0.75)
    # at 0.7: predictions 1,0,0,0 -> 1/2 and 1 -> 0.75; at 0.1 everything passes -> 0.5, not the base rate
    assert balanced_accuracy(binarize(scores, 0.7), labels) == pytest.approx(0.75)
    assert balanced_accuracy(binarize(scores, 0.1), labels) == pytest.approx(0.5)
    assert balanced_accuracy([], []) is None


def test_cohen_kappa_is_undefined_when_both_raters_are_constant():
    # observed 0.75; expected 0.75*0.5 + 0.25*0.5 = 0.5 -> (0.75 - 0.5) / 0.5
    assert cohen_kappa([1, 1, 1, 0], [1, 1, 0, 0]) == pytest.approx(0.5)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    # a = TTFFT, b = TFFFT at 0.5: po = 4/5, pe = .6·.4 + .4·.6 = .48 -> (.8 − .48)/.52
    assert cohen_kappa([0.9, 0.6, 0.2, 0.0, 1.0], [1.0, 0.4, 0.1, 0.3, 0.5], threshold=0.5) == pytest.approx(0.32 / 0.52)
    # the threshold moves the split: at 0.8 the pair (0.75, 0.9) disagrees
    assert cohen_kappa([0.75, 0.2], [0.9, 0.1], threshold=0.5) == pytest.approx(1.0)
    assert cohen_kappa([0.75, 0.2], [0.9, 0.1], threshold=0.8) == pytest.approx(0.0)
    # one rater constant, the other split: pe = .5, po = .5 -> 0 (defined)
    assert cohen_kappa([1, 1, 1, 1], [1, 1, 0, 0]) == pytest.approx(0.0)
    # the one rule: both constant (on the same class) -> chance agreement 1 -> 0/0 -> undefined
    assert cohen_kappa([1, 1], [1, 1]) is None
    assert cohen_kappa([0, 0, 0], [0, 0, 0]) is None
    assert cohen_kappa([], []) is None


def test_confusion_keeps_row_ids_per_cell():
    m = confusion(["a", "b", "c", "d", "e"], [0.9, 0.8, 0.3, 0.1, 0.5], [1, 0, 1, 0, 1], 0.5)
    assert (m.tp, m.fp, m.fn, m.tn) == (["a", "e"], ["b"], ["c"], ["d"])
    assert m.counts == {"tp": 2, "fp": 1, "fn": 1, "tn": 1}
    assert m.to_dict()["rows"]["fn"] == ["c"] and m.to_dict()["threshold"] == 0.5


def test_pearson_and_spearman_worked_examples():
    # Σdx·dy = 2.25 - .25 - .25 + 2.25 = 4, Σdx² = Σdy² = 5 -> r = 0.8
    assert pearson([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert pearson([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # Spearman uses ranks only: same ranks as above -> 0.8; any monotone pair -> 1.0
    assert spearman([10, 20, 30, 40], [0.1, 0.3, 0.2, 0.4]) == pytest.approx(0.8)
    assert spearman([1, 2, 3], [1, 4, 9]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [1, 4, 9]) < 1.0
    # ties get average ranks: x ranks [1.5, 1.5, 3], y ranks [1, 2, 3]
    assert list(average_ranks([0, 0, 1])) == [1.5, 1.5, 3.0]
    # runs of ties anywhere in the order; a NaN sorts last and ties with nothing (not even another NaN)
    assert list(average_ranks([0.5, 0.25, 0.5, np.nan, 0.25, 1.0])) == [3.5, 1.5, 3.5, 6.0, 1.5, 5.0]
    assert list(average_ranks([np.nan, 2, np.nan, 2, 2])) == [4.0, 2.0, 5.0, 2.0, 2.0]
    assert list(average_ranks([])) == [] and list(average_ranks([7])) == [1.0]
    assert spearman([0, 0, 1], [0.1, 0.2, 0.9]) == pytest.approx(np.corrcoef([1.5, 1.5, 3], [1, 2, 3])[0, 1])
    # undefined: n < 2, or a constant side
    assert pearson([0.5], [0.5]) is None and spearman([0.5], [0.5]) is None
    assert pearson([1, 1, 1], [1, 2, 3]) is None and spearman([1, 1, 1], [0.1, 0.5, 0.9]) is None


def test_pairwise_agreement_counts_ties_half():
    # win, tie, loss -> 1.5 / 3
    assert pairwise_agreement([0.9, 0.5, 0.2], [0.1, 0.5, 0.3]) == pytest.approx(1.5 / 3)
    assert pairwise_agreement([], []) is None
    with pytest.raises(ValueError):
        pairwise_agreement([1.0], [])


def test_bootstrap_is_seeded_and_brackets_the_statistic():
    scores = [0.9, 0.8, 0.7, 0.3, 0.2, 0.6, 0.4, 0.1]
    labels = [1, 1, 1, 0, 0, 1, 0, 0]

    def stat(idx):
        return auroc([scores[i] for i in idx], [labels[i] for i in idx])

    lo, hi = bootstrap_ci(stat, len(scores), iterations=300, seed=7)
    assert lo <= auroc(scores, labels) <= hi and 0.0 <= lo and hi <= 1.0
    assert bootstrap_ci(stat, len(scores), iterations=300, seed=7) == (lo, hi)
    noisy = [0.9, 0.2, 0.7, 0.3, 0.8, 0.6, 0.4, 0.1]
    other = [bootstrap_ci(lambda idx: auroc([noisy[i] for i in idx], [labels[i] for i in idx]), 8, iterations=300, seed=s)
             for s in (1, 2, 3)]
    assert len(set(other)) > 1  # the seed matters
    assert bootstrap_ci(lambda idx: None, 3, iterations=5) is None


def test_bootstrap_groups_are_drawn_whole():
    # group a holds rows 0, 1, 2; group b holds row 3. Drawing whole groups gives resamples of 2, 4 or 6
    # rows where rows 0, 1 and 2 always appear equally often; drawing rows would give 4 rows every time.
    draws: list[list[int]] = []

    def record(idx):
        draws.append(list(idx))
        return 0.0

    bootstrap_ci(record, 4, groups=["a", "a", "a", "b"], iterations=200, seed=3)
    assert all(d.count(0) == d.count(1) == d.count(2) for d in draws)
    assert {len(d) for d in draws} == {2, 4, 6}
    with pytest.raises(ValueError):
        bootstrap_ci(record, 3, groups=["a"], iterations=1)


def test_best_threshold_maximises_balanced_accuracy():
    scores, labels = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    # score >= t passes. t=.1 -> (1 + 0)/2 = .5; t=.35 -> (1 + .5)/2 = .75; t=.4 -> (.5 + .5)/2 = .5;
    # t=.8 -> (.5 + 1)/2 = .75: .35 and .8 tie, the one nearest 0.5 wins
    assert best_threshold(scores, labels) == pytest.approx(0.35)
    # a clean split: any t in (0.3, 0.6] is perfect; 0.6 is the only observed one
    assert best_threshold([0.1, 0.3, 0.6, 0.9], [0, 0, 1, 1]) == pytest.approx(0.6)
    assert best_threshold([0.2, 0.4], [1, 1]) is None
