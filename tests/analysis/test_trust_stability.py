"""Repeat stability and probe shifts against hand-computed values."""

import math

import pytest

from rageval_core.analysis.trust.probes import ProbeCase, ProbeSet
from rageval_core.analysis.trust.shifts import RowShift, is_flagged, probe_result, shift_stat
from rageval_core.analysis.trust.stability import flip_rate, spread, stability
from rageval_core.core.types import MetricResult, Sample, Unscored


def results(values, metric="faithfulness", method="decomposed"):
    return [
        MetricResult(rid, metric, method, v, unscored_reason=None if v is not None else Unscored.PARSE_ERROR)
        for rid, v in values.items()
    ]


# Row 1 wavers across 0.5 (0.8 / 0.3 / 0.9); row 2 is steady at 0.2.
REPEATS = {0: results({"1": 0.8, "2": 0.2}), 1: results({"1": 0.3, "2": 0.2}), 2: results({"1": 0.9, "2": 0.2})}


def test_spread_and_flip_rate_by_hand():
    sd, rng = spread([0.8, 0.3, 0.9])
    # mean 2/3; squared deviations 0.017778 + 0.134444 + 0.054444 = 0.206667; / 3 → 0.068889
    assert sd == pytest.approx(math.sqrt(0.206667 / 3), abs=1e-5) and rng == pytest.approx(0.6)
    assert flip_rate([0.8, 0.3, 0.9], 0.5) == pytest.approx(1 / 3)
    assert flip_rate([0.6, 0.4, 0.6, 0.4], 0.5) == 0.5
    assert flip_rate([0.2, 0.2], 0.5) == 0.0


def test_stability_per_row_and_per_metric_by_hand():
    report = stability(REPEATS, threshold=0.5, aggregate="mean", seed=0)
    row1, row2 = report.rows
    assert row1.values == (0.8, 0.3, 0.9) and row1.value == pytest.approx(2 / 3)
    assert row1.range == pytest.approx(0.6) and row1.flip_rate == pytest.approx(1 / 3)
    assert (row2.sd, row2.range, row2.flip_rate) == (0.0, 0.0, 0.0) and row2.value == pytest.approx(0.2)
    m = report.find("faithfulness", "decomposed")
    assert m.mean == pytest.approx((2 / 3 + 0.2) / 2)
    assert m.repeat_means == pytest.approx([0.5, 0.25, 0.55])
    assert m.mean_sd == pytest.approx(row1.sd / 2) and m.max_range == pytest.approx(0.6)
    assert m.flip_rate == pytest.approx(1 / 6) and m.rows_flipping == 1
    # Whole repeats are resampled: each draw's mean is the mean of 3 repeat means drawn from {0.5, 0.25, 0.55}.
    assert 0.25 <= m.low < m.mean < m.high <= 0.55
    assert stability(REPEATS, seed=0).to_dict() == report.to_dict()  # seeded: the same interval again
    assert report.repeat_values() == {"faithfulness": {"decomposed": {"1": [0.8, 0.3, 0.9], "2": [0.2, 0.2, 0.2]}}}


def test_interval_across_two_repeats_is_their_two_means():
    # With two repeats, a resample is (r0, r0), (r0, r1), (r1, r0) or (r1, r1): the mean of the two repeat means
    # (0.5, 0.25) or one of them; each extreme has probability 1/4, far above 2.5%, so the bounds are exactly 0.25 and 0.5.
    m = stability({0: REPEATS[0], 1: REPEATS[1]}).find("faithfulness", "decomposed")
    assert (m.mean, m.low, m.high) == (pytest.approx(0.375), pytest.approx(0.25), pytest.approx(0.5))


def test_majority_without_a_majority_is_unscored_or_the_median():
    majority = stability(REPEATS, aggregate="majority")
    row1 = majority.rows[0]
    assert row1.value is None and row1.unscored_reason == Unscored.NO_MAJORITY
    m = majority.find("faithfulness", "decomposed")
    assert m.n_rows == 1 and m.unscored_rows == {Unscored.NO_MAJORITY: 1} and m.mean == pytest.approx(0.2)
    median = stability(REPEATS, aggregate="majority_or_median")
    assert median.rows[0].value == pytest.approx(0.8)
    with pytest.raises(ValueError):
        stability(REPEATS, aggregate="mode")


