"""AppTest: the Test set page with the offline provider — generate, edit, run the RAG, use as dataset."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.synth import SectionReport, TestItem, TestSet
from ui import testset as ts_ui
from tests.support.apptest import assert_ok as strict_assert_ok
from tests.support.apptest import button, metric, start_app


def assert_ok(at: AppTest) -> None:
    """No exception and no error message at all on this page."""
    strict_assert_ok(at, any_error=True)


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home", "app_pages/testset.py", timeout=90, any_error=True)


def test_generate_edit_rag_and_use_as_dataset_offline(app: AppTest) -> None:
    assert app.title[0].value.endswith("Test set")
    assert metric(app, "Document") == "company_policy_ja"
    assert metric(app, "Sections") == "8"
    picker = app.selectbox(key="testset.sample_choice")
    assert picker.value == "company_policy_ja.md" and "README.md" not in picker.options
    assert any("extractive" in i.value for i in app.info)

    app.number_input(key="testset.per_section").set_value(2)
    button(app, "Generate test set").click().run()
    assert_ok(app)
    testset = app.session_state[ts_ui.TESTSET]
    assert testset.offline and len(testset.items) >= 14
    assert any("offline heuristic" in c.value for c in app.caption)
    editor = app.data_editor[0]
    assert list(editor.value.columns) == list(ts_ui.EDIT_COLUMNS)
    assert "経費精算" in " ".join(editor.value["section"])

    # Edit one question and delete one row in the editor.
    n = len(testset.items)
    app.session_state[editor.key] = {"edited_rows": {0: {"question": "本書はどの会社の規程ですか？"}}, "added_rows": [], "deleted_rows": [1]}
    app.run()
    assert_ok(app)
    edited = app.session_state[ts_ui.TESTSET]
    assert len(edited.items) == n - 1
    assert edited.items[0].question == "本書はどの会社の規程ですか？" and edited.items[0].metadata["edited"] is True

    app.number_input(key="testset.k").set_value(2)
    button(app, "Run RAG").click().run()
    assert_ok(app)
    run = app.session_state[ts_ui.RAG_RUN]
    assert len(run.samples) == n - 1 and run.k == 2 and run.offline
    assert metric(app, "Answers") == str(n - 1)
    assert metric(app, "Retrieval hit rate").endswith("%")
    outputs = app.dataframe[-1].value
    assert list(outputs.columns[:4]) == ["id", "question", "answer", "ground_truth"]

    button(app, "Use as dataset").click().run()
    assert_ok(app)
    ws = app.session_state["dataset"]
    assert ws.name == "company_policy_ja-rag" and len(ws.samples) == n - 1
    assert all(len(s.contexts) == 2 and s.ground_truth and s.answer for s in ws.samples)
    assert ws.samples[0].metadata["retrieved_chunk_ids"] and ws.samples[0].category
    assert any("Loaded" in s.value for s in app.success)

    # The Dataset page shows the new rows.
    app.switch_page("app_pages/dataset.py").run()
    assert_ok(app)
    assert metric(app, "Dataset") == "company_policy_ja-rag"
    assert metric(app, "Valid rows") == str(n - 1)


def test_upload_an_english_markdown_document(app: AppTest) -> None:
    ws_before = app.session_state["dataset"].name
    doc = ts_ui.load_uploaded_document("guide.md", b"# Guide\n\n## Leave\n\nEmployees get 20 days of paid leave a year.\n")
    app.session_state[ts_ui.DOCUMENT] = doc
    app.run()
    assert metric(app, "Document") == "guide" and metric(app, "Language") == "en"
    button(app, "Generate test set").click().run()
    assert_ok(app)
    items = app.session_state[ts_ui.TESTSET].items
    assert items and "Leave" in items[0].question
    assert app.session_state["dataset"].name == ws_before  # nothing is loaded until "Use as dataset"


def test_apply_item_edits_adds_hand_written_rows_and_drops_blank_ones() -> None:
    ts = TestSet({"name": "d"}, {}, [SectionReport(0, "H", "ok")], [TestItem("s00-q01", "Q?", "A.", {"section": "H"})])
    frame = ts_ui.items_frame(ts)
    edits = {
        "edited_rows": {},
        "added_rows": [{"question": "New question?", "ground_truth": "New answer.", "section": "H"}, {"question": "no truth"}],
        "deleted_rows": [],
    }
    updated, dropped = ts_ui.apply_item_edits(ts, frame, edits)
    assert dropped == 1
    assert [(i.id, i.question, i.metadata.get("synthetic")) for i in updated.items] == [
        ("s00-q01", "Q?", None),
        ("added-01", "New question?", False),
    ]
    assert isinstance(ts_ui.report_frame(updated), pd.DataFrame)


def test_a_provider_without_a_key_is_explained_and_nothing_is_sent(app: AppTest) -> None:
    app.selectbox(key="w.provider").set_value("gemini").run()
    assert_ok(app)
    warnings = " ".join(w.value for w in app.warning)
    assert "GEMINI_API_KEY" in warnings
    assert button(app, "Generate test set").disabled
    assert ts_ui.TESTSET not in app.session_state


def test_an_edited_prompt_is_checked_before_anything_is_sent(app: AppTest) -> None:
    area = app.text_area(key="testset.synth_prompt.ja")
    assert "{heading}" in area.value and ts_ui.prompt_override(area.value, "synth_qa", "ja") is None
    area.set_value(area.value.replace("{heading}", "{headline}")).run()
    button(app, "Generate test set").click().run()
    assert not app.exception
    errors = " ".join(e.value for e in app.error)
    assert "Could not generate the test set" in errors and "headline" in errors
    assert ts_ui.TESTSET not in app.session_state
