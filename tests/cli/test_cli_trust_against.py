"""``trust RUN_A --against RUN_B``: the comparison block (judge-only, labels-only, corrected, each with
value / low / high), paired by row id, each run with its own labels."""

import json

import pytest

from rageval_core import cli
from rageval_core.analysis.trust.compare_run import compare_runs
from rageval_core.store.runs import Store
from tests.support.trust_cli import MINI, run_id_of as _run_id



def test_against_writes_the_comparison_block(home, capsys):
    rows = [json.loads(line) for line in MINI.read_text(encoding="utf-8").splitlines() if line.strip()]
    longer = home / "longer.jsonl"  # version B: every answer followed by its first context (longer, same labels)
    with longer.open("w", encoding="utf-8") as f:
        for i, row in enumerate(rows):
            b = dict(row, answer=row["answer"] + row["contexts"][0])
            if i < 3:
                b["label_faithful"] = 1 - int(row["label_faithful"])
            f.write(json.dumps(b, ensure_ascii=False) + "\n")
    args = ["--metrics", "faithfulness", "--iterations", "20", "--quiet"]
    assert cli.main(["trust", str(longer), *args]) == 0
    run_b = _run_id(capsys.readouterr().out)
    # a prefix of B's id (the whole date-time part would name A too when both start in the same second)
    assert cli.main(["trust", str(MINI), *args, "--against", run_b[:-1], "--out", "f.json"]) == 0
    out = capsys.readouterr().out
    run_a = _run_id(out)
    assert f"run {run_a} − run {run_b}, paired by row" in out
    block = json.loads((home / "f.json").read_text(encoding="utf-8"))["comparison"]
    assert (block["run_a"], block["run_b"], block["metric"], block["method"]) == (run_a, run_b, "faithfulness", "decomposed")
    for kind in ("judge_only", "labels_only", "corrected"):
        assert {"value", "low", "high"} <= set(block[kind]) and block[kind]["low"] <= block[kind]["value"] <= block[kind]["high"]
    assert block["n_shared"] == block["n_labelled"] == 16
    # rows 1-3 flipped in B: labels-only = (#A pass B fail - #A fail B pass) / 16
    flipped = [int(r["label_faithful"]) for r in rows[:3]]
    assert block["labels_only"]["value"] == pytest.approx((sum(flipped) - (3 - sum(flipped))) / 16)
    # every row labelled in both: the corrected difference is the labels' own, and the note says so
    assert block["corrected"]["value"] == pytest.approx(block["labels_only"]["value"])
    assert any("every row is labelled" in n for n in block["by_method"][0]["notes"])
    again = compare_runs(Store(), run_a, run_b).to_dict()
    assert again["judge_only"] == block["judge_only"] and again["by_method"] == block["by_method"]


def test_an_unknown_run_b_is_bad_input_before_any_evaluation(home, capsys):
    assert cli.main(["trust", str(MINI), "--against", "no-such-run", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "no-such-run" in captured.err and "evaluated" not in captured.err
