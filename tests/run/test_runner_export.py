"""Exports: the documented JSON keys, the wide CSV and the call log as JSON Lines."""

import csv
import io
import json

import pytest

from rageval_core.analysis.export import export_run, run_to_csv, run_to_dict
from rageval_core.store.runs import CallEntry, RowInfo, Store
from rageval_core.core.types import MetricResult, Usage

J = "judge:rubric5"


@pytest.fixture()
def stored(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid = store.create_run(
        scorers=["faithfulness", J], dataset_name="d.json", dataset_hash="h", provider="openai", model="gpt-4o-mini",
        rows=[RowInfo("1", 0, "correct"), RowInfo("2", 1, "partial"), RowInfo("7", 2, None, False, "answer missing")],
    )
    store.save_task(rid, "1", "faithfulness", [MetricResult("1", "faithfulness", "decomposed", 1.0, details={"claims": ["a"]})])
    store.save_task(rid, "2", "faithfulness", [MetricResult("2", "faithfulness", "decomposed", None, unscored_reason="no_claims")])
    store.save_task(rid, "1", J, [MetricResult("1", "faithfulness", J, 0.75, reason="根拠あり", raw_score=4)])
    store.log_call(CallEntry(rid, "1", J, J, "judge", "k", prompt="p", response="{}", usage=Usage(3, 1)))
    store.set_status(rid, "done")
    return store, rid


def test_json_export_has_the_contract_keys(stored, tmp_path):
    store, rid = stored
    data = json.loads(export_run(store, rid, tmp_path / "out.json").read_text(encoding="utf-8"))
    assert {"run_id", "provider", "model", "rows", "summary"} <= set(data)
    assert (data["run_id"], data["provider"], data["model"]) == (rid, "openai", "gpt-4o-mini")
    assert [row["id"] for row in data["rows"]] == ["1", "2"]
    first = data["rows"][0]["results"]
    assert {"metric", "method", "value", "unscored_reason", "reason"} <= set(first[0])
    assert [(r["method"], r["value"], r["reason"]) for r in first] == [("decomposed", 1.0, None), (J, 0.75, "根拠あり")]
    unscored = data["rows"][1]["results"][0]
    assert unscored["value"] is None and unscored["unscored_reason"] == "no_claims"
    assert data["invalid_rows"] == [{"id": "7", "position": 2, "error": "answer missing"}]
    assert data["summary"]["decomposed"]["faithfulness"]["unscored"] == 1
    assert data["cost"][J]["calls"] == 1
    assert "details" not in first[0] and run_to_dict(store, rid, include_details=True)["rows"][0]["results"][0]["details"] == {"claims": ["a"]}


def test_csv_has_a_column_per_metric_and_method(stored):
    store, rid = stored
    rows = list(csv.DictReader(io.StringIO(run_to_csv(store, rid))))
    assert [r["id"] for r in rows] == ["1", "2", "7"]
    assert rows[0]["decomposed/faithfulness"] == "1.0" and rows[0][f"{J}/faithfulness"] == "0.75"
    assert rows[1]["decomposed/faithfulness"] == "" and rows[1]["decomposed/faithfulness/unscored"] == "no_claims"
    assert rows[2]["row_error"] == "answer missing"


def test_call_log_jsonl_and_unknown_format(stored, tmp_path):
    store, rid = stored
    lines = export_run(store, rid, tmp_path / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[0])
    assert len(lines) == 1 and entry["scorer"] == J and entry["usage"]["input_tokens"] == 3 and entry["cached"] is False
    with pytest.raises(ValueError, match="unknown export format"):
        export_run(store, rid, tmp_path / "x.xlsx")


def test_labelled_dataset_export_only_on_request(tmp_path):
    from rageval_core.data.datasets import load_dataset
    from rageval_core.analysis.export import export_labelled_dataset

    src = tmp_path / "d.json"
    src.write_text(json.dumps([{"id": "1", "question": "q?", "contexts": ["c"], "answer": "a", "ground_truth": "g"},
                               {"id": "2", "question": "q2?", "contexts": ["c"], "answer": "b"}]), encoding="utf-8")
    ds = load_dataset(src)
    store = Store(tmp_path / "r.sqlite")
    store.set_label(ds.content_hash, "1", "faithfulness", 0)
    assert load_dataset(src).content_hash == ds.content_hash  # labelling never touches the file
    out = export_labelled_dataset(store, ds.samples, ds.content_hash, tmp_path / "labelled.json")
    again = load_dataset(out)
    assert again.samples[0].metadata["human_labels"] == {"faithfulness": 0}
    assert "human_labels" not in again.samples[1].metadata


def test_results_and_csv_columns_have_a_fixed_order_whatever_finished_first(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid = store.create_run(scorers=["answer_correctness", "faithfulness", "judge:binary", J], rows=[RowInfo("1", 0)])
    # written in completion order: a judge first, metrics out of the standard order
    store.save_task(rid, "1", J, [MetricResult("1", "answer_relevancy", J, 1.0), MetricResult("1", "faithfulness", J, 0.5)])
    store.save_task(rid, "1", "judge:binary", [MetricResult("1", "faithfulness", "judge:binary", 1.0)])
    store.save_task(rid, "1", "answer_correctness", [MetricResult("1", "answer_correctness", "decomposed", 0.25)])
    store.save_task(rid, "1", "faithfulness", [MetricResult("1", "faithfulness", "decomposed", 0.75)])
    order = [(r["method"], r["metric"]) for r in run_to_dict(store, rid)["rows"][0]["results"]]
    assert order == [
        ("decomposed", "faithfulness"), ("decomposed", "answer_correctness"),
        ("judge:binary", "faithfulness"), (J, "faithfulness"), (J, "answer_relevancy"),
    ]
    header = run_to_csv(store, rid).splitlines()[0].split(",")
    assert header[:5] == ["id", "category", "row_error", "question", "answer"]
    assert [h for h in header if not h.endswith(("/unscored", "/reason"))][5:] == [f"{m}/{x}" for m, x in order]
