"""AppTest: the Prompts page's versions (issue 38 item 6) — their own tab with distinct labels, a name box that empties
once saved, the grid of versions × rows through a real OpenAI client and the local fake server (scores and reasons
side by side, the rows where the versions differ first, agreement beside them), and the recorded prompt loop that
shows its comparison on the first click."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.store.rubric_versions import RubricStore
from rageval_core.testing.fake_llm import FakeLLMServer
from rageval_ui import data, prompt_versions, versus_panel
from rageval_ui.i18n import catalogue
from tests.support.apptest import assert_ok, button, plain, set_kept, start_app

PROMPTS = "rageval_ui/app_pages/prompts.py"
STRICT = "厳しく判定してください。"
CRITERIA = ("faithfulness", "answer_relevancy", "context_precision", "answer_correctness")
pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home", PROMPTS, sample="ml_qa_ja.json")


def strict_judge(samples: Any, failing: set[str]) -> Any:
    """rubric5 answers: 5 on every criterion, except faithfulness 1 on ``failing`` rows when the prompt says STRICT."""
    by_answer = {s.answer: s.id for s in samples}

    def respond(request: Any) -> dict:
        row = next((sid for answer, sid in by_answer.items() if answer in request.prompt), None)
        strict = STRICT in request.prompt and row in failing
        out: dict[str, Any] = {}
        for c in CRITERIA:
            low = strict and c == "faithfulness"
            out[f"{c}_score"] = 1 if low else 5
            out[f"{c}_reason"] = "<b>根拠のない主張</b>" if low else "問題なし"
        return out

    return respond


def test_versions_have_their_own_tab_and_distinct_labels(app: AppTest) -> None:
    en = catalogue("en")
    assert [tab.label for tab in app.tabs] == [en["prompts.tab.edit"], en["prompts.tab.versions"], en["prompts.tab.versus"],
                                               en["prompts.tab.steps"]]
    labels = [w.label for w in app.text_input]
    assert len(labels) == len(set(labels)), labels  # two "Version name" boxes before
    assert {"Name of the new rubric or template version", "Name of the new step version"} <= set(labels)


def test_the_name_box_empties_once_a_version_is_saved(app: AppTest) -> None:
    app.text_input(key=prompt_versions.NAME).set_value("strict-v1").run()
    button(app, "Save rubric version").click().run()
    assert_ok(app)
    assert [v.name for v in RubricStore().versions("rubric")] == ["strict-v1"]
    assert app.text_input(key=prompt_versions.NAME).value == ""
    button(app, "Save template version").click().run()  # no name typed: saved unnamed, not under the last name
    assert [v.name for v in RubricStore().versions("template")] == [None]
    app.text_input(key="prompts.step_version_name").set_value("claims-v2").run()
    button(app, "Save step version").click().run()
    assert [v.name for v in RubricStore().versions("template") if v.name] == ["claims-v2"]
    assert app.text_input(key="prompts.step_version_name").value == ""


def test_the_grid_puts_versions_side_by_side_with_the_differing_rows_first(app: AppTest) -> None:
    ws: data.Workset = app.session_state["dataset"]
    pinned = sorted(app.session_state["pinned"], key=[s.id for s in ws.samples].index)
    failing = {pinned[1]}
    button(app, "Save rubric version").click().run()  # the preset as saved: "#1 rubric5"
    app.text_area(key="prompts.instructions").set_value(app.session_state["prompts.instructions"] + STRICT).run()
    assert_ok(app)
    with FakeLLMServer(responder=strict_judge(ws.samples, failing)) as server:
        app.sidebar.selectbox(key="w.provider").set_value("openai-compatible").run()
        set_kept(app, "w.base_url", server.openai_base_url)
        set_kept(app, "w.model", "fake-judge")
        app.run()
        assert app.multiselect(key=prompt_versions.PICK).value == ["editor", "rubric:1"]  # the newest saved version
        button(app, "Judge 3 rows with 2 versions").click().run()
        assert_ok(app)
        assert server.count("/chat/completions") == 6
    caption = next(c.value for c in app.caption if c.value.startswith("3 rows × 2 versions"))
    assert "editor: 3 sent, 0 from the cache" in caption and "#1 rubric5: 3 sent" in caption
    assert any("The versions differ on 1 of 12 row × criterion cells" in m.value for m in app.markdown)
    grid = next(d.value for d in app.dataframe if "differs" in d.value.columns)
    first = grid.iloc[0]
    assert (first["row"], first["criterion"], first["differs"]) == (pinned[1], "Faithfulness", "≠")
    assert (first["editor · score"], first["#1 rubric5 · score"]) == (0.0, 1.0)
    assert first["editor · reason"] == "<b>根拠のない主張</b>"  # a text cell: shown as text, never as HTML
    assert list(grid["differs"][1:]) == [""] * 11
    summary = next(d.value for d in app.dataframe if "rows that differ" in d.value.columns)
    assert set(summary["version"]) == {"editor", "#1 rubric5"} and summary["rows that differ"].max() == 1
    pairs = next(d.value for d in app.dataframe if "versions" in d.value.columns)
    assert "editor ↔ #1 rubric5" in set(pairs["versions"])
    # One criterion at a time.
    app.selectbox(key=prompt_versions.CRITERION).set_value("faithfulness").run()
    grid = next(d.value for d in app.dataframe if "differs" in d.value.columns)
    assert len(grid) == 3 and set(grid["criterion"]) == {"Faithfulness"}


def test_offline_the_grid_says_every_version_scores_alike(app: AppTest) -> None:
    assert any("every version scores alike" in w.value for w in app.warning)
    app.multiselect(key=prompt_versions.PICK).set_value(["editor"]).run()
    assert button(app, "Judge 3 rows with 1 versions").disabled  # two or more
    app.switch_page("rageval_ui/app_pages/dataset.py").run()
    app.switch_page(PROMPTS).run()
    assert app.multiselect(key=prompt_versions.PICK).value == ["editor"]  # the user's pick, kept across pages


def test_japanese_tabs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = start_app(monkeypatch, tmp_path / "home", PROMPTS, locale="ja-JP")
    assert at.multiselect(key=prompt_versions.PICK).value == ["editor", "preset:rubric5"]  # nothing saved yet
    assert [tab.label for tab in at.tabs][:2] == ["✏️ 評価基準とテンプレート", "🗂️ 版"]
    assert any(b.label == "2 つの版で 3 行を評価" for b in at.button)


def test_the_recorded_loop_shows_its_comparison_on_the_first_click(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = start_app(monkeypatch, tmp_path / "home", timeout=240)
    at.session_state["dataset"] = data.load_sample_file("trust_labelled.jsonl")
    at.switch_page(PROMPTS).run()
    demo = next(b for b in at.button if b.label.startswith("▶ Use the recorded prompt loop"))
    demo.click().run()
    assert_ok(at)
    tables = [d.value for d in at.dataframe if "tpr" in d.value.columns]
    assert tables, "no comparison after the first click"
    recorded = json.loads(versus_panel.DEMO.read_text(encoding="utf-8"))
    captions = [plain(c.value) for c in at.caption]
    assert len(tables[0]) == 3 and recorded["model"] in next(c for c in captions if c.startswith("**Recording**"))
    done = next(c for c in captions if c.startswith("10 dev rows"))
    assert "answered from the recording" in done and " sent" not in done  # not "10 sent" beside "replayed"
    assert not any("no calls are sent" in c for c in captions)
