"""The trust report of hand-made results: every metric × method with labels gets its statistics, the
confusion cells name their rows, the estimate and label-next are there, and to_dict is JSON."""

import json

import pytest

from rageval_core.analysis.trust.labels import dataset_labels, inspector_labels, merge_labels
from rageval_core.analysis.trust.report import build_report
from rageval_core.core.types import MetricResult

J = "judge:rubric5"


def R(sid, metric, method, value):
    return MetricResult(sid, metric, method, value, None if value is not None else "parse_error")


def _results():
    dec = {"a": 1.0, "b": 0.8, "c": 0.4, "d": 0.2, "e": 0.6, "f": None}
    jud = {"a": 1.0, "b": 0.25, "c": 0.75, "d": 0.0, "e": 1.0, "f": 0.5}
    out = [R(s, "faithfulness", "decomposed", v) for s, v in dec.items()]
    out += [R(s, "faithfulness", J, v) for s, v in jud.items()]
    out += [R(s, "answer_relevancy", "decomposed", 0.9) for s in dec]  # no labels for this criterion
    return out


def _labels():
    rows = [(s, {"label_faithful": y}) for s, y in zip("abcd", (1, 1, 0, 0))]
    return merge_labels(dataset_labels(rows), inspector_labels({"f": {"faithfulness": 1.0}}), rows=rows)


def test_report_per_metric_and_method():
    report = build_report(_results(), _labels(), run_id="r1", iterations=200, seed=1)
    assert [(a.metric, a.method) for a in report.agreement] == [("faithfulness", "decomposed"), ("faithfulness", J)]
    dec = report.find("faithfulness", "decomposed")
    # labelled a, b, c, d, f; decomposed left f unscored. scores 1, .8, .4, .2 vs 1, 1, 0, 0: a clean split
    assert dec.n_labelled == 4 and dec.unscored_labelled == 1 and dec.n_positive == 2
    assert dec.auroc.value == pytest.approx(1.0) and dec.kappa.value == pytest.approx(1.0)
    assert dec.balanced_accuracy.value == pytest.approx(1.0) and dec.best_threshold.value == pytest.approx(0.8)
    assert dec.auroc.low is not None and dec.auroc.low <= 1.0 <= dec.auroc.high
    jud = report.find("faithfulness", J)
    # judge 1, .25, .75, 0, .5 vs 1, 1, 0, 0, 1 at 0.5: tp a, f; fn b; fp c; tn d
    assert (jud.confusion.tp, jud.confusion.fn, jud.confusion.fp, jud.confusion.tn) == (["a", "f"], ["b"], ["c"], ["d"])
    # positives a(1), b(.25), f(.5) vs negatives c(.75), d(0): wins a>c, a>d, b>d, f>d; losses b<c, f<c -> 4/6
    assert jud.auroc.value == pytest.approx(4 / 6)
    assert jud.balanced_accuracy.value == pytest.approx((2 / 3 + 1 / 2) / 2)
    est = {(e.metric, e.method): e.estimate for e in report.estimates}
    # judge: mean over 6 rows = 3.5/6; judge − human on a, b, c, d, f = 0, −.75, .75, 0, −.5 -> bias −.1
    assert est[("faithfulness", J)].corrected.value == pytest.approx(3.5 / 6 + 0.1)
    assert est[("faithfulness", J)].n_labelled == 5 and est[("faithfulness", J)].n_judged == 6
    cov = {c.criterion: c for c in report.coverage}
    assert cov["faithfulness"].labelled == 5 and cov["faithfulness"].sources == {"dataset": 4, "inspector": 1}
    # only e is unlabelled on faithfulness; every answer_relevancy row is unlabelled
    assert {(c.row_id, c.criterion) for c in report.label_next if c.criterion == "faithfulness"} == {("e", "faithfulness")}
    e = next(c for c in report.label_next if c.criterion == "faithfulness")
    assert e.disagreement == pytest.approx(0.4)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["agreement"][1]["confusion"]["rows"]["tp"] == ["a", "f"]
    assert data["bootstrap"] == {"iterations": 200, "seed": 1, "level": 0.95}
    assert build_report(_results(), _labels(), iterations=200, seed=1).to_dict() == report.to_dict() | {"run_id": None}


def test_pairs_give_pairwise_agreement_and_rows_outside_the_run_are_ignored():
    rows = [("q_good", {"label_faithful": 1, "pair_group": "q"}), ("q_bad", {"label_faithful": 0, "pair_group": "q"}),
            ("gone", {"label_faithful": 1})]
    labels = merge_labels(dataset_labels(rows), rows=rows)
    results = [R("q_good", "faithfulness", "decomposed", 0.9), R("q_bad", "faithfulness", "decomposed", 0.9)]
    report = build_report(results, labels, iterations=50)
    a = report.agreement[0]
    assert a.n_pairs == 1 and a.pairwise.value == pytest.approx(0.5)  # a tie counts half
    assert a.n_labelled == 2 and report.coverage[0].labelled == 2
    # both rows pass while people split: one constant rater -> kappa 0 (defined), balanced accuracy 0.5
    assert a.kappa.value == pytest.approx(0.0) and a.balanced_accuracy.value == pytest.approx(0.5)
