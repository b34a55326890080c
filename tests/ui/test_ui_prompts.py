"""AppTest: the Prompts & rubric page — table edits reach the prompt, placeholder checks, run on pinned rows,
saved versions and their diff."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.store.rubric_versions import RubricStore
from tests.support.apptest import assert_ok, button, plain, start_app


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/prompts.py", sample="ml_qa_ja.json")


def edit_levels(at: AppTest, row: int, text: str) -> None:
    key = next(d.key for d in at.data_editor if "levels_editor" in d.key)
    at.session_state[key] = {"edited_rows": {row: {"description": text}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert_ok(at)


def test_preset_loads_in_the_data_language_with_a_live_preview(app: AppTest) -> None:
    criteria = next(d for d in app.data_editor if "criteria_editor" in d.key).value
    assert list(criteria["id"]) == ["faithfulness", "answer_relevancy", "context_precision", "answer_correctness"]
    assert any(s.value.startswith("Rubric rubric5: 4 criteria") for s in app.success)
    assert any(s.value.startswith("Placeholders OK") for s in app.success)
    preview = app.code[0].value
    assert "あなたはRAGシステムの回答品質を評価する専門家です。" in preview
    assert "機械学習における過学習" in preview  # the first pinned row, filled in


def test_a_level_edit_changes_the_prompt_and_the_rubric_hash(app: AppTest) -> None:
    before = app.session_state["rubric"].content_hash
    edit_levels(app, 0, "全ての主張が完全に裏付けられる（編集済み）")
    assert app.session_state["rubric"].content_hash != before
    assert "（編集済み）" in app.code[0].value


def test_an_invalid_rubric_is_reported_not_raised(app: AppTest) -> None:
    edit_levels(app, 0, "")
    errors = " ".join(e.value for e in app.error)
    assert "describe every level" in errors and "faithfulness" in errors


def test_unknown_placeholder_is_named_before_any_call(app: AppTest) -> None:
    area = next(t for t in app.text_area if t.label.startswith("Raw template"))
    area.set_value(area.value.replace("{answer}", "{answr}")).run()
    assert_ok(app)
    errors = " ".join(plain(e.value) for e in app.error)
    assert "{answr}" in errors
    assert not any(b.label == "Run on pinned rows" for b in app.button)  # nothing can be sent


def test_run_on_pinned_rows_shows_results_below(app: AppTest) -> None:
    edit_levels(app, 0, "全ての主張が完全に裏付けられる（編集済み）")
    button(app, "Run on pinned rows").click().run()
    assert_ok(app)
    results = app.dataframe[-1].value
    assert set(results["row"]) == set(app.session_state["pinned"])
    assert len(results) == 3 * 4  # three pinned rows × four criteria
    assert {r.method for r in app.session_state["prompt_results"].results} == {"judge:rubric5-edited"}


def test_save_two_versions_and_diff_them(app: AppTest) -> None:
    app.text_input(key="prompts.rubric_id").set_value("rubric5-mine").run()
    button(app, "Save rubric version").click().run()
    edit_levels(app, 1, "ほぼ裏付けられる（第2版）")
    button(app, "Save rubric version").click().run()
    assert_ok(app)
    versions = RubricStore().versions("rubric")
    assert [v.subject for v in versions] == ["rubric5-mine", "rubric5-mine"]
    diff = next(c.value for c in app.code if c.language == "diff")  # in the Versions tab
    assert "+        \"4\": \"ほぼ裏付けられる（第2版）\"," in diff
    # The saved version is offered as a judge on Evaluate and as a starting point here.
    app.switch_page("rageval_ui/app_pages/evaluate.py").run()
    options = app.multiselect(key="evaluate.judges").options
    assert any("rubric5-mine" in o for o in options)


def test_a_template_without_rubric_placeholder_warns_that_level_edits_are_not_sent(app: AppTest) -> None:
    area = next(t for t in app.text_area if t.label.startswith("Raw template"))
    area.set_value(area.value.replace("{rubric}", "")).run()
    assert_ok(app)
    warnings = " ".join(plain(w.value) for w in app.warning)
    assert "no {rubric}" in warnings and "level descriptions" in warnings


def test_an_untouched_preset_runs_under_its_own_name_in_rubric_order(app: AppTest) -> None:
    """Loading a preset into the tables and back must not turn it into an "edited" rubric."""
    button(app, "Run on pinned rows").click().run()
    assert_ok(app)
    result = app.session_state["prompt_results"]
    assert {r.method for r in result.results} == {"judge:rubric5"}
    first_row = app.dataframe[-1].value.head(4)
    assert list(first_row["criterion"]) == ["Faithfulness", "Answer Relevancy", "Context Precision", "Answer Correctness"]
    app.switch_page("rageval_ui/app_pages/evaluate.py").run()
    assert not any("(edited)" in o for o in app.multiselect(key="evaluate.judges").options)


def test_the_preset_follows_the_data_language_and_an_edited_rubric_warns(app: AppTest) -> None:
    def load_english() -> None:
        app.switch_page("rageval_ui/app_pages/dataset.py").run()
        next(s for s in app.selectbox if s.label == "Sample dataset").set_value("ml_qa_en.json")
        button(app, "Load sample").click().run()
        app.switch_page("rageval_ui/app_pages/prompts.py").run()
        assert_ok(app)

    load_english()  # untouched preset: reloaded in English, no mixed-language prompt
    assert app.session_state["rubric"].language == "en"
    assert "あなたは" not in app.code[0].value
    # An edited Japanese rubric is kept, with a warning that the prompt mixes languages.
    app.switch_page("rageval_ui/app_pages/dataset.py").run()
    next(s for s in app.selectbox if s.label == "Sample dataset").set_value("ml_qa_ja.json")
    button(app, "Load sample").click().run()
    app.switch_page("rageval_ui/app_pages/prompts.py").run()
    assert app.session_state["rubric"].language == "ja"
    edit_levels(app, 0, "全ての主張が完全に裏付けられる（編集済み）")
    load_english()
    assert app.session_state["rubric"].language == "ja"
    assert any("mixes languages" in plain(w.value) for w in app.warning)


def step_area(at: AppTest):
    return next(a for a in at.text_area if a.key.startswith("prompts.step_text."))


def test_a_step_template_is_edited_checked_previewed_run_and_versioned(app: AppTest) -> None:
    """Claim extraction edited like the judge's template: check, preview on a row, run on pinned rows (the
    edit changes the request key), save versions and diff them, back to the shipped text."""
    from rageval_core.store.runs import Store

    app.selectbox(key="prompts.step").set_value("extract_claims").run()
    area = step_area(app)
    shipped = area.value
    assert area.key.startswith("prompts.step_text.ja/extract_claims")
    assert any(plain(s.value).startswith("Step placeholders OK") and "{answer}" in plain(s.value) for s in app.success)
    preview = next(c.value for c in app.code if "機械学習における過学習" in c.value and "あなたはRAG" not in c.value)
    assert preview  # the step's own prompt, filled with the preview row

    # An unknown placeholder is named before any call.
    step_area(app).set_value(shipped + "\n{rubric}").run()
    assert_ok(app)
    assert any("unknown placeholder {rubric}" in plain(e.value) for e in app.error)
    button_label = "Run this step's metrics on the 3 pinned rows"
    assert button(app, button_label).disabled  # no run with an invalid template

    # A valid edit: preview shows it, the run sends it, and its request keys differ from the shipped template's.
    step_area(app).set_value(shipped.replace("{answer}", "（編集済みの指示）\n{answer}", 1)).run()
    assert_ok(app)
    assert any("（編集済みの指示）" in c.value for c in app.code)
    assert app.session_state["prompts.step_templates"].keys() == {"ja/extract_claims"}
    button(app, button_label).click().run()
    assert_ok(app)
    task, edited_run = app.session_state["prompts.step_results"]
    assert task == "extract_claims" and {r.metric for r in edited_run.results} == {"faithfulness", "answer_correctness"}
    edited_keys = {c.request_key for c in Store().calls(edited_run.run_id) if c.task == "extract_claims"}
    edited_prompts = [c.prompt for c in Store().calls(edited_run.run_id) if c.task == "extract_claims"]
    assert edited_keys and all("（編集済みの指示）" in p for p in edited_prompts)

    # Versions: save the edit, diff it against the editor after a further change.
    app.text_input(key="prompts.step_version_name").set_value("claims-v2").run()
    button(app, "Save step version").click().run()
    versions = RubricStore().versions("template", subject="ja/extract_claims")
    assert [v.name for v in versions] == ["claims-v2"]
    step_area(app).set_value(step_area(app).value + "\n短く。").run()
    diff = next(c.value for c in app.code if c.language == "diff" and "短く。" in c.value)
    assert "+短く。" in diff

    # Back to the shipped template: no edit left, and a run now sends other request keys.
    button(app, "Back to the shipped template").click().run()
    assert_ok(app)
    assert step_area(app).value == shipped and "ja/extract_claims" not in app.session_state["prompts.step_templates"]
    button(app, button_label).click().run()
    _, shipped_run = app.session_state["prompts.step_results"]
    shipped_keys = {c.request_key for c in Store().calls(shipped_run.run_id) if c.task == "extract_claims"}
    assert shipped_keys and shipped_keys.isdisjoint(edited_keys)


def test_evaluate_runs_with_the_edited_step_template(app: AppTest) -> None:
    from rageval_core.store.runs import Store

    app.selectbox(key="prompts.step").set_value("extract_claims").run()
    step_area(app).set_value(step_area(app).value.replace("{answer}", "（評価でも使う）\n{answer}", 1)).run()
    app.switch_page("rageval_ui/app_pages/evaluate.py").run()
    assert_ok(app)
    assert any("ja/extract_claims" in plain(c.value) for c in app.caption)
    button(app, "Start evaluation").click().run()
    job = app.session_state["job"]
    assert job.wait(180)
    prompts = [c.prompt for c in Store().calls(job.run_id) if c.task == "extract_claims"]
    assert prompts and all("（評価でも使う）" in p for p in prompts)
    assert "ja/extract_claims" in (Store().get_run(job.run_id).versions or {}).get("_edited_templates", [])
