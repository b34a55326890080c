"""AppTest: the router, the sidebar and the Dataset page with the offline provider (state in a tmp RAGEVAL_HOME)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_ui import nav
from rageval_ui.i18n import LANG, catalogue
from tests.support.apptest import assert_ok, button, metric, plain, start_app


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home")


def test_first_page_shows_the_seed_dataset_with_the_offline_provider(app: AppTest) -> None:
    """No browser language (AppTest sends none): English, and the landing dataset is the English sample."""
    assert app.title[0].value.endswith("Dataset")
    assert app.sidebar.radio(key=LANG).value == "en"
    assert metric(app, "Dataset") == "ml_qa_en"
    assert metric(app, "Valid rows") == "12"
    assert metric(app, "Detected language") == "English (en)"
    assert metric(app, "Pinned for quick runs") == "3"
    assert app.selectbox(key="w.provider").value == "offline"
    notices = " ".join(plain(i.value) for i in app.sidebar.info)
    assert "heuristic, ignores prompt text" in notices
    table = app.data_editor[0].value
    assert "overfitting" in table.loc[0, "question"]


def test_the_primary_button_is_the_next_step_of_the_tour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38 item 2: on the Japanese sample the recording's button is offered too, but it is not the primary one."""
    app = start_app(monkeypatch, tmp_path / "home", locale="ja-JP")
    primary = [b for b in app.button if b.proto.type == "primary"]
    assert [b.label for b in primary] == [catalogue("ja")["tour.next"].format(page=catalogue("ja")["nav.prompts"])]
    assert any(b.key == "demo.use.dataset" and b.proto.type == "secondary" for b in app.button)
    primary[0].click().run()
    assert_ok(app)
    assert app.title[0].value == f"{nav.PROMPTS.icon} {catalogue('ja')['nav.prompts']}"


@pytest.mark.parametrize(("locale", "language", "sample", "first_question"), [
    ("ja-JP", "ja", "ml_qa_ja", "過学習"), ("ja", "ja", "ml_qa_ja", "過学習"), ("en-US", "en", "ml_qa_en", "overfitting"),
    ("fr-FR", "en", "ml_qa_en", "overfitting"),
])
def test_the_browser_language_picks_the_ui_language_and_the_landing_dataset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, locale: str, language: str, sample: str, first_question: str) -> None:
    app = start_app(monkeypatch, tmp_path / "home", locale=locale)
    assert app.sidebar.radio(key=LANG).value == language
    assert metric(app, catalogue(language)["nav.dataset"]) == sample
    assert first_question in app.data_editor[0].value.loc[0, "question"]  # the rows reach the editor unchanged
    assert len(app.session_state["pinned"]) == 3


def test_the_landing_dataset_follows_the_language_switch_until_the_user_picks_data(app: AppTest) -> None:
    app.sidebar.radio(key=LANG).set_value("ja").run()
    assert_ok(app)
    assert metric(app, "データセット") == "ml_qa_ja"
    app.sidebar.radio(key=LANG).set_value("en").run()
    assert metric(app, "Dataset") == "ml_qa_en"
    app.selectbox[0].set_value("labelled_mini_ja.jsonl")
    button(app, "Load sample").click().run()
    app.sidebar.radio(key=LANG).set_value("ja").run()
    assert metric(app, "データセット") == "labelled_mini_ja"  # the user's choice stays
    app.sidebar.radio(key=LANG).set_value("en").run()
    app.selectbox[0].set_value("ml_qa_en.json")
    button(app, "Load sample").click().run()
    app.sidebar.radio(key=LANG).set_value("ja").run()
    assert metric(app, "データセット") == "ml_qa_en"  # picked by the user, even though it is the landing file


def test_editing_a_row_revalidates_and_names_row_and_field(app: AppTest) -> None:
    key = app.data_editor[0].key
    app.session_state[key] = {"edited_rows": {1: {"question": ""}}, "added_rows": [], "deleted_rows": []}
    app.run()
    assert_ok(app)
    assert metric(app, "Valid rows") == "11"
    dataset = next(m for m in app.metric if m.label == "Dataset")
    assert (dataset.value, dataset.delta) == ("ml_qa_en", "edited in the table")
    report = app.dataframe[0].value  # the validation report is the first read-only table
    bad = report[report["severity"] == "error"].iloc[0]
    assert (bad["row"], bad["field"]) == (2, "question")
    assert "ml_qa_en" in bad["file"]


