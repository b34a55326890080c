"""AppTest: History's leaderboard (names, notes, filters, two rows → Compare) and Compare's judges view."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.data.datasets import load_dataset
from rageval_core.scoring.judges.bound import judge_scorers
from rageval_core.scoring.judges.config import JudgeConfig
from rageval_core.scoring.judges.jury_run import add_jury
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT, assert_ok, compare_tab, start_app
from tests.support.scripted_llm import ScriptedLLM
from tests.scoring.test_judge import scores_for

ROWS = ["1", "4", "7", "10"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A two-judge run (offline heuristic + a scripted second model) with a mean jury, and a one-judge run."""
    root = tmp_path_factory.mktemp("ui-judges")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
        rows = [s for s in ds.samples if s.id in ROWS]
        scripted = ScriptedLLM(default=lambda r: scores_for(r, 2 if r.inputs.get("question", "").endswith("か") else 5))
        judges = [JudgeConfig("heuristic", provider="offline"), JudgeConfig("scripted", provider="openai-compatible", model="scripted-1")]
        two = run_rows(rows, judge_scorers(judges, ProviderConfig(), llms={"scripted": scripted}), config=ProviderConfig(),
                  dataset_name=ds.name, dataset_digest=ds.content_hash)
        add_jury(Store(), two.run_id, "mean")
        one = run_rows(rows, [JudgeScorer("rubric5")], config=ProviderConfig(), dataset_name="other", dataset_digest=ds.content_hash)
        yield {"home": str(root), "two": two.run_id, "one": one.run_id}


@pytest.fixture
def app(home: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, home["home"], check=False)


def test_history_leaderboard_columns_name_note_filter_and_compare_two(app: AppTest, home: dict[str, str]) -> None:
    app.switch_page("rageval_ui/app_pages/history.py").run()
    assert_ok(app)
    table = app.dataframe[0].value.set_index("run")
    assert {home["two"], home["one"]} == set(table.index)
    for col in ("judge:rubric5@heuristic/faithfulness", "judge:rubric5@scripted/faithfulness", "jury:mean/faithfulness",
                "judge:rubric5/faithfulness", "unscored share", "calls", "cost ($)", "wall (s)", "provider/model"):
        assert col in table.columns, col
    assert table.loc[home["two"], "provider/model"] == "offline/heuristic-v4, scripted/scripted-1"
    assert table.loc[home["two"], "jury:mean/faithfulness"] == pytest.approx(
        (table.loc[home["two"], "judge:rubric5@heuristic/faithfulness"] + table.loc[home["two"], "judge:rubric5@scripted/faithfulness"]) / 2)

    app.selectbox(key="history.run").set_value(home["two"]).run()
    app.text_input(key=f"history.name.{home['two']}").input("two judges")
    app.text_area(key=f"history.note.{home['two']}").input("offline vs scripted")
    next(b for b in app.button if b.label == "Save name and note").click().run()
    assert_ok(app)
    assert (Store().get_run(home["two"]).name, Store().get_run(home["two"]).note) == ("two judges", "offline vs scripted")
    assert app.dataframe[0].value.set_index("run").loc[home["two"], "name"] == "two judges"

    app.text_input(key="history.filter").input("TWO JUDGES").run()
    assert app.dataframe[0].value["run"].tolist() == [home["two"]]
    app.text_input(key="history.filter").input("").run()
    app.selectbox(key="history.dataset").set_value("other").run()
    assert app.dataframe[0].value["run"].tolist() == [home["one"]]
    app.selectbox(key="history.dataset").set_value("(all)").run()

    app.session_state["history.table"] = {"selection": {"rows": [0, 1], "columns": [], "cells": []}}
    app.run()
    compare = [b for b in app.button if b.label.startswith("Compare run A")]
    assert len(compare) == 1
    compare[0].click().run()
    assert_ok(app)
    assert "Run A vs run B" in [h.value for h in app.subheader]


def test_compare_judges_view_agreement_splits_cost_and_jury(app: AppTest, home: dict[str, str]) -> None:
    app.session_state["selected_run"] = home["two"]
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(app, "Judges side by side")
    assert_ok(app)
    assert "Judges side by side" in [h.value for h in app.subheader]
    frames = [d.value for d in app.dataframe]
    scores = next(f for f in frames if "judge:rubric5@scripted" in f.columns and "sample_id" in f.columns)
    assert set(scores["sample_id"]) == set(ROWS)
    pairs = next(f for f in frames if "spearman_lo" in f.columns)
    assert {"kappa", "kappa_lo", "kappa_hi", "spearman"} <= set(pairs.columns)
    assert ("judge:rubric5@heuristic", "judge:rubric5@scripted") in set(zip(pairs["judge_a"], pairs["judge_b"]))
    cost = next(f for f in frames if "seconds_per_row" in f.columns)
    assert set(cost["judge"]) == {"judge:rubric5@heuristic", "judge:rubric5@scripted"}
    assert len(app.get("vega_lite_chart")) >= 1  # the judges' agreement chart (the other tabs are closed)
    app.selectbox(key="compare.jury.rule").set_value("majority")
    next(b for b in app.button if b.label == "Add jury").click().run()
    assert_ok(app)
    assert any(r.method == "jury:majority" for r in Store().results(home["two"]))


def test_compare_builds_the_report_for_download(app: AppTest, home: dict[str, str]) -> None:
    app.session_state["selected_run"] = home["two"]
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert [tab.label for tab in app.tabs][-1] == "Report"
    assert not [m for m in app.multiselect if m.key.startswith("compare.report.")]  # the report runs when opened
    compare_tab(app, "Report")
    assert_ok(app)
    rows = app.multiselect(key=f"compare.report.rows.{home['two']}")
    assert len(rows.value) == 3  # the three most disagreeing rows by default
    rows.set_value(["4"])
    app.button(key="compare.report.build").click().run()
    assert_ok(app)
    download = [d for d in app.get("download_button") if "Download report (HTML" in str(d.proto.label)]
    assert len(download) == 1
    built_run, html = app.session_state["compare.report"]
    assert built_run == home["two"] and "Chosen rows (1)" in html and "<h3>#4 " in html


def test_evaluate_saves_picks_and_estimates_judge_configurations(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rageval_core.scoring.judges import saved

    at = start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/evaluate.py")
    at.text_input(key="evaluate.jc.id").input("strict")
    at.text_input(key="evaluate.jc.method").input("binary")
    at.text_input(key="evaluate.jc.temperature").input("0.3")
    next(b for b in at.button if b.label in ("Save configuration", "構成を保存")).click().run()
    assert_ok(at)
    assert [(j.id, j.method, j.temperature) for j in saved.load_saved()] == [("strict", "binary", 0.3)]
    at.multiselect(key="evaluate.judge_configs").set_value(["strict"]).run()
    assert_ok(at)
    estimate = next(d.value for d in at.dataframe if any("judge:binary@strict" == v for v in d.value.iloc[:, 0]))
    assert len(estimate) >= 2  # the page's own scorers and the picked configuration
    at.text_input(key="evaluate.jc.id").input("bad")
    at.text_input(key="evaluate.jc.method").input("decomposed")
    next(b for b in at.button if b.label in ("Save configuration", "構成を保存")).click().run()
    assert any("needs metrics" in e.value for e in at.error)
