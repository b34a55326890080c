"""Issue 27, must show: a run made with ``evaluate`` from the CLI on a labelled file (outside sample_data, not
loaded in the app) has the same labels on the Trust page, in Inspect and in the report as ``trust RUN`` prints;
the app had fallen back to its loaded dataset (another hash) and said "No human labels on this run's rows"."""

from __future__ import annotations

import json
import re

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset, save_dataset
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT, assert_ok, start_app
from rageval_ui import runs

pytestmark = pytest.mark.timeout(600)  # bootstrap intervals on a loaded machine; a deadline, not a timing assertion


def _cli_coverage(text: str) -> dict[str, str]:
    """criterion -> "labelled/rows" from ``trust RUN``'s coverage table."""
    found = {}
    for line in text.split("human labels", 1)[1].splitlines()[3:]:
        cells = line.split()
        if len(cells) < 2 or not re.fullmatch(r"\d+/\d+", cells[1]):
            break
        found[cells[0]] = cells[1]
    return found


def test_the_trust_page_inspect_and_report_read_the_labels_trust_run_reads(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    rows = load_dataset(ROOT / "sample_data" / "labelled_mini_ja.jsonl").samples[:10]  # not a shipped file's hash
    save_dataset(rows, tmp_path / "labelled.jsonl", naming="seed")
    assert cli.main(["evaluate", "labelled.jsonl", "--provider", "offline", "--metrics", "faithfulness",
                     "--judge", "binary", "--out", "r.json"]) == 0
    run_id = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["run_id"]
    capsys.readouterr()
    assert cli.main(["trust", run_id, "--iterations", "200"]) == 0
    printed = _cli_coverage(capsys.readouterr().out)
    assert printed and all(v.endswith("/10") and not v.startswith("0/") for v in printed.values()), printed

    at = start_app(monkeypatch, tmp_path / "home", check=False, timeout=240)  # the app's own sample dataset loaded
    at.session_state["selected_run"] = run_id
    at.switch_page("rageval_ui/app_pages/trust.py").run()
    assert_ok(at)
    assert not [i.value for i in at.info if "No human labels" in i.value]
    coverage = next(d.value for d in at.dataframe if "labelled" in d.value.columns)
    page = {row["criterion"]: row["labelled"].replace(" ", "") for _, row in coverage.iterrows()}
    labels = {"faithfulness": "Faithfulness", "answer_relevancy": "Answer Relevancy", "answer_correctness": "Answer Correctness"}
    assert {labels.get(k, k): v for k, v in printed.items()} == page

    view = runs.load(run_id, at.session_state["dataset"], Store())
    assert view is not None and view.samples_source == runs.RUN_ROWS  # the rows the run keeps, label columns too
    assert set(view.samples) == {s.id for s in rows}  # Inspect's texts and "next row to label" read these rows
    assert all(view.samples[s.id].metadata.get("label_faithful") == s.metadata.get("label_faithful") for s in rows)
    at.session_state["inspect_sample"] = rows[0].id
    at.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    assert_ok(at)
    assert not [w.value for w in at.warning if "texts" in w.value.lower()]
