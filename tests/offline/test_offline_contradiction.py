"""The offline judge's contradiction checks, unit table and fitting math, each against hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from rageval_core.offline import fit
from rageval_core.offline.contradiction import clauses, date_swap, name_swap, negation_count, polarity_flipped
from rageval_core.offline.units import check_units, quantities


def test_negation_is_counted_in_english_and_japanese():
    assert negation_count("Lorries are not allowed.", "en") == 1
    assert negation_count("It never opens without a permit.", "en") == 2
    assert negation_count("It isn't open.", "en") == 1
    assert negation_count("大型トラックは通行できない。", "ja") == 1
    assert negation_count("会議は開かれませんでした。", "ja") == 1
    assert negation_count("許可を得ずに入った。", "ja") == 1
    assert negation_count("この橋は学生ではない。", "ja") == 1
    assert negation_count("大型トラックも通行できる。", "ja") == 0
    assert polarity_flipped("Lorries are allowed.", "Lorries are not allowed.", "en")
    assert not polarity_flipped("It is not closed.", "It is not shut.", "en")


def test_clauses_cut_a_negated_clause_from_the_rest():
    assert clauses("Corvin 3 does not carry a camera; it measures sea surface temperature.") == [
        "Corvin 3 does not carry a camera", "it measures sea surface temperature."]


def test_a_swapped_name_and_a_swapped_date():
    ev = "the bridge was designed by the engineer maria okafor."
    assert name_swap("The bridge was designed by Sofia Okafor.", "The bridge was designed by Maria Okafor.", "en", ev) == (
        "sofia", "maria")
    assert name_swap("The bridge was designed by Maria Okafor.", "The bridge was designed by Maria Okafor.", "en", ev) is None
    assert date_swap("5月3日に開通した。", "3月5日に開通した。", "ja", "3月5日に開通した。") == ("5/3", "3/5")
    assert date_swap("It opened on 12 May 1998.", "It opened on 12 March 1998.", "en", "It opened on 12 March 1998.") == (
        "5/12", "3/12")
    assert date_swap("It may open on 12 March.", "It opened on 12 March 1998.", "en", "It opened on 12 March 1998.") is None


def test_units_and_currencies():
    assert [(q.value, q.family) for q in quantities("予算は3億円、長さ1.2km、$5 million")] == [
        (3e8, "currency"), (1.2, "length"), (5e6, "currency")]
    assert check_units("It covers 300 square miles.", "It covers 300 km².").mismatches == (("300 square miles", "300 km2"),)
    assert check_units("予算は3億ドルです。", "予算は3億円です。").mismatches == (("3 ドル", "3 円"),)
    ok = check_units("It is 0.75 miles long.", "It is 1.2 km long.")  # 1.2 km = 0.746 mi: converted correctly
    assert ok.mismatches == () and "0.75" in ok.converted
    assert check_units("It is 2 miles long.", "It is 1.2 km long.").mismatches == (("2 miles", "1.2 km"),)
    assert check_units("It is 1.2 km long.", "It is 1.2 km long.").mismatches == ()


def test_answer_values_are_the_length_weighted_mean_of_claim_supports():
    # two answers: answer 0 has claims of length 1 and 3, answer 1 one claim vetoed (keep 0)
    c = fit.Claims(np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 1.0]]), np.array([0, 0, 1]), np.array([1.0, 3.0, 2.0]),
                   np.array([1.0, 1.0, 0.0]), 2)
    w = np.array([0.0, np.log(3.0)])  # sigmoid(0) = 0.5, sigmoid(ln 3) = 0.75
    assert fit.answer_values(w, c) == pytest.approx([(0.5 * 1 + 0.75 * 3) / 4, 0.0])
    # scaled by a verbatim claim's support (0.75 here) and capped at 1; a floor lifts a claim
    assert fit.answer_values(w, c, full=np.array([1.0, 1.0])) == pytest.approx([(0.5 / 0.75 + 3) / 4, 0.0])
    assert fit.answer_values(w, c, floor=np.array([0.9, 0.0, 0.0])) == pytest.approx([(0.9 + 0.75 * 3) / 4, 0.0])


def test_fit_weights_separates_a_separable_set():
    c = fit.Claims(np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 0.9], [1.0, 0.1]]), np.arange(4), np.ones(4), np.ones(4), 4)
    labels = [1, 0, 1, 0]
    w = fit.fit_weights(c, labels, fit.balanced_weights(labels, ["f"] * 4), steps=400)
    v = fit.answer_values(w, c)
    assert w[1] > 0 and min(v[0], v[2]) > 0.5 > max(v[1], v[3])


def test_balanced_weights_and_threshold_and_se():
    w = fit.balanced_weights([1, 1, 1, 0], ["a", "a", "a", "a"])
    assert w == pytest.approx([2 / 3, 2 / 3, 2 / 3, 2.0])  # each class half the weight, summing to 4
    # 0.2 / 0.4 negatives, 0.6 / 0.8 positives: the best cut is the midpoint 0.5
    assert fit.choose_threshold([0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1], ["a"] * 4) == pytest.approx(0.5)
    assert fit.balanced_accuracy_at([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1], 0.5) == pytest.approx(0.5)
    # Hanley-McNeil at A = 0.8, 10 + 10: q1 = 0.8/1.2, q2 = 1.28/1.8
    q1, q2 = 0.8 / 1.2, 1.28 / 1.8
    expected = np.sqrt((0.16 + 9 * (q1 - 0.64) + 9 * (q2 - 0.64)) / 100)
    assert fit.auroc_se(0.8, 10, 10) == pytest.approx(expected)
    assert fit.most_sensitive_within({0.5: 0.70, 0.7: 0.74, 1.01: 0.75}, 0.72) == 0.7
    assert fit.most_sensitive_within({0.5: 0.60, 1.01: 0.65}, 0.70) == 1.01
