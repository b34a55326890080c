"""AppTest: the Test set page with the offline provider — generate, edit, run the RAG, use as dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.rag.synth import SectionReport, TestItem, TestSet
from rageval_ui import testset as ts_ui
from rageval_ui import your_rag as yr_ui
from tests.support.apptest import assert_ok as strict_assert_ok
from tests.support.apptest import button, metric, plain, start_app


def assert_ok(at: AppTest) -> None:
    """No exception and no error message at all on this page."""
    strict_assert_ok(at, any_error=True)


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/testset.py", timeout=90, any_error=True)


def test_generate_edit_rag_and_use_as_dataset_offline(app: AppTest) -> None:
    assert app.title[0].value.endswith("Test set")
    assert metric(app, "Document") == "company_policy_ja"
    assert metric(app, "Sections") == "8"
    picker = app.selectbox(key="testset.sample_choice")
    assert picker.value == "company_policy_ja.md" and "README.md" not in picker.options
    assert any("extractive" in plain(i.value) for i in app.info)

    app.number_input(key="testset.per_section").set_value(2)
    button(app, "Generate test set").click().run()
    assert_ok(app)
    testset = app.session_state[ts_ui.TESTSET]
    assert testset.offline and len(testset.items) >= 14
    assert any("offline heuristic" in plain(c.value) for c in app.caption)
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
    first = next(i for i in edited.items if i.id == editor.value["id"].iloc[0])  # the editor's row 0 (sorted for review)
    assert first.question == "本書はどの会社の規程ですか？" and first.metadata["edited"] is True

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
    assert any("Loaded" in plain(s.value) for s in app.success)

    # The Dataset page shows the new rows.
    app.switch_page("rageval_ui/app_pages/dataset.py").run()
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
    warnings = " ".join(plain(w.value) for w in app.warning)
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


# ---- question types, curation, your RAG -------------------------------------------------------------------
def test_question_types_flags_first_and_bulk_reject(app: AppTest) -> None:
    for qtype, pct in (("fact", 40), ("reasoning", 30), ("multi_chunk", 20), ("out_of_scope", 10)):
        app.number_input(key=f"testset.share.{qtype}").set_value(pct)
    app.number_input(key="testset.per_section").set_value(3).run()
    button(app, "Generate test set").click().run()
    assert_ok(app)
    ts = app.session_state[ts_ui.TESTSET]
    assert set(ts.counts()["type"]) == {"fact", "reasoning", "multi_chunk", "out_of_scope"}
    assert ts.generator["shares"] == {"fact": 0.4, "reasoning": 0.3, "multi_chunk": 0.2, "out_of_scope": 0.1}
    editor = app.data_editor[0].value
    assert set(editor["type"]) == {"Simple fact", "Reasoning", "Multi-chunk", "Out of scope"}  # names, not ids
    assert any("pairs in use" in plain(c.value) and "Reasoning" in plain(c.value) for c in app.caption)
    # reject every out-of-scope pair in bulk: they leave the pairs in use but stay in the file as rejected
    app.selectbox(key="testset.bulk_choice").set_value("type:out_of_scope").run()
    button(app, "Reject these").click().run()
    assert_ok(app)
    assert any("pair(s) rejected: all pairs of type “Out of scope”" in plain(s.value) for s in app.success)
    after = app.session_state[ts_ui.TESTSET]
    assert not any(i.question_type == "out_of_scope" for i in after.items)
    assert {i.question_type for i in after.rejected} == {"out_of_scope"}
    assert all(i.status == "rejected" for i in after.rejected)
    # a status changed in the table brings one back
    frame = app.data_editor[0].value
    row = frame.index[frame["status"] == "rejected"][0]
    app.session_state[app.data_editor[0].key] = {"edited_rows": {int(row): {"status": "accepted"}}, "added_rows": [], "deleted_rows": []}
    app.run()
    assert_ok(app)
    assert len(app.session_state[ts_ui.TESTSET].rejected) == len(after.rejected) - 1


def test_flagged_pairs_are_listed_first_with_duplicates_beside_their_twin() -> None:
    items = [
        TestItem("a", "Q1?", "A1.", {"status": "accepted", "flags": []}),
        TestItem("b", "Q2?", "A2.", {"status": "accepted", "flags": ["unsupported"], "flag_notes": {"unsupported": "low"}}),
    ]
    dup = TestItem("c", "Q1", "A1.", {"status": "rejected", "flags": ["near_duplicate"], "duplicate_of": "a"})
    ts = TestSet({"name": "d"}, {}, [SectionReport(0, "H", "ok")], items, [dup])
    frame = ts_ui.items_frame(ts)
    assert list(frame["id"]) == ["a", "c", "b"] and list(frame["twin"]) == ["", "a", ""]
    assert ts_ui.flag_notes(ts) == ["c: near_duplicate — ", "b: unsupported — low"]
    accepted, n = ts_ui.bulk(ts, "near_duplicate", "accepted")
    assert n == 1 and [i.id for i in accepted.items] == ["a", "b", "c"] and accepted.rejected == []
    edited, _ = ts_ui.apply_item_edits(ts, frame, {"edited_rows": {2: {"question": "Q2 better?"}}, "added_rows": [], "deleted_rows": []})
    assert edited.items[1].status == "edited" and edited.rejected[0].id == "c"


@pytest.fixture()
def rag_server():
    from tests.support.rag_server import RagServer

    srv = RagServer()
    yield srv
    srv.close()


def test_your_rag_tab_tries_one_question_and_answers_the_test_set(app: AppTest, rag_server, monkeypatch) -> None:
    monkeypatch.setenv("UI_RAG_TOKEN", "tok-ui-PLANTED-91")
    button(app, "Generate test set").click().run()
    assert_ok(app)
    app.text_input(key="testset.yr.url").set_value(rag_server.url)
    app.text_area(key="testset.yr.headers").set_value("Authorization: Bearer $UI_RAG_TOKEN").run()
    assert_ok(app)
    assert any("`$UI_RAG_TOKEN` set" in plain(c.value) for c in app.caption)
    button(app, "Try one question").click().run()
    assert_ok(app)
    shown = app.session_state[yr_ui.TRY]
    assert shown["ok"] and shown["reply"]["contexts"][0]["id"] == "c1"
    assert shown["read"]["contexts"] == ["第1条 この規程は全従業員に適用する。"] and shown["read"]["context_ids"] == ["c1"]
    assert "tok-ui-PLANTED-91" not in json.dumps(shown, ensure_ascii=False)  # the echoed token is scrubbed
    assert rag_server.requests[-1]["auth"] == "Bearer tok-ui-PLANTED-91"
    assert len(app.json) >= 2  # the raw reply and what the mapping read

    button(app, "Answer the test set with your system").click().run()
    assert_ok(app)
    run = app.session_state[yr_ui.RUN]
    n = len(app.session_state[ts_ui.TESTSET].items)
    assert len(run.samples) == n and run.errors == 0 and metric(app, "Answers") == str(n)
    assert metric(app, "Latency median").endswith(" s") and metric(app, "Latency p95").endswith(" s")
    button(app, "Use your system's answers as dataset").click().run()
    assert_ok(app)
    assert app.session_state["dataset"].name == "company_policy_ja-yours"


def test_your_rag_tab_refuses_a_literal_token_and_takes_a_callable(app: AppTest) -> None:
    button(app, "Generate test set").click().run()
    app.text_input(key="testset.yr.url").set_value("http://127.0.0.1:9/rag")
    app.text_area(key="testset.yr.headers").set_value("Authorization: Bearer sk-literal-123").run()
    assert not app.exception
    assert any("environment variable" in e.value for e in app.error)
    assert button(app, "Try one question").disabled
    app.radio(key="testset.yr.kind").set_value(yr_ui.CALLABLE).run()
    app.text_input(key="testset.yr.callable").set_value("tests.support.rag_server:policy_rag").run()
    button(app, "Try one question").click().run()
    assert_ok(app)
    assert app.session_state[yr_ui.TRY]["read"]["answer"].endswith("への回答です。")
    app.text_area(key="testset.yr.mapping").set_value('{"answer": "output.text"}').run()
    button(app, "Try one question").click().run()
    assert "malformed_response" in app.session_state[yr_ui.TRY]["error"]
    assert any("did not answer" in e.value for e in app.error)
