"""The judge inside a whole run: the runner stores one result per criterion and records the rubric version."""

from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.rubric import load_rubric
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM
from tests.scoring.test_judge import scores_for, seed_samples


def test_run_with_judges_stores_every_criterion_and_rubric_hash(tmp_path):
    samples = seed_samples()[:4]
    store = Store(tmp_path / "db.sqlite")
    llm = ScriptedLLM(default=lambda r: scores_for(r, 5))
    judges = [JudgeScorer("rubric5"), JudgeScorer("binary"), JudgeScorer("binary-strict", per_criterion=True)]
    result = run_rows(samples, judges, llm, HashEmbedder(), store=store, concurrency=2)
    by_method = {}
    for r in result.results:
        by_method.setdefault(r.method, []).append(r)
    assert {m: len(rs) for m, rs in by_method.items()} == {
        "judge:rubric5": 4 * len(samples),
        "judge:binary": 2 * len(samples),
        "judge:binary-strict": 2 * len(samples),
    }
    assert all(r.value == 1.0 for r in result.results)
    assert len(llm.requests) == len(samples) * (1 + 1 + 2)
    stored = store.results(result.run_id)
    assert len(stored) == len(result.results)
    assert {r.details["rubric_hash"] for r in stored if r.method == "judge:binary"} == {load_rubric("binary", "ja").content_hash}
    assert sum(r.calls for r in stored) == len(llm.requests)  # each call counted once


def test_runs_record_an_unsaved_edited_rubric_so_two_runs_can_be_diffed(tmp_path, monkeypatch):
    from rageval_core.core.versions import version_changes
    from rageval_core.scoring.rubric import rubric_from_record
    from rageval_core.store.rubric_versions import diff_text

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    samples = seed_samples()[:2]
    store = Store(tmp_path / "db.sqlite")
    llm = ScriptedLLM(default=lambda r: scores_for(r, 4))
    shipped = load_rubric("rubric5", "ja").renamed("mine")
    edited = shipped.with_level("faithfulness", 2, "裏付けのある主張は一部だけ")
    runs = [run_rows(samples, [JudgeScorer(r)], llm, HashEmbedder(), store=store).run_id for r in (shipped, edited)]
    recorded = [store.get_run(run_id).versions["judge:mine"] for run_id in runs]
    rubrics = [rubric_from_record(v["rubric"]) for v in recorded]
    assert rubrics == [shipped, edited]  # the full rubric, not only its hash
    # Comparing the two runs' versions names the edited level, not two whole criterion lists.
    changes = version_changes(recorded[0], recorded[1])
    assert ("rubric.criteria.faithfulness.levels.2", shipped.criterion("faithfulness").levels[2], "裏付けのある主張は一部だけ") in changes
    assert {path for path, _, _ in changes} == {"rubric.criteria.faithfulness.levels.2", "rubrics.ja.rubric_hash"}
    assert recorded[1]["rubrics"]["ja"]["rubric_hash"] == edited.content_hash
    diff = diff_text(rubrics[0].to_json(), rubrics[1].to_json())
    assert '+        "2": "裏付けのある主張は一部だけ",' in diff.splitlines()
    # Shipped presets are named by their hash only.
    preset = run_rows(samples, [JudgeScorer("binary")], llm, HashEmbedder(), store=store).run_id
    assert "rubric" not in store.get_run(preset).versions["judge:binary"]
