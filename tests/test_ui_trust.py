"""AppTest: the Trust page on an offline run of the shipped labelled set (sample_data/trust_labelled.jsonl),
and Inspect's "next row to label"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.datasets import load_dataset
from rageval_core.llm.registry import ProviderConfig
from rageval_core.metrics.judge import JudgeScorer
from rageval_core.metrics.registry import build_scorers
from rageval_core.runner import run
from tests.support.apptest import ROOT, assert_ok, start_app

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One offline run of every labelled row: decomposed faithfulness and the binary judge (faithfulness,
    answer correctness), the cheapest set that still has two methods on one criterion."""
    root = tmp_path_factory.mktemp("ui-trust")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(LABELLED)
        result = run(ds.samples, [*build_scorers(["faithfulness"]), JudgeScorer("binary")], config=ProviderConfig(),
                     dataset_name=ds.name, dataset_digest=ds.content_hash)
        yield {"home": str(root), "run": result.run_id}


def _trust(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False)
    at.session_state["selected_run"] = home["run"]
    at.switch_page("app_pages/trust.py").run()
    assert_ok(at)
    return at


def _frame(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_trust_page_shows_every_panel_on_the_labelled_set(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = _trust(monkeypatch, home)
    headers = [h.value for h in at.subheader]
    for expected in ("Labels coverage", "Agreement with people", "Confusion matrices", "Corrected estimate", "Label next"):
        assert expected in headers
    coverage = _frame(at, "labelled")
    faith = coverage[coverage["criterion"] == "Faithfulness"].iloc[0]
    assert faith["labelled"] == "48 / 48" and faith["pass"] == 22 and faith["sources"] == "dataset 48"
    agreement = _frame(at, "AUROC")
    assert {"decomposed", "judge:binary"} <= set(agreement["method"])
    row = agreement[(agreement["criterion"] == "Faithfulness") & (agreement["method"] == "decomposed")].iloc[0]
    assert row["n"] == 48 and row["AUROC"].count("[") == 1  # a value with its interval
    estimates = _frame(at, "corrected")
    assert "n=48" in estimates.iloc[0]["labels only"]
    # Every row is labelled: nothing to label next, and the page says how to try it.
    assert any("Use the label columns of only some rows" in i.value for i in at.info)


def test_fewer_labels_fill_label_next_and_confusion_cells_open_inspect(monkeypatch: pytest.MonkeyPatch,
                                                                       home: dict[str, str]) -> None:
    at = _trust(monkeypatch, home)
    at.toggle[0].set_value(True).run()
    assert_ok(at)
    coverage = _frame(at, "labelled")
    assert coverage[coverage["criterion"] == "Faithfulness"].iloc[0]["labelled"] == "16 / 48"
    estimates = _frame(at, "corrected")
    assert all("n=16" in cell for cell in estimates["labels only"])
    assert estimates["as tight as k labels"].iloc[0] != "-"
    ranking = _frame(at, "priority")
    assert len(ranking) == 10 and ranking["priority"].is_monotonic_decreasing
    top = ranking.iloc[0]["row"]
    # A confusion cell lists its rows; each opens Inspect on that row.
    cell = next(b for b in at.button if b.label.startswith("Inspect #"))
    row_id = cell.label.removeprefix("Inspect #")
    cell.click().run()
    assert_ok(at)
    assert at.session_state["inspect_sample"] == row_id
    assert any(s.value == "Human labels" for s in at.subheader)
    # Inspect's "next row to label" opens the top row of the same ranking (AppTest reruns the page it
    # switched to itself, so switch to Inspect explicitly after the click).
    at.session_state["inspect_sample"] = top
    at.switch_page("app_pages/inspect_sample.py").run()
    next(b for b in at.button if b.label == "Next row to label").click().run()
    assert_ok(at)
    second = ranking.iloc[1]["row"] if ranking.iloc[1]["row"] != top else ranking.iloc[2]["row"]
    assert at.session_state["inspect_sample"] == second
    assert any("Suggested for labelling" in i.value for i in at.info)
