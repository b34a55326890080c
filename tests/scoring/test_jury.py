"""The jury's math against hand-computed values, and the jury stored with a two-judge run."""

from __future__ import annotations

import pytest

from rageval_core.scoring.judges.jury import combine
from rageval_core.scoring.judges.jury_run import add_jury, jury_results
from rageval_core.core.types import MetricResult


@pytest.mark.parametrize(
    "values, rule, expected, reason",
    [
        ([0.25, 0.5, 1.0], "mean", 0.5833333333333334, None),  # (0.25 + 0.5 + 1.0) / 3
        ([0.25, 0.5, 1.0], "median", 0.5, None),
        ([0.25, 1.0], "median", 0.625, None),  # even count: mean of the two middle values
        ([0.25, 0.5, 1.0], "majority", 1.0, None),  # 0.5 and 1.0 pass at 0.5: 2 of 3
        ([0.25, 0.4, 1.0], "majority", 0.0, None),  # 2 of 3 fail
        ([0.25, 1.0], "majority", None, "no_majority"),  # 1 pass, 1 fail: a tie
        ([None, 0.75, 0.25], "mean", 0.5, None),  # the unscored member does not vote
        ([None, None], "mean", None, "parse_error"),
    ],
)
def test_combine_hand_computed(values, rule, expected, reason):
    verdict = combine(values, rule, reasons=["parse_error"] * len(values))
    assert verdict.unscored_reason == reason
    assert verdict.value == (None if expected is None else pytest.approx(expected))
    assert verdict.voters == sum(v is not None for v in values)


def test_combine_rejects_unknown_rule():
    with pytest.raises(ValueError, match="mean, median, majority"):
        combine([0.5], "mode")


def _r(sid, judge, value, metric="faithfulness"):
    return MetricResult(sid, metric, "judge:rubric5", value, None if value is not None else "parse_error",
                        details={"judge": judge})


def test_jury_results_per_row_and_criterion_with_reasons():
    results = [_r("1", "a", 0.25), _r("1", "b", 0.75), _r("2", "a", None), _r("2", "b", 1.0),
               _r("1", "a", 1.0, "answer_relevancy")]
    out = {(r.sample_id, r.metric): r for r in jury_results(results, "mean")}
    assert out[("1", "faithfulness")].value == 0.5
    assert out[("2", "faithfulness")].value == 1.0 and out[("2", "faithfulness")].details["jury"]["voters"] == 1
    assert out[("1", "answer_relevancy")].value == 1.0
    assert out[("1", "faithfulness")].method == "jury:mean"
    assert "judge:rubric5@a 0.25" in out[("1", "faithfulness")].reason
    with pytest.raises(ValueError, match="not in this run"):
        jury_results(results, "mean", ["judge:rubric5@a", "judge:rubric5@zzz"])
    with pytest.raises(ValueError, match="at least two"):
        jury_results(results, "mean", ["judge:rubric5@a"])


def test_add_jury_to_a_stored_two_judge_run(tmp_path):
    from rageval_core.run.persist import stream_summary
    from rageval_core.store.runs import Store
    from tests.support.scripted_llm import ScriptedLLM
    from tests.scoring.test_judge import scores_for, seed_samples
    from tests.scoring.test_judges import _two_judges

    store = Store(tmp_path / "db.sqlite")
    _scorers, result = _two_judges(store, seed_samples()[:3], ScriptedLLM(default=lambda r: scores_for(r, 5)))
    stored = store.results(result.run_id)
    offline = {(r.sample_id, r.metric): r.value for r in stored if r.details["judge"] == "heuristic"}
    add_jury(store, result.run_id, "mean")
    add_jury(store, result.run_id, "mean")  # again: replaces, never duplicates
    jury = [r for r in store.results(result.run_id) if r.method == "jury:mean"]
    assert len(jury) == 3 * 4
    for r in jury:  # the scripted judge scores 5 of 5 → 1.0 everywhere
        a = offline[(r.sample_id, r.metric)]
        assert r.value == (1.0 if a is None else pytest.approx((a + 1.0) / 2))
    assert "jury:mean" in stream_summary(store, result.run_id)


def test_trust_lists_the_jury_and_each_judge_against_human_labels(tmp_path):
    """On labelled rows, Trust's agreement with people has one entry per judge configuration and the jury."""
    from rageval_core.data.datasets import load_dataset
    from rageval_core.scoring.judges.bound import judge_scorers
    from rageval_core.scoring.judges.config import JudgeConfig
    from rageval_core.providers.config import ProviderConfig
    from tests.support.runs import run_rows
    from rageval_core.store.runs import Store
    from rageval_core.analysis.trust.run_report import run_report
    from tests.support.apptest import ROOT

    ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
    rows = [s for s in ds.samples if not s.id.endswith("-en")][:10]
    store = Store(tmp_path / "db.sqlite")
    judges = [JudgeConfig("five", provider="offline", method="rubric5"), JudgeConfig("two", provider="offline", method="binary")]
    result = run_rows(rows, judge_scorers(judges, ProviderConfig()), config=ProviderConfig(), store=store)
    add_jury(store, result.run_id, "mean")
    report = run_report(store, result.run_id, samples=rows, iterations=100)
    methods = {a.method for a in report.agreement if a.metric == "faithfulness"}
    assert {"judge:rubric5@five", "judge:binary@two", "jury:mean"} <= methods
    jury = report.find("faithfulness", "jury:mean")
    assert jury is not None and jury.n_labelled == 10