def test_unscored_repeats_are_left_out_and_a_row_never_scored_keeps_its_reason():
    reps = {0: results({"1": None, "2": None}), 1: results({"1": 0.4, "2": None})}
    report = stability(reps)
    row1, row2 = report.rows
    assert row1.values == (None, 0.4) and row1.sd == 0.0 and row1.value == 0.4
    assert row2.value is None and row2.unscored_reason == Unscored.PARSE_ERROR


def test_one_repeat_has_zero_spread_and_a_point_interval():
    report = stability({0: REPEATS[0]})
    m = report.find("faithfulness", "decomposed")
    assert m.mean_sd == 0.0 and m.rows_flipping == 0 and m.low == m.high == pytest.approx(0.5)


PAIRS = [RowShift("a", "a", 0.25, 0.75), RowShift("b", "b", 1.0, 1.0), RowShift("c", "c", 0.5, 0.4)]


def test_shift_stat_by_hand():
    s = shift_stat("faithfulness", "decomposed", PAIRS, tolerance=0.1, upward_only=False, seed=0)
    assert s.n == 3 and s.mean_shift == pytest.approx((0.5 + 0 - 0.1) / 3)
    assert -0.1 <= s.low < s.mean_shift < s.high <= 0.5  # resampled means of 3 draws from {0.5, 0, -0.1}
    # Two pairs: each extreme resample (both draws the same pair) has probability 1/4, so the bounds are the shifts.
    two = shift_stat("faithfulness", "decomposed", [PAIRS[0], PAIRS[2]], tolerance=0.1, upward_only=False, seed=0)
    assert (two.mean_shift, two.low, two.high) == (pytest.approx(0.2), pytest.approx(-0.1), pytest.approx(0.5))
    assert [r.row_id for r in s.top] == ["a", "c"]  # unmoved rows are never listed
    assert s.max_shift == pytest.approx(0.5) and s.flagged  # |0.133| > 0.1
    fell = shift_stat("faithfulness", "decomposed", [RowShift("x", "x", 0.9, 0.12), PAIRS[0]], tolerance=0.1,
                      upward_only=False, seed=0)
    assert fell.max_shift == pytest.approx(-0.78)  # the largest move keeps its sign (probe − original), not +0.78
    up = shift_stat("faithfulness", "decomposed", PAIRS, tolerance=0.05, upward_only=True, seed=0)
    assert [r.row_id for r in up.top] == ["a"] and up.flagged


def test_flags_use_the_direction_of_the_probe():
    assert is_flagged(-0.3, 0.05, upward_only=True) is False  # fell when told to rise: not fooled
    assert is_flagged(-0.3, 0.05, upward_only=False) is True
    assert is_flagged(0.05, 0.05, upward_only=False) is False  # at the tolerance is within it
    assert is_flagged(None, 0.05, upward_only=False) is False


def test_probe_result_pairs_by_case_and_counts_unscored_pairs():
    rows = [Sample(i, "q", ("c",), "a") for i in ("1", "2", "3")]
    made = ProbeSet("context_injection", tuple(ProbeCase(s.id, s) for s in rows), {"empty answer": ("9",)})
    original = results({"1": 0.0, "2": 0.5, "3": 0.5}) + results({"1": 0.25}, method="judge:rubric5")
    probed = results({"1": 1.0, "2": None, "3": 0.5}) + results({"1": 1.0}, method="judge:rubric5")
    got = probe_result(made, original, probed, seed=0)
    dec, judge = got.shifts
    assert (dec.method, dec.n, dec.unscored_pairs, dec.mean_shift) == ("decomposed", 2, 1, pytest.approx(0.5))
    assert (judge.method, judge.n, judge.mean_shift) == ("judge:rubric5", 1, pytest.approx(0.75))
    assert got.flagged and got.skipped == {"empty answer": 1} and got.tolerance == 0.05
    assert got.to_dict()["shifts"][0]["top"][0] == {"row_id": "1", "probe_row_id": "1", "original": 0.0, "probe": 1.0, "shift": 1.0}


def test_language_cases_pair_different_ids():
    en = Sample("1-en", "q", ("c",), "a")
    made = ProbeSet("language", (ProbeCase("1", en),))
    got = probe_result(made, results({"1": 0.4}), results({"1-en": 0.6}), tolerance=0.3)
    assert got.shifts[0].mean_shift == pytest.approx(0.2) and not got.flagged
    assert (got.shifts[0].top[0].row_id, got.shifts[0].top[0].probe_row_id) == ("1", "1-en")
