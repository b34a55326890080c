"""A stored run's results as Phoenix span annotations (no server: what would be sent), and the pull's time window
and link template. The round trip against a real Phoenix is tests/e2e/test_phoenix_round_trip.py."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from rageval_core.analysis.phoenix_push import run_annotations
from rageval_core.core.types import MetricResult, Sample
from rageval_core.data.phoenix.client import PhoenixClient, Project
from rageval_core.data.phoenix.config import DEFAULT_LINK, PhoenixError, normalize_url
from rageval_core.data.phoenix.pull import fill_link, parse_when
from rageval_core.store.runs import RowInfo, Store

KEY = "phxKeyValue-LEAKCHECK-8812q"


def _store(tmp_path: Path) -> tuple[Store, str]:
    store = Store(tmp_path / "runs.sqlite")
    run = store.create_run(
        scorers=["faithfulness", "judge:rubric5"], provider="offline", model="heuristic-v4",
        settings={"calibrated_thresholds": {"faithfulness|decomposed": {"threshold": 0.6, "chosen_on": "dev"},
                                            "faithfulness|judge:rubric5@gpt": {"threshold": 0.5}}},
        rows=[RowInfo("t1", 0), RowInfo("row-2", 1)])
    store.save_task(run, "t1", "faithfulness", [
        MetricResult("t1", "faithfulness", "decomposed", 0.8, reason="2 of 2 claims supported")])
    store.save_task(run, "row-2", "faithfulness", [
        MetricResult("row-2", "faithfulness", "decomposed", 0.4, reason=f"claim 1 unsupported; key {KEY}")])
    store.save_task(run, "t1", "judge:rubric5", [
        MetricResult("t1", "answer_correctness", "judge:rubric5", None, unscored_reason="missing_field",
                     reason="answer_correctness needs ground_truth"),
        MetricResult("t1", "faithfulness", "judge:rubric5", 0.25, reason="mostly unsupported", provider="openai",
                     model="gpt-4o-mini", details={"judge": "gpt"})])
    return store, run


def test_each_result_is_an_annotation_named_metric_method_with_the_calibrated_verdict(tmp_path: Path) -> None:
    from rageval_core.core import redact

    redact.remember(KEY)
    store, run = _store(tmp_path)
    samples = {"row-2": Sample("row-2", "q", ("c",), "a", metadata={"trace_id": "abc123"})}
    got = {(a.sample_id, a.name): a for a in run_annotations(store, run, samples=samples)}
    assert sorted(got) == [("row-2", "faithfulness·decomposed"), ("t1", "answer_correctness·judge:rubric5"),
                           ("t1", "faithfulness·decomposed"), ("t1", "faithfulness·judge:rubric5")]
    passed, failed = got[("t1", "faithfulness·decomposed")], got[("row-2", "faithfulness·decomposed")]
    assert (passed.score, passed.label, passed.annotator_kind, passed.trace_id) == (0.8, "pass", "CODE", "t1")
    assert (failed.score, failed.label, failed.trace_id) == (0.4, "fail", "abc123")  # the row's trace_id, not its id
    assert KEY not in str(failed.payload("s1")) and "***" in (failed.explanation or "")
    assert passed.metadata["threshold"] == 0.6 and passed.metadata["threshold_source"] == "calibrated on dev"
    unscored = got[("t1", "answer_correctness·judge:rubric5")]
    assert (unscored.score, unscored.label) == (None, "unscored")
    assert unscored.explanation == "unscored: missing_field — answer_correctness needs ground_truth"
    judged = got[("t1", "faithfulness·judge:rubric5")]  # a named judge configuration: its own identifier, model's kind
    assert (judged.label, judged.annotator_kind, judged.identifier) == ("fail", "LLM", "rageval:gpt")
    assert passed.identifier == "rageval" and passed.payload("s1") == {
        "span_id": "s1", "name": "faithfulness·decomposed", "annotator_kind": "CODE",
        "result": {"score": 0.8, "label": "pass", "explanation": "2 of 2 claims supported"},
        "identifier": "rageval", "metadata": passed.metadata}


def test_without_a_calibrated_threshold_there_is_no_label(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.sqlite")
    run = store.create_run(scorers=["faithfulness"], provider="replay", model="m", rows=[RowInfo("t1", 0)])
    store.save_task(run, "t1", "faithfulness", [MetricResult("t1", "faithfulness", "decomposed", 0.9, reason="ok")])
    (only,) = run_annotations(store, run, samples={})
    assert (only.label, only.annotator_kind, only.trace_id) == (None, "LLM", "t1")  # replay: recorded model answers


def test_time_bounds_and_link_templates() -> None:
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    assert parse_when("24h", now) == datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    assert parse_when("2w", now) == datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    assert parse_when("2026-12-01", now) == datetime(2026, 12, 1, tzinfo=UTC)  # no offset: UTC, as Phoenix reads it
    assert parse_when("2026-12-01T09:00:00+09:00", now) == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    assert parse_when("", now) is None
    with pytest.raises(PhoenixError, match="'yesterday' is neither a duration"):
        parse_when("yesterday", now)
    project = Project("UHJvamVjdDoy", "rag app")
    assert fill_link(DEFAULT_LINK, url="http://h:6006", project=project) == "http://h:6006/projects/UHJvamVjdDoy/traces/{trace_id}"
    assert fill_link("https://lf/project/{project}/traces/{trace_id}", url="x", project=project) == \
        "https://lf/project/rag%20app/traces/{trace_id}"
    assert fill_link(None, url="x", project=project) is None
    with pytest.raises(PhoenixError, match="no {trace_id} placeholder"):
        fill_link("http://h/x", url="x", project=project)


def test_server_urls_and_the_key_come_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from rageval_core.core import redact

    assert normalize_url("http://127.0.0.1:6006/v1/traces/") == "http://127.0.0.1:6006"
    assert normalize_url("https://host/phoenix/v1") == "https://host/phoenix"
    with pytest.raises(PhoenixError, match="not an http"):
        normalize_url("localhost:6006")
    monkeypatch.setenv("PHOENIX_API_KEY", KEY)
    client = PhoenixClient("http://alice:pw-LEAK-1234@127.0.0.1:6006")
    assert KEY not in repr(client) and "pw-LEAK" not in repr(client) and "pw-LEAK" not in client.public_url
    assert KEY not in str(vars(client).get("shown")) and redact.redact(f"echo {KEY}") == "echo ***"
