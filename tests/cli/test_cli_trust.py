"""``trust RUN_ID|DATA`` on the offline provider: the tables, the JSON, labels from the inspector and a
file, the export's ``trust`` block, and bad input."""

import json

import pytest

from rageval_core import cli
from rageval_core.analysis.export import run_to_dict
from rageval_core.store.runs import Store
from tests.support.trust_cli import MINI, run_id_of as _run_id



def test_trust_on_a_dataset_evaluates_offline_then_prints_every_table(home, capsys):
    code = cli.main(["trust", str(MINI), "--out", "trust.json", "--iterations", "200", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    for heading in ("human labels (16 rows", "agreement with the labels", "confusion (predicted", "share that passes, corrected",
                    "label next"):
        assert heading in out
    assert "What the offline judge catches, on a sealed suite" in out and "Blind to (caught on fewer than half)" in out
    assert "faithfulness      16/16     9     7     dataset 16" in out
    data = json.loads((home / "trust.json").read_text(encoding="utf-8"))
    methods = {(a["metric"], a["method"]) for a in data["agreement"]}
    assert {("faithfulness", "decomposed"), ("faithfulness", "judge:rubric5"), ("answer_relevancy", "decomposed")} <= methods
    faith = next(a for a in data["agreement"] if a["metric"] == "faithfulness" and a["method"] == "decomposed")
    cells = faith["confusion"]["rows"]
    assert sorted(cells["tp"] + cells["fp"] + cells["fn"] + cells["tn"]) == sorted(f"p{i:02d}" for i in range(1, 17))
    assert len(cells["tp"]) + len(cells["fn"]) == 9  # nine rows labelled faithful
    assert faith["auroc"]["low"] <= faith["auroc"]["value"] <= faith["auroc"]["high"]
    # every row labelled: the corrected share is the labels' share, as tight as the 16 labels themselves
    est = next(e for e in data["estimates"] if e["metric"] == "faithfulness" and e["method"] == "decomposed")
    assert est["corrected"]["value"] == pytest.approx(9 / 16) and est["effective_labels"] == pytest.approx(16)
    # the run's export now carries the same report
    exported = run_to_dict(Store(), _run_id(out))
    assert exported["trust"]["agreement"] == data["agreement"]


def test_trust_on_a_run_merges_inspector_and_file_labels_and_reports_conflicts(home, capsys, tmp_path):
    assert cli.main(["trust", str(MINI), "--iterations", "50", "--quiet"]) == 0
    run_id = _run_id(capsys.readouterr().out)
    store = Store()
    info = store.find_run(run_id)
    assert run_to_dict(store, run_id)["trust"]["run_id"] == run_id
    store.set_label(info.dataset_hash, "p02", "faithfulness", 1.0)  # disagrees with the dataset's 0
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label_correct\np01,5\np02,2\np03,4\n", encoding="utf-8")
    code = cli.main(["trust", run_id[:15], "--labels", str(labels), "--iterations", "50", "--out", "t.json"])
    out = capsys.readouterr().out
    assert code == 0
    assert "conflict p02 faithfulness: inspector 1, dataset 0 (used inspector)" in out
    data = json.loads((home / "t.json").read_text(encoding="utf-8"))
    cov = {c["criterion"]: c for c in data["coverage"]}
    assert cov["faithfulness"]["sources"] == {"dataset": 15, "inspector": 1} and cov["faithfulness"]["conflicts"] == 1
    # the file's 1-5 ratings: 5 and 4 pass, 2 fails
    assert cov["answer_correctness"] == {"criterion": "answer_correctness", "labelled": 3, "rows": 16, "positive": 2,
                                         "sources": {"file": 3}, "conflicts": 0}
    assert not any(c["criterion"] == "answer_correctness" and c["row_id"] in ("p01", "p02", "p03") for c in data["label_next"])


def test_trust_bad_input_exits_2(home, capsys):
    assert cli.main(["trust", "no-such-run"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err
    assert cli.main(["trust", str(MINI), "--labels", "missing.csv", "--quiet"]) == 2
