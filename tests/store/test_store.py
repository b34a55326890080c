"""The run store: runs, per-task results written atomically, the call log and human labels."""

import json
import sqlite3

import pytest

from rageval_core.store.runs import CallEntry, RowInfo, Store, rows_with_labels
from rageval_core.core.types import MetricResult, Usage


@pytest.fixture()
def store(tmp_path):
    return Store(tmp_path / "r.sqlite")


def test_run_round_trip_and_status(store):
    rid = store.create_run(
        scorers=["faithfulness", "judge:rubric5"],
        dataset_name="ml_qa_ja.json",
        dataset_hash="abc",
        versions={"judge:rubric5": {"rubric_hash": "h1"}},
        provider="openai",
        model="gpt-4o-mini",
        base_url="http://127.0.0.1:1/v1",
        settings={"concurrency": 4, "api_key": "sk-secret", "nested": {"OPENAI_API_KEY": "sk-2", "max_output_tokens": 9}},
        rows=[RowInfo("1", 0, "correct"), RowInfo("bad", 1, None, False, "missing answer")],
    )
    info = store.get_run(rid)
    assert info.status == "running" and info.n_rows == 1
    assert info.scorers == ["faithfulness", "judge:rubric5"]
    assert info.versions["judge:rubric5"]["rubric_hash"] == "h1"
    # Keys never reach the database, even if a caller passes one by mistake.
    assert "api_key" not in info.settings and info.settings["nested"] == {"max_output_tokens": 9}
    raw = open(store.path, "rb").read()
    assert b"sk-secret" not in raw and b"sk-2" not in raw
    store.set_status(rid, "done")
    assert store.get_run(rid).status == "done" and store.get_run(rid).finished_at is not None
    assert [r.sample_id for r in store.rows(rid)] == ["1", "bad"]
    assert store.rows(rid)[1].error == "missing answer"
    assert store.find_run(rid[:12]).id == rid
    with pytest.raises(ValueError):
        store.set_status(rid, "exploded")


def test_results_are_stored_per_task_and_replaced_on_rewrite(store):
    rid = store.create_run(scorers=["judge:rubric5"])
    first = [
        MetricResult("1", "faithfulness", "judge:rubric5", 1.0, reason="ok", raw_score=5, details={"raw": "{}"},
                     usage=Usage(10, 3), cost_usd=0.01, latency_s=0.2, calls=1),
        MetricResult("1", "answer_relevancy", "judge:rubric5", None, unscored_reason="parse_error"),
    ]
    store.save_task(rid, "1", "judge:rubric5", first)
    assert store.finished_tasks(rid) == {("1", "judge:rubric5")}
    assert store.results(rid) == first
    store.save_task(rid, "1", "judge:rubric5", first[:1])
    assert store.results(rid) == first[:1]


def test_call_log_and_labels(store):
    rid = store.create_run(scorers=["faithfulness"])
    store.log_call(CallEntry(rid, "1", "faithfulness", "decomposed", "extract_claims", "k1", prompt="p",
                             response="r", usage=Usage(5, 2), cost_usd=0.001, latency_s=0.2))
    store.log_call(CallEntry(rid, "1", "faithfulness", "decomposed", "extract_claims", "k1", cached=True))
    calls = store.calls(rid)
    assert [c.cached for c in calls] == [False, True] and calls[0].usage == Usage(5, 2)
    store.set_label("dh", "1", "faithfulness", 1)
    store.set_label("dh", "1", "faithfulness", 0, note="wrong year")
    store.set_label("dh", "2", "answer_correctness", 1)
    assert store.labels("dh") == {"1": {"faithfulness": 0}, "2": {"answer_correctness": 1}}
    store.set_label("dh", "2", "answer_correctness", None)
    assert store.labels("dh") == {"1": {"faithfulness": 0}}
    rows = rows_with_labels([{"id": 1, "question": "q"}, {"id": 3}], store.labels("dh"))
    assert rows[0]["human_labels"] == {"faithfulness": 0} and "human_labels" not in rows[1]


def test_list_and_delete_runs(store):
    a = store.create_run(scorers=["x"], run_id="run-a")
    b = store.create_run(scorers=["x"], run_id="run-b")
    assert {r.id for r in store.list_runs()} == {a, b}
    store.save_task(a, "1", "x", [MetricResult("1", "faithfulness", "decomposed", 0.5)])
    store.delete_run(a)
    assert store.get_run(a) is None and store.results(a) == []
    with pytest.raises(sqlite3.IntegrityError):
        store.create_run(scorers=["x"], run_id="run-b")
    assert json.loads(json.dumps(store.get_run(b).to_dict()))["id"] == "run-b"