def test_pinning_in_the_table_updates_the_quick_run_rows(app: AppTest) -> None:
    key = app.data_editor[0].key
    before = set(app.session_state["pinned"])
    target = next(i for i in range(12) if f"{i + 1}-en" not in before)
    app.session_state[key] = {"edited_rows": {target: {"📌": True}}, "added_rows": [], "deleted_rows": []}
    app.run()
    assert set(app.session_state["pinned"]) == before | {f"{target + 1}-en"}
    assert metric(app, "Dataset") == "ml_qa_en"  # pinning is not a data edit
    button(app, "Clear pins").click().run()
    assert metric(app, "Pinned for quick runs") == "0"


def test_upload_with_a_bad_row_lists_it_and_loads_the_rest(app: AppTest) -> None:
    rows = [
        {"id": "a", "question": "What is RAG?", "contexts": ["RAG retrieves documents."], "answer": "It retrieves."},
        {"id": "b", "contexts": ["no question here"], "answer": "x"},
        {"id": "c", "question": "Plain string contexts?", "contexts": "one passage", "answer": "Yes it is."},
    ]
    payload = "\n".join(json.dumps(r) for r in rows).encode("utf-8")
    app.file_uploader[0].upload("mine.jsonl", payload, "application/json")
    app.run()
    assert_ok(app)
    assert metric(app, "Dataset") == "mine"
    assert metric(app, "Valid rows") == "2"
    assert metric(app, "Detected language") == "English (en)"
    report = app.dataframe[0].value
    error = report[report["severity"] == "error"].iloc[0]
    assert (error["file"], error["row"], error["field"]) == ("mine.jsonl", 2, "question")
    warning = report[report["severity"] == "warning"].iloc[0]
    assert (warning["row"], warning["field"]) == (3, "contexts")
    assert "Validation: 2 valid rows, 1 error, 1 warning." in [e.value for e in app.error]
    # The sample picker no longer claims a shipped file is loaded.
    picker = next(s for s in app.selectbox if s.label == "Sample dataset")
    assert picker.value is None
    assert button(app, "Load sample").disabled


def test_loading_another_sample_file(app: AppTest) -> None:
    app.selectbox[0].set_value("ml_qa_ja.json")
    button(app, "Load sample").click().run()
    assert metric(app, "Dataset") == "ml_qa_ja"
    assert metric(app, "Detected language") == "Japanese (ja)"


def test_a_provider_without_a_key_says_what_to_set_without_a_traceback(app: AppTest) -> None:
    app.selectbox(key="w.provider").set_value("gemini").run()
    assert_ok(app)
    warnings = " ".join(plain(w.value) for w in app.sidebar.warning)
    assert "GEMINI_API_KEY" in warnings and "API key" in warnings
    assert not app.sidebar.info  # the offline notice is gone
    assert app.text_input(key="w.embedding_model").placeholder == "gemini-embedding-001"
    key_field = app.text_input(key="w.api_key")
    key_field.set_value("sk-test-not-a-real-key").run()
    assert not app.sidebar.warning
    assert "sk-test" not in "".join(plain(m.value) for m in app.markdown)


def test_human_labels_are_exported_only_on_request(app: AppTest) -> None:
    from rageval_core.store.runs import Store
    from rageval_ui import data

    ws = app.session_state["dataset"]
    plain = json.loads(data.download_bytes(ws, "json"))
    assert all("human_labels" not in row for row in plain)
    Store().set_label(ws.content_hash, "4-en", "faithfulness", 0.0)
    app.run()
    assert any(b.label == "JSON + 1 human label" for b in app.get("download_button"))
    labelled = {row["id"]: row for row in json.loads(data.download_with_labels(ws))}
    assert labelled["4-en"]["human_labels"] == {"faithfulness": 0.0}
    assert "human_labels" not in labelled["1-en"]


def test_each_provider_keeps_its_own_fields_for_the_session(app: AppTest) -> None:
    """Switching to offline and back keeps the key; a key typed for OpenAI is never shown to Gemini."""
    app.selectbox(key="w.provider").set_value("openai").run()
    app.text_input(key="w.api_key").set_value("sk-openai-only").run()
    app.text_input(key="w.model").set_value("gpt-4o").run()
    app.selectbox(key="w.provider").set_value("offline").run()
    app.run()
    app.selectbox(key="w.provider").set_value("gemini").run()
    assert_ok(app)
    assert app.text_input(key="w.api_key").value == ""
    assert any("GEMINI_API_KEY" in plain(w.value) for w in app.sidebar.warning)
    app.selectbox(key="w.provider").set_value("openai").run()
    assert (app.text_input(key="w.api_key").value, app.text_input(key="w.model").value) == ("sk-openai-only", "gpt-4o")
