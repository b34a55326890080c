"""The pure scoring math, checked against cases computed by hand."""

import math

import numpy as np
import pytest

from rageval_core.scoring.metrics import scoring


def test_faithfulness_is_supported_over_extracted():
    assert scoring.faithfulness([1, 1, 0]) == pytest.approx(2 / 3)
    assert scoring.faithfulness([0, 0]) == 0.0
    assert scoring.faithfulness([True]) == 1.0
    assert scoring.faithfulness([]) is None


def test_graded_faithfulness_is_the_weighted_mean_of_claim_support():
    # 0/1 supports with equal weights are RAGAS's share
    assert scoring.graded_faithfulness([1.0, 1.0, 0.0]) == pytest.approx(2 / 3)
    # (0.9·30 + 0.2·10) / 40 = 29 / 40
    assert scoring.graded_faithfulness([0.9, 0.2], [30, 10]) == pytest.approx(29 / 40)
    assert scoring.graded_faithfulness([]) is None
    with pytest.raises(ValueError):
        scoring.graded_faithfulness([1.2])
    with pytest.raises(ValueError):
        scoring.graded_faithfulness([0.5], [0])
    with pytest.raises(ValueError):
        scoring.graded_faithfulness([0.5, 0.5], [1])


def test_verdicts_must_be_bits():
    with pytest.raises(ValueError, match="0 or 1"):
        scoring.faithfulness([1, 2])


@pytest.mark.parametrize(
    "verdicts, expected",
    [
        ([1, 0, 1], (1 + 2 / 3) / 2),
        ([1, 1, 1], 1.0),
        ([0, 1], 0.5),
        ([0, 0, 1], 1 / 3),
        ([1, 0, 0, 1], (1 + 2 / 4) / 2),
        ([0, 1, 1], (1 / 2 + 2 / 3) / 2),
        ([1], 1.0),
    ],
)
def test_average_precision_by_hand(verdicts, expected):
    assert scoring.average_precision(verdicts) == pytest.approx(expected)


def test_average_precision_with_no_useful_chunk_is_zero_and_empty_is_an_error():
    assert scoring.average_precision([0, 0, 0]) == 0.0
    with pytest.raises(ValueError):
        scoring.average_precision([])


def test_precision_at_k_lists_each_rank():
    assert scoring.precision_at_k([1, 0, 1]) == pytest.approx([1.0, 0.5, 2 / 3])


def test_recall_ratio():
    assert scoring.recall([1, 0, 1, 1]) == 0.75
    assert scoring.recall([]) is None


def test_context_relevance_caps_extra_extractions():
    assert scoring.context_relevance(2, 8) == 0.25
    assert scoring.context_relevance(12, 8) == 1.0
    assert scoring.context_relevance(0, 0) is None


def test_cosine():
    assert scoring.cosine([1, 0], [1, 0]) == pytest.approx(1.0)
    assert scoring.cosine([1, 0], [0, 1]) == pytest.approx(0.0)
    assert scoring.cosine([1, 1], [1, 0]) == pytest.approx(1 / math.sqrt(2))
    assert scoring.cosine([0, 0], [1, 0]) == 0.0
    with pytest.raises(ValueError):
        scoring.cosine([1, 0, 0], [1, 0])


def test_answer_relevancy_is_mean_cosine_zero_only_if_all_noncommittal():
    assert scoring.answer_relevancy([0.9, 0.6, 0.3], [0, 0, 0]) == pytest.approx(0.6)
    # one noncommittal question does not zero the score (np.all, not np.any)
    assert scoring.answer_relevancy([0.9, 0.6, 0.3], [1, 0, 0]) == pytest.approx(0.6)
    assert scoring.answer_relevancy([0.9, 0.6, 0.3], [1, 1, 1]) == 0.0
    assert scoring.answer_relevancy([-0.5, 0.1], [0, 0]) == 0.0  # clipped into [0, 1]
    assert scoring.answer_relevancy([], []) is None
    with pytest.raises(ValueError):
        scoring.answer_relevancy([0.5], [])


def test_f1_from_counts():
    assert scoring.f1(2, 1, 1) == pytest.approx(4 / 6)
    assert scoring.f1(0, 2, 1) == 0.0
    assert scoring.f1(3, 0, 0) == 1.0
    assert scoring.f1(0, 0, 0) is None


def test_answer_correctness_weights():
    assert scoring.answer_correctness(0.5, 0.9) == pytest.approx(0.75 * 0.5 + 0.25 * 0.9)
    assert scoring.answer_correctness(0.5, 0.9, (3, 1)) == pytest.approx(0.75 * 0.5 + 0.25 * 0.9)
    assert scoring.answer_correctness(0.5, 0.9, (1, 0)) == pytest.approx(0.5)
    assert scoring.answer_correctness(1.0, -0.2) == pytest.approx(0.75)
    for bad in [(0, 0), (-1, 1), (1,), (float("nan"), 1)]:
        with pytest.raises(ValueError):
            scoring.answer_correctness(0.5, 0.5, bad)


def test_cosine_accepts_numpy_rows():
    m = np.array([[3.0, 4.0], [4.0, 3.0]])
    assert scoring.cosine(m[0], m[1]) == pytest.approx(24 / 25)
