"""Rubric and template versions in SQLite: save, list, load, dedupe, diff."""

import itertools
import threading

import pytest

from rageval_core.scoring.metrics.judge import JudgeScorer, judge_template
from rageval_core.scoring.rubric import Rubric, load_rubric
from rageval_core.store.rubric_versions import RubricStore, diff_text


@pytest.fixture
def store(tmp_path):
    ticks = itertools.count(1_700_000_000)
    return RubricStore(tmp_path / "db.sqlite", clock=lambda: float(next(ticks)))


def test_save_list_load_rubric_versions(store):
    base = load_rubric("rubric5", "ja")
    edited = base.with_level("faithfulness", 2, "裏付けのある主張は一部だけ")
    v1 = store.save_rubric(base, name="mine")
    v2 = store.save_rubric(edited, name="mine")
    assert (v1.id, v2.id) == (1, 2)
    assert v1.content_hash == base.content_hash and v2.content_hash == edited.content_hash
    assert Rubric.from_json(store.rubric_json(v2.id)) == edited
    assert [v.id for v in store.versions("rubric", name="mine")] == [2, 1]  # newest first
    assert store.latest("mine").id == 2
    assert v1.created_at_iso == "2023-11-14T22:13:20+00:00" and v2.created_at > v1.created_at
    assert "mine" in v2.label and v2.content_hash[:8] in v2.label
    assert store.find_by_hash(edited.content_hash[:12])[0].id == 2


def test_same_content_and_name_is_stored_once(store):
    rubric = load_rubric("binary", "en")
    first = store.save_rubric(rubric, name="b")
    assert store.save_rubric(rubric, name="b") == first
    unnamed = store.save_rubric(rubric)
    assert unnamed.id != first.id and unnamed.name is None
    assert store.save_rubric(rubric, name="  ") == unnamed  # blank name is no name
    assert len(store.versions("rubric")) == 2


def test_diff_of_two_rubric_versions_shows_the_edited_level(store):
    base = load_rubric("rubric5", "ja")
    a = store.save_rubric(base)
    b = store.save_rubric(base.with_level("faithfulness", 2, "裏付けのある主張は一部だけ"))
    diff = store.diff(a.id, b.id)
    assert diff.startswith(f"--- {a.label}\n+++ {b.label}\n@@")
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ['-        "2": "コンテキストで裏付けられる主張が少なく、コンテキスト外の情報が目立つ",']
    assert added == ['+        "2": "裏付けのある主張は一部だけ",']
    assert store.diff(a.id, a.id) == ""


def test_template_versions_round_trip_and_diff(store):
    shipped = judge_template("ja")
    t1 = store.save_template(shipped, name="judge-ja")
    assert t1.content_hash == shipped.sha256 and t1.subject == "ja/judge" and t1.language == "ja"
    edited_text = (shipped.source or "").replace("互いに独立して評価してください。", "独立して評価すること。")
    t2 = store.save_template(edited_text, name="judge-ja", language="ja")
    assert store.template_text(t2.id) == edited_text
    assert "+各観点は他の観点のスコアに引きずられないよう、独立して評価すること。" in store.diff(t1.id, t2.id)
    # a saved template is usable again as a raw template
    JudgeScorer(load_rubric("rubric5", "ja"), template=store.template_text(t2.id))
    with pytest.raises(ValueError, match="not a rubric"):
        store.rubric_json(t1.id)
    with pytest.raises(ValueError, match="not a template"):
        store.template_text(store.save_rubric(load_rubric("binary", "ja")).id)


def test_unknown_and_deleted_versions(store):
    v = store.save_rubric(load_rubric("binary-strict", "ja"), name="s")
    store.delete(v.id)
    with pytest.raises(KeyError, match="#1"):
        store.get(v.id)
    assert store.latest("s") is None


def test_versions_survive_a_new_store_and_other_threads(tmp_path):
    path = tmp_path / "db.sqlite"
    RubricStore(path).save_rubric(load_rubric("rubric5", "en"), name="en")
    seen = []
    thread = threading.Thread(target=lambda: seen.extend(RubricStore(path).versions()))
    thread.start()
    thread.join()
    assert [v.name for v in seen] == ["en"]


def test_diff_text_is_a_plain_unified_diff():
    assert diff_text("a\nb\n", "a\nc\n", "x", "y") == "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n+c"
