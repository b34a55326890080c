"""AppTest: labelling on Inspect (issue 38 item 5) — the chosen verdict coloured with a "saved" sign, 👍 / 👎 on a whole
row in one click (G / B), then on to the next unlabelled row; "next unlabelled row" (N) skips labelled rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.analysis.row_filter import next_unlabelled
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.store.runs import Store
from rageval_ui.labels import ADVANCE
from tests.support.apptest import ROOT, assert_ok, button, start_app
from tests.support.runs import run_rows

INSPECT = "rageval_ui/app_pages/inspect_sample.py"
CRITERIA = ["faithfulness", "answer_relevancy", "context_precision", "answer_correctness"]  # rubric5's


@pytest.fixture
def home(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The offline rubric5 judge on three rows of the English sample (four criteria a row)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
        done = run_rows(ds.samples[:3], [JudgeScorer("rubric5")], config=ProviderConfig(), dataset_name=ds.name,
                        dataset_digest=ds.content_hash)
        yield {"home": str(tmp_path / "home"), "run": done.run_id, "hash": ds.content_hash}


def inspect(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], row: str = "1-en", **kw) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False, timeout=240, **kw)
    at.session_state["selected_run"] = home["run"]
    at.session_state["inspect_sample"] = row
    at.switch_page(INSPECT).run()
    assert_ok(at)
    return at


def badges(at: AppTest) -> list[str]:
    """The verdict badges (st.badge is Markdown ":<colour>-badge[...]"), in criterion order."""
    return [m.value for m in at.markdown if "-badge[" in m.value]


def test_one_click_labels_the_whole_row_and_goes_on(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = inspect(monkeypatch, home)
    assert badges(at) == [":gray-badge[not labelled]"] * 4
    row_good = button(at, "👍 Whole row")
    assert (row_good.proto.shortcut, button(at, "👎 Whole row").proto.shortcut) == ("g", "b")  # shortcuts G and B (stored lower-case)
    row_good.click().run()
    assert_ok(at)
    assert Store().labels(home["hash"])["1-en"] == {c: 1.0 for c in CRITERIA}
    assert at.session_state["inspect_sample"] == "2-en"  # one click per row: the next unlabelled row is shown
    assert badges(at) == [":gray-badge[not labelled]"] * 4
    button(at, "👎 Whole row").click().run()
    assert Store().labels(home["hash"])["2-en"] == {c: 0.0 for c in CRITERIA}
    assert at.session_state["inspect_sample"] == "3-en"
    # Back on row 1: every verdict coloured and said to be saved.
    at.session_state["inspect_sample"] = "1-en"
    at.run()
    assert badges(at) == [":green-badge[:material/check_circle: 👍 good · saved]"] * 4
    # One thumb changed: that criterion turns red at once and says it was just saved.
    at.feedback[1].set_value(0).run()
    assert_ok(at)
    assert Store().labels(home["hash"])["1-en"]["answer_relevancy"] == 0.0
    assert badges(at)[1] == ":red-badge[:material/check_circle: 👎 bad · saved just now]"
    assert badges(at)[0] == ":green-badge[:material/check_circle: 👍 good · saved]"


def test_without_going_on_the_row_stays_and_shows_it_was_saved(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = inspect(monkeypatch, home)
    at.toggle(key=ADVANCE).set_value(False).run()
    button(at, "👎 Whole row").click().run()
    assert at.session_state["inspect_sample"] == "1-en"
    assert badges(at) == [":red-badge[:material/check_circle: 👎 bad · saved just now]"] * 4
    at.run()
    assert badges(at) == [":red-badge[:material/check_circle: 👎 bad · saved]"] * 4  # "just now" once


def test_next_unlabelled_row_skips_labelled_rows(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    store_home = home["home"]
    monkeypatch.setenv("RAGEVAL_HOME", store_home)
    for c in CRITERIA:
        Store().set_label(home["hash"], "2-en", c, 1.0)
    Store().set_label(home["hash"], "3-en", "faithfulness", 0.0)  # three criteria still to label
    at = inspect(monkeypatch, home)
    nxt = button(at, "⏭ Next unlabelled row")
    assert nxt.proto.shortcut == "n"
    nxt.click().run()
    assert at.session_state["inspect_sample"] == "3-en"
    button(at, "⏭ Next unlabelled row").click().run()
    assert at.session_state["inspect_sample"] == "1-en"  # wraps round to the first row (itself unlabelled)
    for row in ("1-en", "3-en"):
        for c in CRITERIA:
            Store().set_label(home["hash"], row, c, 1.0)
    button(at, "⏭ Next unlabelled row").click().run()
    assert at.session_state["inspect_sample"] == "1-en"
    assert any("Every scored row already has a label" in str(t.value) for t in at.toast)


def test_japanese_labels(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = inspect(monkeypatch, home, locale="ja-JP")
    assert badges(at) == [":gray-badge[未ラベル]"] * 4
    button(at, "👍 行全体").click().run()
    assert_ok(at)
    assert at.session_state["inspect_sample"] == "2-en"
    assert any(b.label == "⏭ 次の未ラベルの行" for b in at.button)


def test_next_unlabelled_in_order_with_wrap_round() -> None:
    order = ["a", "b", "c", "d"]
    criteria = {"a": ["f"], "b": ["f", "g"], "c": ["f"], "d": []}
    labels = {"a": {"f": 1.0}, "b": {"f": 0.0}, "c": {"f": None}}
    assert next_unlabelled(order, "a", criteria, labels) == "b"  # g missing
    assert next_unlabelled(order, "b", criteria, labels) == "c"  # a None label is no label
    assert next_unlabelled(order, "c", criteria, labels) == "b"  # d has no criteria; wraps round
    assert next_unlabelled(order, None, criteria, labels) == "b"
    assert next_unlabelled(order, "a", criteria, {**labels, "b": {"f": 0.0, "g": 1.0}, "c": {"f": 1.0}}) is None
    assert next_unlabelled([], None, criteria, labels) is None
