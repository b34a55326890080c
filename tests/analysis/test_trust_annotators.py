"""Human–human agreement, hand-computed: Krippendorff's alpha (nominal), Cohen's kappa between two people,
the verdict on whether the judge is within the people's range."""

from __future__ import annotations

import pytest

from rageval_core.analysis.trust.annotators import (
    ABOVE,
    BELOW,
    UNKNOWN,
    WITHIN,
    alpha_with_interval,
    disagreeing_rows,
    kappa_with_interval,
    krippendorff_alpha,
    majority,
    verdict,
)


def test_alpha_two_coders_by_hand() -> None:
    # 4 units, two coders: (1,1) (1,0) (0,0) (0,0). Coincidences: o11 = 2, o10 = o01 = 1, o00 = 4; n1 = 3, n0 = 5, n = 8.
    # alpha = 1 - (n - 1) * sum(o_ck, c != k) / sum(n_c * n_k, c != k) = 1 - 7 * 2 / (64 - 9 - 25) = 1 - 14/30.
    assert krippendorff_alpha([[1, 1], [1, 0], [0, 0], [0, 0]]) == pytest.approx(1 - 14 / 30)


def test_alpha_three_coders_with_a_missing_value_by_hand() -> None:
    # Units: (1,1,1) (1,1,0) (0,0) ; the second unit's pairs weigh 1/(3-1) each.
    # o11 = 6*(1/2) [unit 1: 6 ordered pairs] + 2*(1/2) [unit 2: (1,1) both ways] = 4; o10 = o01 = 2*(1/2) = 1; o00 = 2 (unit 3).
    # n1 = 5, n0 = 3, n = 8; alpha = 1 - 7 * 2 / (64 - 25 - 9) = 1 - 14/30 (the lone [1] is not pairable).
    assert krippendorff_alpha([[1, 1, 1], [1, 1, 0], [0, 0], [1]]) == pytest.approx(1 - 14 / 30)


def test_alpha_perfect_and_undefined() -> None:
    assert krippendorff_alpha([[1, 1], [0, 0], [1, 1]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # one value only: 0/0
    assert krippendorff_alpha([[1], [0]]) is None  # nothing pairable


def test_alpha_two_coders_is_scotts_pi_with_the_small_sample_factor() -> None:
    # units (1,0) (0,1) (1,1) (0,0) (1,1): pooled share of 1s 6/10; po = 3/5; pe = 0.36 + 0.16 = 0.52.
    # alpha = 1 - (n-1)/n * (1 - po) / (1 - pe) with n = 10 values = 1 - 0.9 * 0.4 / 0.48 = 0.25.
    assert krippendorff_alpha([[1, 0], [0, 1], [1, 1], [0, 0], [1, 1]]) == pytest.approx(0.25)


def test_kappa_between_two_people_with_interval() -> None:
    a = {"r1": 1, "r2": 1, "r3": 0, "r4": 0, "r5": 1, "r6": 0}
    b = {"r1": 1, "r2": 0, "r3": 0, "r4": 0, "r5": 1, "r6": 1, "r7": 1}
    # shared rows r1..r6: agreement 4/6; p_a = 3/6, p_b = 3/6; pe = 0.5; kappa = (2/3 - 1/2) / (1/2) = 1/3
    value, ci, n = kappa_with_interval(a, b, iterations=200, seed=1)
    assert n == 6 and value == pytest.approx(1 / 3)
    assert ci is not None and ci[0] <= value <= ci[1]
    assert kappa_with_interval(a, b, iterations=200, seed=1) == (value, ci, n)  # seeded


def test_alpha_with_interval_counts_pairable_rows() -> None:
    value, ci, n = alpha_with_interval({"a": {"1": 1, "2": 0, "3": 1}, "b": {"1": 1, "2": 0}, "c": {"3": 1, "4": 0}},
                                       iterations=100, seed=0)
    assert n == 3 and value == pytest.approx(1.0) and ci == (1.0, 1.0)


@pytest.mark.parametrize("judge, people, interval, spread, expected", [
    (0.55, 0.6, (0.4, 0.8), None, WITHIN),
    (0.2, 0.6, (0.4, 0.8), None, BELOW),
    (0.9, 0.6, (0.4, 0.8), None, ABOVE),
    (0.5, 0.6, None, (0.45, 0.7), WITHIN),
    (0.6, 0.6, None, None, WITHIN),
    (None, 0.6, (0.4, 0.8), None, UNKNOWN),
    (0.5, None, None, None, UNKNOWN),
])
def test_verdict(judge, people, interval, spread, expected) -> None:
    assert verdict(judge, people, interval, spread) == expected


def test_disagreements_and_majority() -> None:
    assert disagreeing_rows({"a": {"1": 1, "2": 0}, "b": {"1": 0, "2": 0, "3": 1}}) == {"1": {"a": 1, "b": 0}}
    assert majority([1, 1, 0]) == 1 and majority([0, 0, 1]) == 0 and majority([1, 0]) is None
