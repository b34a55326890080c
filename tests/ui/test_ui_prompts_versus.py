"""AppTest: the Prompts page's "vs people" panel on the labelled sample — few-shot examples from train in the preview,
the edited rubric against a saved version on the dev rows (through a real HTTP client and the response cache), the
agreement of both versions and the paired difference; and the shipped recording replayed with no key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.analysis.trust.run_report import merged_labels
from rageval_core.data.datasets import load_dataset
from tests.support.apptest import ROOT, assert_ok, button, plain, start_app
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.people_judge import judge_like_people
from rageval_ui import data, versus_panel

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"
pytestmark = pytest.mark.timeout(600)  # bootstrap intervals on a loaded machine; a deadline, not a timing assertion


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    at = start_app(monkeypatch, tmp_path / "home", timeout=240)
    at.session_state["dataset"] = data.load_sample_file(LABELLED.name)
    at.session_state["pinned"] = {"t05"}
    at.switch_page("rageval_ui/app_pages/prompts.py").run()
    assert_ok(at)
    return at


def _start_from(at: AppTest, option: str) -> None:
    at.selectbox(key="prompts.start").set_value(option).run()
    button(at, "Load").click().run()
    assert_ok(at)


def _tables(at: AppTest) -> list:
    return [d.value for d in at.dataframe if "tpr" in d.value.columns]


def _insert_examples(at: AppTest) -> None:
    button(at, "Insert 2 example(s) from train").click().run()
    assert_ok(at)


def test_examples_from_train_reach_the_preview_and_offline_both_versions_score_alike(app: AppTest) -> None:
    _start_from(app, "preset:binary")
    assert any(c.value == "The rubric carries no examples." for c in app.caption)
    assert any(c.value.startswith("Label split (seed 0): train 10 · dev 20 · test 18") for c in app.caption)
    _insert_examples(app)
    shown = next(plain(c.value) for c in app.caption if plain(c.value).startswith("The rubric carries examples from rows"))
    assert "t16" in shown or "t04" in shown  # train rows (t02-t04, t06, t16 and their -en twins)
    assert "人が判定した例" in app.code[0].value  # the preview shows them, before the row being judged
    assert app.code[0].value.index("人が判定した例") < app.code[0].value.index("【質問】")
    app.selectbox(key=versus_panel.AGAINST).set_value("preset:binary").run()
    assert any("ignores prompt text" in plain(w.value) for w in app.warning)
    button(app, "Run both versions on 20 dev rows").click().run()  # both languages' dev rows
    assert_ok(app)
    faith, correct = _tables(app)
    assert list(faith["version"]) == ["binary (preset)", "editor", "new − old (paired)"]
    assert faith.iloc[2]["balanced_accuracy"] == "0.000 [0.000, 0.000]"  # the heuristic ignores the examples
    assert not any("in another language" in plain(i.value) for i in app.info)
    assert any("20 dev rows (each judged with the prompt of its language)" in plain(c.value) for c in app.caption)
    # each version passes at its own threshold calibrated on these dev rows, and says so
    assert all(v.endswith("calibrated on dev") for v in faith["threshold"][:2])
    assert any(plain(c.value).startswith("Each version passes at its own threshold calibrated on these dev rows") for c in app.caption)


def test_edit_run_on_dev_rows_and_see_both_versions_with_the_paired_difference(app: AppTest) -> None:
    """A saved version v1 against the edited rubric (two train examples inserted) on a model server."""
    ds = load_dataset(LABELLED)
    with FakeLLMServer(responder=judge_like_people(ds.samples, merged_labels(ds.samples, {}))) as server:
        app.sidebar.selectbox(key="w.provider").set_value("openai-compatible").run()
        app.text_input(key="w.base_url").set_value(server.openai_base_url).run()
        app.text_input(key="w.model").set_value("fake-judge").run()
        _start_from(app, "preset:binary")
        app.text_input(key="prompts.version_name").set_value("v1").run()
        button(app, "Save rubric version").click().run()
        _insert_examples(app)
        app.selectbox(key=versus_panel.AGAINST).set_value("version:1").run()  # the first saved version, in a fresh home
        button(app, "Run both versions on 20 dev rows").click().run()
        assert_ok(app)
        assert server.count("/chat/completions") == 40  # 10 ja + 10 en dev rows, two versions
        bodies = [json.dumps(r.body, ensure_ascii=False) for r in server.requests]
        assert sum("[Generated answer]" in b for b in bodies) == 20 and sum("【生成された回答】" in b for b in bodies) == 20
        faith = _tables(app)[0]
        old, new, diff = faith.iloc[0], faith.iloc[1], faith.iloc[2]
        assert old["version"].startswith("#1 v1") and new["version"] == "editor"
        assert old["balanced_accuracy"].startswith("0.500") and old["tnr"].startswith("0.000")
        assert new["balanced_accuracy"].startswith("1.000") and new["kappa"].startswith("1.000")
        assert diff["balanced_accuracy"].startswith("+0.500 [") and diff["tnr"].endswith("✱")
        assert any("sent" in plain(c.value) and "from the cache" in plain(c.value) for c in app.caption)

        button(app, "Run both versions on 20 dev rows").click().run()  # nothing edited: all from the cache
        assert server.count("/chat/completions") == 40
        assert any("editor: 0 sent, 20 from the cache" in plain(c.value) for c in app.caption)


RECORDING = versus_panel.DEMO


def test_the_recorded_loop_replays_both_versions_with_no_key(app: AppTest) -> None:
    recorded = json.loads(RECORDING.read_text(encoding="utf-8"))
    demo = next(b for b in app.button if b.label.startswith("▶ Use the recorded prompt loop"))
    assert recorded["model"] in plain(demo.label) and recorded["recorded_on"] in plain(demo.label)
    demo.click().run()
    assert_ok(app)
    assert app.session_state["w.provider"] == "replay"
    assert any(plain(c.value).startswith("**Recording**") for c in app.caption)
    assert "人が判定した例" in app.code[0].value  # v2, with its examples, is in the editor
    button(app, "Run both versions on 10 dev rows").click().run()  # the recording's Japanese dev rows
    assert_ok(app)
    faith = _tables(app)[0]
    recorded_unscored = [a["unscored_labelled"] for a in recorded["report"]["agreement"] if a["criterion"] == "faithfulness"]
    assert list(faith["unscored"][:2]) == recorded_unscored  # every request was in the recording: no replay_miss
    want = next(d for d in recorded["report"]["differences"] if d["criterion"] == "faithfulness")["auroc"]
    assert faith.iloc[2]["auroc"].startswith(f"{'+' if want['value'] > 0 else ''}{want['value']:.3f}")  # no threshold
    assert any("10 dev row(s) in another language" in plain(i.value) for i in app.info)  # the English rows: not recorded


def test_the_panel_follows_the_labelled_run_chosen_on_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loaded dataset has no labels; the run picked on the Trust page has: the panel uses its rows and split."""
    from rageval_core import cli

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    assert cli.main(["trust", str(LABELLED), "--metrics", "faithfulness", "--iterations", "20", "--quiet"]) == 0
    from rageval_core.store.runs import Store

    run_id = next(i.id for i in Store().list_runs() if not (i.settings or {}).get("probe"))
    at = start_app(monkeypatch, tmp_path / "home", timeout=240)
    at.session_state["dataset"] = data.load_sample_file("ml_qa_ja.json")  # no label columns
    at.switch_page("rageval_ui/app_pages/trust.py").run()
    assert_ok(at)
    assert at.session_state["trust.labelled_run"] == run_id
    at.switch_page("rageval_ui/app_pages/prompts.py").run()
    assert_ok(at)
    assert any(plain(c.value).startswith(f"Labelled rows, labels and split of run {run_id}") for c in at.caption)
    assert any(plain(c.value).startswith("Label split (seed 0): train 10 · dev 20 · test 18") for c in at.caption)
    assert not any("No human labels" in i.value for i in at.info)
    button(at, "Run both versions on 20 dev rows").click().run()
    assert_ok(at)
    assert _tables(at), "the versions were compared on the Trust run's dev rows"
