"""``trust DATA --split ...``: the split block in the JSON, agreement per split, test withheld until
``--show-test`` (and each look counted in the store), a stored split reused, bad fractions."""

import json

import pytest

from rageval_core import cli
from rageval_core.views.report import report_html
from rageval_core.analysis.trust.split_run import current_split
from rageval_core.store.runs import Store
from tests.support.trust_cli import MINI, run_id_of as _run_id



def test_split_block_hides_test_until_asked_and_counts_each_look(home, capsys):
    code = cli.main(["trust", str(MINI), "--split", "train=0.2,dev=0.4,test=0.4", "--seed", "5", "--iterations", "50",
                     "--quiet", "--out", "a.json"])
    out = capsys.readouterr().out
    assert code == 0 and "label split (seed 5" in out and "agreement on dev" in out and "agreement on test" not in out
    data = json.loads((home / "a.json").read_text(encoding="utf-8"))
    split = data["split"]
    assert split["seed"] == 5 and split["fractions"] == pytest.approx({"train": 0.2, "dev": 0.4, "test": 0.4})
    assert sum(split["rows"].values()) == 16 and split["rows"]["test"] >= 6 and split["rows"]["train"] >= 3
    assert set(split["agreement"]) == {"train", "dev"} and not split["test_shown"] and split["test_looks"] == 0
    assert "hidden" in split["notes"][0]
    dev = next(a for a in split["agreement"]["dev"] if a["metric"] == "faithfulness" and a["method"] == "decomposed")
    assert dev["n_labelled"] == split["labelled"]["faithfulness"]["dev"]
    # the bias tests run on the labelled rows outside test, Holm-adjusted over all of them
    assert data["bias"] and all(b["n"] <= 16 - split["labelled"]["faithfulness"]["test"] for b in data["bias"])
    assert {"feature", "effect", "p_value", "p_adjusted", "flagged"} <= set(data["bias"][0])
    # the run-wide figures leave the test labels out too
    faith = next(c for c in data["coverage"] if c["criterion"] == "faithfulness")
    assert faith["labelled"] == 16 - split["labelled"]["faithfulness"]["test"]

    # thresholds calibrated on dev: used by the agreement table, stored with the run's settings, test hidden
    faith_dec = next(a for a in data["agreement"] if a["metric"] == "faithfulness" and a["method"] == "decomposed")
    cal = next(c for c in data["calibration"] if c["metric"] == "faithfulness" and c["method"] == "decomposed")
    assert faith_dec["threshold_source"] == "calibrated on dev" and faith_dec["threshold"] == cal["threshold"]
    assert cal["test"] is None and cal["dev"]["n"] == split["labelled"]["faithfulness"]["dev"]
    run_id = _run_id(out)
    info = Store().find_run(run_id)
    stored = info.settings["calibrated_thresholds"]["faithfulness|decomposed"]
    assert stored["threshold"] == cal["threshold"] and stored["split_seed"] == 5
    assignment = current_split(Store(), info.dataset_hash).assignment
    for look in (1, 2):
        assert cli.main(["trust", run_id, "--show-test", "--iterations", "50", "--out", "b.json"]) == 0
        shown = json.loads((home / "b.json").read_text(encoding="utf-8"))["split"]
        assert shown["test_shown"] and shown["test_looks"] == look and shown["seed"] == 5  # the stored split is reused
        assert f"test opened {look} times" in capsys.readouterr().out
    test = next(a for a in shown["agreement"]["test"] if a["metric"] == "faithfulness" and a["method"] == "decomposed")
    shown_cal = json.loads((home / "b.json").read_text(encoding="utf-8"))["calibration"]
    assert next(c for c in shown_cal if c["method"] == "decomposed" and c["metric"] == "faithfulness")["test"]["n"] > 0
    assert test["n_labelled"] == sum(1 for s in assignment.values() if s == "test")
    assert current_split(Store(), info.dataset_hash).test_looks == 2
    # the run's HTML report renders the saved trust report: thresholds in use, calibration, split, bias
    html = report_html(Store(), [run_id], iterations=50)
    for text in ("(calibrated on dev)", "Pass thresholds calibrated on dev", "Label split (seed 5)", "test opened 2 times",
                 "Bias in the labelled rows", "Rogan–Gladen [95%]"):
        assert text in html, text


def test_fail_under_uses_the_threshold_in_use(home, capsys):
    """The share of rows passing at the calibrated threshold (or the default where none), exit 1 on a miss."""
    assert cli.main(["trust", str(MINI), "--metrics", "faithfulness", "--iterations", "20", "--quiet",
                     "--fail-under", "faithfulness=0.99"]) == 1
    # offline with no split: the offline judge's shipped calibrated verdict (one language here: ja)
    from rageval_core.offline.model import answer_threshold

    assert f"at threshold {answer_threshold('ja'):.3f} (ja) (shipped offline calibration)" in capsys.readouterr().out
    code = cli.main(["trust", str(MINI), "--metrics", "faithfulness", "--iterations", "20", "--quiet",
                     "--split", "train=0.2,dev=0.4,test=0.4", "--fail-under", "faithfulness=0.01", "--out", "d.json"])
    out = capsys.readouterr().out
    cal = next(c for c in json.loads((home / "d.json").read_text(encoding="utf-8"))["calibration"]
               if c["method"] == "decomposed")
    assert code == 0 and f"at threshold {cal['threshold']:.3g} (calibrated on dev)" in out and "ok" in out
    assert cli.main(["trust", str(MINI), "--fail-under", "faithfulness", "--quiet"]) == 2


def test_without_a_split_the_report_has_none_and_bad_fractions_exit_2(home, capsys):
    assert cli.main(["trust", str(MINI), "--iterations", "20", "--quiet", "--out", "c.json"]) == 0
    data = json.loads((home / "c.json").read_text(encoding="utf-8"))
    assert data["split"] is None and data["calibration"] is None
    sources = {(a["metric"], a["method"]): a["threshold_source"] for a in data["agreement"]}
    assert sources.pop(("faithfulness", "decomposed")) == "shipped offline calibration"  # the offline judge's own
    assert set(sources.values()) == {"default"}
    assert cli.main(["trust", str(MINI), "--split", "train=0.5,dev=0.4", "--quiet"]) == 2
    assert "sum to 0.9" in capsys.readouterr().err
