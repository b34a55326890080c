"""Bias in the user's own labelled rows: hand-computed effect sizes, exact permutation p-values, Holm,
the row features, and a planted length bias found (and nothing else flagged)."""

import numpy as np
import pytest

from rageval_core.analysis.trust.bias import (
    bias_report,
    eta_squared,
    eta_test,
    holm,
    row_features,
    spearman_rho,
    spearman_test,
    support_position,
)
from rageval_core.core.types import Sample


def test_spearman_and_its_exact_permutation_p():
    assert spearman_rho([1, 2, 3, 4, 5, 6], [2, 4, 6, 8, 10, 12]) == pytest.approx(1.0)
    # ranks 1..4 vs 1,3,2,4: d = 0,1,1,0 -> rho = 1 - 6*2/(4*15) = 0.8
    assert spearman_rho([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert spearman_rho([1, 1, 1], [1, 2, 3]) is None
    # 6 rows, perfectly monotone: only 2 of the 720 orders reach |rho| = 1 -> p = 2/720
    rho, p = spearman_test([1, 2, 3, 4, 5, 6], [10, 20, 30, 40, 50, 60])
    assert rho == pytest.approx(1.0) and p == pytest.approx(2 / 720)


def test_eta_squared_by_hand_and_its_permutation_p():
    # groups a: 1, 3 (mean 2), b: 5, 7 (mean 6); grand mean 4; SS_between 2*4 + 2*4 = 16; SS_total 9+1+1+9 = 20
    assert eta_squared([1, 3, 5, 7], ["a", "a", "b", "b"]) == pytest.approx(0.8)
    assert eta_squared([1, 2], ["a", "a"]) is None
    # 6 rows, a = {0, 0, 0}, b = {1, 1, 1}: eta 1; the orders keeping the groups apart: 2 * 3! * 3! = 72 of 720
    eta, p = eta_test([0, 0, 0, 1, 1, 1], ["a", "a", "a", "b", "b", "b"])
    assert eta == pytest.approx(1.0) and p == pytest.approx(72 / 720)


def test_holm_by_hand():
    # sorted .01, .03, .04 -> x3, x2, x1 = .03, .06, .04 -> running max .03, .06, .06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_row_features():
    s = Sample("r", "q?", ["無関係な文です。", "過学習はモデルが訓練データを覚えすぎる現象。"], "過学習はモデルが訓練データを覚えすぎる現象です。",
               None, {"category": "faithful"})
    f = row_features(s)
    assert f["answer_length"] == len(s.answer) and f["context_count"] == 2.0
    assert f["context_length"] == sum(map(len, s.contexts)) and f["support_position"] == 1.0
    assert f["language"] == "ja" and f["category"] == "faithful"
    assert support_position(Sample("r", "q", ["only one"], "a", None, {})) is None


def test_a_planted_length_bias_is_flagged_and_nothing_else():
    rng = np.random.default_rng(7)
    n = 80
    samples, scores, labels = [], {}, {}
    for i in range(n):
        length = int(rng.integers(20, 400))
        rid = f"r{i:02d}"
        samples.append(Sample(rid, "What is it?", ["Context one about it.", "Context two here."], "x" * length, None,
                              {"category": ["a", "b"][i % 2], "language": ["ja", "en"][(i // 2) % 2]}))
        y = int(rng.random() < 0.5)
        labels[rid] = y
        # the judge's error grows with the answer's length (+0.3 over the range), on top of small noise
        scores[rid] = float(np.clip(0.2 + 0.6 * y + 0.3 * (length - 20) / 380 + rng.normal(0, 0.05), 0, 1))
    tests = bias_report({"faithfulness": {"judge:x": scores}}, {"faithfulness": labels}, samples, seed=1)
    by = {t.feature: t for t in tests}
    assert by["answer_length"].flagged and by["answer_length"].effect > 0.5 and by["answer_length"].kind == "spearman"
    assert not any(t.flagged for t in tests if t.feature != "answer_length"), [(t.feature, t.p_adjusted) for t in tests]
    assert set(by["language"].group_means) == {"ja", "en"} and "context_count" not in by  # constant: not tested
    assert all(t.p_adjusted >= t.p_value for t in tests)
    assert by["answer_length"].to_dict()["flagged"] is True


def _planted(n: int, slope: float, seed: int = 36) -> tuple[dict, dict, list[Sample], float]:
    """n labelled rows whose decomposed error grows with answer length (slope per standard deviation), a judge
    with no such bias beside it, and a category that means nothing."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 400, n)
    y = (rng.random(n) < 0.5).astype(int)
    z = (lengths - lengths.mean()) / lengths.std()
    biased = np.clip(0.5 + 0.25 * y + slope * z + rng.normal(0, 0.13, n), 0, 1)
    fair = np.clip(0.5 + 0.25 * y + rng.normal(0, 0.15, n), 0, 1)
    ids = [f"r{i}" for i in range(n)]
    samples = [Sample(r, "What is it?", ["Context about it."], "x" * int(k), None, {"category": f"c{i % 3}"})
               for i, (r, k) in enumerate(zip(ids, lengths))]
    scores = {"faithfulness": {"decomposed": dict(zip(ids, map(float, biased))), "judge:rubric5": dict(zip(ids, map(float, fair)))}}
    return scores, {"faithfulness": dict(zip(ids, map(int, y)))}, samples, spearman_rho(biased - y, lengths)


def test_a_planted_length_bias_is_flagged_on_10000_rows_after_holm():
    """Issue 36: above a size limit the permutations were cut to 200, so p could not go below 1/201 and Holm's
    correction lifted it over 0.05: a planted ρ = 0.38 on 10,000 rows was not flagged. From 1,000 rows on the
    large-sample null is used (Student's t for ρ, χ² for η²)."""
    scores, labels, samples, rho = _planted(10_000, 0.135)
    assert 0.35 <= rho <= 0.41
    tests = {(t.method, t.feature): t for t in bias_report(scores, labels, samples)}
    length = tests[("decomposed", "answer_length")]
    assert length.flagged and length.null == "normal" and length.effect == pytest.approx(rho)
    assert not tests[("judge:rubric5", "answer_length")].flagged
    assert not tests[("decomposed", "category")].flagged and tests[("decomposed", "category")].null == "chi2"
    assert tests[("judge:rubric5", "category")].p_value > 0.01


def test_the_large_sample_p_values_match_the_permutation_ones_where_both_apply():
    from rageval_core.analysis.trust import bias

    scores, labels, samples, _ = _planted(999, 0.03, seed=7)
    errors = {r: scores["faithfulness"]["decomposed"][r] - labels["faithfulness"][r] for r in labels["faithfulness"]}
    lengths = [len(s.answer) for s in samples]
    _, p_perm = spearman_test(list(errors.values()), lengths, permutations=4000)
    rho = spearman_rho(list(errors.values()), lengths)
    p_t = bias.normal_p(rho * np.sqrt(997 / (1 - rho ** 2)))
    assert p_t == pytest.approx(p_perm, abs=0.02)
    assert bias.chi2_sf(3.841459, 1) == pytest.approx(0.05, abs=1e-6) and bias.chi2_sf(5.991465, 2) == pytest.approx(0.05, abs=1e-6)
    assert bias.chi2_sf(7.814728, 3) == pytest.approx(0.05, abs=1e-6)
