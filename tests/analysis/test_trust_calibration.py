"""Calibrated pass thresholds: chosen on dev by balanced accuracy (hand-checked), reported on test, the
default where dev cannot calibrate, and the stored form the run's settings keep."""

import pytest

from rageval_core.analysis.trust.calibration import bacc_at, calibrate, settings_entry, stored_thresholds, thresholds_of

DEV = {"r1": 0.2, "r2": 0.4, "r3": 0.45, "r4": 0.6, "r5": 0.7, "r6": 0.9}
DEV_Y = {"r1": 0, "r2": 0, "r3": 1, "r4": 0, "r5": 1, "r6": 1}
TEST = {"r7": 0.47, "r8": 0.3, "r9": 0.5, "r10": 0.8}
TEST_Y = {"r7": 1, "r8": 0, "r9": 0, "r10": 1}


def test_threshold_chosen_on_dev_and_reported_on_test_by_hand():
    values, labels = {**DEV, **TEST}, {**DEV_Y, **TEST_Y}
    c = calibrate("faithfulness", "decomposed", values, labels, list(DEV), list(TEST), iterations=200)
    # t = .45: TPR 3/3, TNR 2/3 -> .8333; t = .7: TPR 2/3, TNR 3/3 -> .8333; the tie goes to the one nearer .5
    assert c.threshold == 0.45 and c.dev.value == pytest.approx(5 / 6) and c.dev.n == 6
    # at the default .5: pass .6, .7, .9 -> TPR 2/3, TNR 2/3
    assert c.dev_at_default.value == pytest.approx(2 / 3)
    # six rows: the Wilson-mean interval: Wilson 3/3 = [.43849, 1], Wilson 2/3 = [.20766, .93852]
    assert c.dev.interval == "wilson_mean" and (c.dev.low, c.dev.high) == pytest.approx((0.32307, 0.96926), abs=1e-4)
    # test at .45: pass r7 (1), r9 (0), r10 (1) -> TPR 1, TNR 1/2
    assert c.test.value == pytest.approx(0.75) and c.test.n == 4
    hidden = calibrate("faithfulness", "decomposed", values, labels, list(DEV), None, iterations=50)
    assert hidden.test is None and hidden.to_dict()["test"] is None and hidden.to_dict()["source"] == "calibrated on dev"


def test_one_class_on_dev_calibrates_nothing():
    assert calibrate("m", "decomposed", DEV, {r: 1 for r in DEV}, list(DEV)) is None
    assert bacc_at([], [], 0.5).value is None


def test_stored_thresholds_round_trip():
    c = calibrate("faithfulness", "judge:rubric5", DEV, DEV_Y, list(DEV), iterations=50)
    entry = settings_entry([c], split_seed=4)
    assert entry == {"faithfulness|judge:rubric5": {"threshold": 0.45, "chosen_on": "dev", "split_seed": 4,
                                                    "dev_balanced_accuracy": pytest.approx(5 / 6), "n_dev": 6}}
    assert stored_thresholds({"calibrated_thresholds": entry}) == thresholds_of([c]) == {("faithfulness", "judge:rubric5"): 0.45}
    assert stored_thresholds({}) == {} and stored_thresholds(None) == {}
