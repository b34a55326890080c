"""AppTest: side runs kept under their parent run (issue 38 item 3). Compare, Inspect and Trust list the user's runs,
newest first, and show probes, vs people runs and prompt tests only with the toggle (one setting for every page);
History puts each side run under its parent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_ui.i18n import catalogue
from rageval_ui.run_picker import SHOW_SIDE
from tests.support.apptest import ROOT, assert_ok, start_app
from tests.support.runs import run_rows

PAGES = {"compare": "rageval_ui/app_pages/compare.py", "inspect": "rageval_ui/app_pages/inspect_sample.py",
         "trust": "rageval_ui/app_pages/trust.py", "history": "rageval_ui/app_pages/history.py"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Two evaluations, a probe of the first, a vs-people run and a prompt test, stored in this order."""
    home = tmp_path_factory.mktemp("side-runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
        rows = ds.samples[:2]

        def one(**settings: object) -> str:
            return run_rows(rows, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name,
                            dataset_digest=ds.content_hash, settings=dict(settings)).run_id

        out = {"home": str(home), "u1": one()}
        out["p1"] = one(probe="paraphrase", base_run=out["u1"], probe_seed=0)
        out["u2"] = one()
        out["v"] = one(versus={"version": "v2", "split": "dev"})
        out["t"] = one(prompt_test="judge")
        yield out


def run_box(at: AppTest):
    labels = {catalogue(lang)["common.run"] for lang in ("en", "ja")}
    return next(s for s in at.selectbox if s.label in labels)


def listed(at: AppTest, runs: dict[str, str]) -> list[str]:
    """The picker's runs, by name in the fixture, in the order listed."""
    names = {v: k for k, v in runs.items() if k != "home"}
    found = []
    for option in run_box(at).options:
        found += [names[run_id] for run_id in names if run_id in option]
    return found


@pytest.mark.parametrize("page", ["compare", "inspect", "trust"])
def test_a_picker_lists_the_users_runs_and_side_runs_on_the_toggle(monkeypatch: pytest.MonkeyPatch,
                                                                   runs: dict[str, str], page: str) -> None:
    at = start_app(monkeypatch, runs["home"], PAGES[page], timeout=240)
    assert listed(at, runs) == ["u2", "u1"]  # newest first, no side run
    assert run_box(at).value == runs["u2"]  # the user's newest run, not the prompt test made after it
    at.toggle(key=SHOW_SIDE).set_value(True).run()
    assert_ok(at)
    assert listed(at, runs) == ["u2", "u1", "p1", "v", "t"]  # the probe under its base run, then the rest by kind
    probe = next(o for o in run_box(at).options if runs["p1"] in o)
    assert probe.startswith("↳ probe: paraphrase · ")
    run_box(at).set_value(runs["p1"]).run()
    assert_ok(at)
    at.toggle(key=SHOW_SIDE).set_value(False).run()  # off while a side run is shown: back to the user's newest
    assert_ok(at)
    assert listed(at, runs) == ["u2", "u1"] and run_box(at).value == runs["u2"]


def test_the_toggle_is_one_setting_for_every_page(monkeypatch: pytest.MonkeyPatch, runs: dict[str, str]) -> None:
    at = start_app(monkeypatch, runs["home"], PAGES["compare"], timeout=240)
    at.toggle(key=SHOW_SIDE).set_value(True).run()
    run_box(at).set_value(runs["p1"]).run()
    at.switch_page(PAGES["inspect"]).run()
    assert_ok(at)
    assert at.toggle(key=SHOW_SIDE).value is True and run_box(at).value == runs["p1"]
    assert listed(at, runs) == ["u2", "u1", "p1", "v", "t"]


def test_history_groups_side_runs_under_their_parent(monkeypatch: pytest.MonkeyPatch, runs: dict[str, str]) -> None:
    at = start_app(monkeypatch, runs["home"], PAGES["history"], timeout=240)
    table = at.dataframe[0].value
    assert list(table["run"]) == [runs["u2"], runs["u1"]]
    assert list(table["side"]) == ["", "1 side run(s)"]
    assert listed(at, runs) == ["u2", "u1"]
    at.toggle(key=SHOW_SIDE).set_value(True).run()
    assert_ok(at)
    table = at.dataframe[0].value
    assert list(table["run"]) == [runs[k] for k in ("u2", "u1", "p1", "v", "t")]
    assert list(table["side"]) == ["", "1 side run(s)", "↳ probe: paraphrase", "↳ vs people: v2", "↳ prompt test: judge"]
    # sorted the other way (runs made in the same second keep any order), a side run still sits under its parent
    at.selectbox(key="history.sort").set_value("created (UTC)").run()
    at.toggle(key="history.desc").set_value(False).run()
    order = list(at.dataframe[0].value["run"])
    assert order.index(runs["p1"]) == order.index(runs["u1"]) + 1 and order[-2:] == [runs["v"], runs["t"]]


def test_japanese_labels_of_side_runs(monkeypatch: pytest.MonkeyPatch, runs: dict[str, str]) -> None:
    at = start_app(monkeypatch, runs["home"], PAGES["compare"], timeout=240, locale="ja-JP")
    assert at.toggle(key=SHOW_SIDE).label == "サイドランも表示（3 件）"
    at.toggle(key=SHOW_SIDE).set_value(True).run()
    labels = [o for o in run_box(at).options if o.startswith("↳")]
    assert [o.split(" · ")[0] for o in labels] == ["↳ プローブ: paraphrase", "↳ 人との比較: v2", "↳ プロンプトの試行: judge"]
