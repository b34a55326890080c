"""Corrected comparison of two runs on the same rows (every difference run B − run A): hand-computed differences
and intervals, the notes when judge and corrected disagree, 200 seeded simulations with a judge that favours long
answers, and no zero-width corrected interval when every labelled pair agrees."""

import numpy as np
import pytest

from rageval_core.analysis.trust.paired import (
    Difference,
    compare_paired,
    corrected_difference,
    judge_vs_corrected,
    paired_proportion_difference,
)

A = {"r1": 0.9, "r2": 0.8, "r3": 0.6, "r4": 0.7}
B = {"r1": 0.5, "r2": 0.6, "r3": 0.6, "r4": 0.3, "only_b": 0.1}


def test_three_differences_by_hand():
    got = compare_paired("faithfulness", "decomposed", A, B, {"r1": 1, "r2": 1}, {"r1": 1, "r2": 0, "r3": 1})
    assert (got.n_shared, got.n_labelled) == (4, 2)
    # judge (B - A): d_f = -.4, -.2, 0, -.4 -> mean -.25, sample var .11/3, se sqrt(.11/3/4) = .095743
    assert got.judge_only.value == pytest.approx(-0.25)
    assert (got.judge_only.low, got.judge_only.high) == pytest.approx((-0.25 - 1.959964 * 0.0957427, -0.25 + 1.959964 * 0.0957427), abs=1e-5)
    assert got.judge_only.excludes_zero is True
    # corrected: -.25 - mean(-.4 - 0, -.2 - (-1)) = -.45; the rectifier (-.4, .8) has SS .72, with Agresti-Min's
    # half pair at each of its mean -+ 1: (.72 + 1) / 2 = .86; var .0091667 + .86/2 - 2 * .12 / 4 = .3791667
    assert got.corrected.value == pytest.approx(-0.45)
    half = 1.959964 * np.sqrt(0.3791667)
    assert (got.corrected.low, got.corrected.high) == pytest.approx((-0.45 - half, -0.45 + half), abs=1e-5)
    assert got.corrected.excludes_zero is False and got.corrected.high > 0.6  # not clipped to [0, 1]
    # labels: #(B pass, A fail) = 0, #(B fail, A pass) = 1 of n = 2 -> -.5; Agresti-Min p12 = .5/4, p21 = 1.5/4
    assert got.labels_only.value == pytest.approx(-0.5)
    half = 1.959964 * np.sqrt(0.109375)
    assert (got.labels_only.low, got.labels_only.high) == pytest.approx((-0.25 - half, -0.25 + half), abs=1e-5)
    assert got.disagree and any("only the judge's excludes 0" in n for n in got.notes)
    assert any("only 2 labelled rows" in n for n in got.notes)
    d = got.to_dict()
    assert set(d["judge_only"]) == {"value", "low", "high", "n", "excludes_zero"} and d["disagree"] is True


def test_agresti_min_does_not_collapse_when_every_pair_agrees():
    d = paired_proportion_difference([1, 1, 0, 1], [1, 1, 0, 1])
    # n12 = n21 = 0, n = 4: p12 = p21 = .5/6; var (1/6)/6 -> half 1.96 * sqrt(1/36) = .32666
    assert d.value == 0.0 and (d.low, d.high) == pytest.approx((-0.326661, 0.326661), abs=1e-5)
    assert paired_proportion_difference([], []).value is None


def test_sign_and_significance_notes():
    assert any("opposite directions" in n for n in judge_vs_corrected(Difference(0.2, 0.1, 0.3, 9), Difference(-0.1, -0.3, 0.1, 9)))
    assert judge_vs_corrected(Difference(0.2, 0.1, 0.3, 9), Difference(0.25, 0.05, 0.45, 9)) == []
    notes = judge_vs_corrected(Difference(0.01, -0.1, 0.12, 9), Difference(0.3, 0.1, 0.5, 9))
    assert len(notes) == 1 and "only the corrected one excludes 0" in notes[0]
    assert corrected_difference([0.1], [], []).value is None


def test_a_judge_that_favours_long_answers_is_corrected_in_200_simulations():
    """Runs A (short answers) and B (long ones) pass equally often (true difference 0); the judge adds 0.2
    for a long answer. Its difference excludes 0; the corrected one covers 0 in >= 90% of 200 seeds."""
    sims, n_rows, n_labelled = 200, 400, 80
    rng = np.random.default_rng(2026)
    y_a = rng.random((sims, n_rows)) < 0.6
    y_b = rng.random((sims, n_rows)) < 0.6
    f_a = np.clip(0.15 + 0.55 * y_a + rng.normal(0, 0.1, (sims, n_rows)), 0, 1)
    f_b = np.clip(0.15 + 0.55 * y_b + 0.2 + rng.normal(0, 0.1, (sims, n_rows)), 0, 1)
    labelled = np.argsort(rng.random((sims, n_rows)), axis=1)[:, :n_labelled]  # a uniform random subset per seed
    d_f = f_b - f_a  # B - A
    d_y = y_b.astype(float) - y_a.astype(float)
    judge_excludes = covers = 0
    for s in range(sims):
        lab = labelled[s]
        corrected = corrected_difference(d_f[s], d_f[s, lab], d_y[s, lab])
        judge_excludes += float(np.mean(d_f[s])) - 1.96 * float(np.std(d_f[s], ddof=1)) / np.sqrt(n_rows) > 0
        covers += corrected.low <= 0.0 <= corrected.high
    assert judge_excludes == sims
    assert covers / sims >= 0.90, covers
    # the mapping-level entry point gives the same figures as the array one on a simulated pair of runs
    ids = [f"r{i}" for i in range(n_rows)]
    lab = set(labelled[0].tolist())
    got = compare_paired("faithfulness", "judge:rubric5", dict(zip(ids, f_a[0])), dict(zip(ids, f_b[0])),
                         {ids[i]: int(y_a[0, i]) for i in lab}, {ids[i]: int(y_b[0, i]) for i in lab})
    assert got.judge_only.excludes_zero is True and got.n_labelled == n_labelled
    order = [i for i in range(n_rows) if i in lab]
    assert got.corrected.value == pytest.approx(corrected_difference(d_f[0], d_f[0, order], d_y[0, order]).value)


def test_the_corrected_interval_keeps_a_width_when_every_labelled_pair_agrees():
    """Issue 36: two runs whose judge gave the same scores and whose labelled pairs all agree (labels varying
    across rows) had a corrected interval of [0, 0]; the rectifier's pseudo-counts keep it open, shrinking as n grows."""
    rows = [f"r{i}" for i in range(8)]
    scores = {r: 0.8 if i % 2 else 0.3 for i, r in enumerate(rows)}
    labels = {r: i % 2 for i, r in enumerate(rows)}
    got = compare_paired("faithfulness", "decomposed", scores, scores, labels, labels)
    assert got.corrected.value == 0.0 and got.corrected.high - got.corrected.low > 0.2
    assert got.labels_only.high - got.labels_only.low > 0.2
    many = [f"r{i}" for i in range(400)]
    wide = compare_paired("faithfulness", "decomposed", {r: 0.5 for r in many}, {r: 0.5 for r in many},
                          {r: i % 2 for i, r in enumerate(many)}, {r: i % 2 for i, r in enumerate(many)})
    assert 0 < wide.corrected.high - wide.corrected.low < got.corrected.high - got.corrected.low
