"""The Python API (``import rageval_core as r``): evaluate returns plain values, with or without a store; trust and
compare read what it returns; errors are RagevalErrors raised before any call. docs/python-api.md is run whole by
tests/project/test_docs_python_api.py; this file pins the behaviour behind it."""

from __future__ import annotations

import dataclasses
import gc
import json
from pathlib import Path

import pytest

import rageval_core as r
from rageval_core.testing.fake_llm import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
EN = ROOT / "sample_data" / "ml_qa_en.json"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_issue_line_evaluates_offline_into_plain_scores() -> None:
    run = r.evaluate(r.load_dataset(str(EN)), metrics=["faithfulness"])
    assert isinstance(run, r.Evaluation) and run.status == "done" and run.provider == "offline"
    assert len(run.results) == 12 and len(run.samples) == 12 and run.skipped == ()
    for score in run.results:
        assert isinstance(score, r.Score) and score.metric == "faithfulness" and score.method == "decomposed"
        assert (score.value is not None and 0 <= score.value <= 1 and score.reason) or score.unscored_reason
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.results[0].value = 1.0  # type: ignore[misc]
    assert isinstance(run.usage, r.Usage) and run.calls == 24 and run.cost_usd == 0.0
    values = [s.value for s in run.results if s.value is not None]
    assert run.mean("faithfulness") == pytest.approx(sum(values) / len(values))
    assert run.value("4-en", "faithfulness") == next(s.value for s in run.results if s.row_id == "4-en")
    assert run.unscored("faithfulness") == {}
    frame = run.to_frame()
    assert len(frame) == 12 and set(frame["category"]) >= {"correct", "hallucination"}
    assert "results=12 (12 scored)" in repr(run) and "Score(" not in repr(run)  # one line in a notebook


def test_a_quick_call_keeps_nothing_and_its_temporary_store_goes_with_it(tmp_path: Path) -> None:
    run = r.evaluate(str(EN), metrics=["faithfulness"])
    folder = Path(run.store.path).parent
    assert folder.is_dir() and not (tmp_path / "home").exists()  # nothing in the workbench's state directory
    del run
    gc.collect()
    assert not folder.exists()


def test_a_store_given_keeps_the_run_where_the_workbench_reads_it(tmp_path: Path) -> None:
    db = tmp_path / "mine.sqlite"
    run = r.evaluate(str(EN), metrics=["faithfulness"], store=db)
    assert r.Store(db).find_run(run.run_id) is not None
    default = r.evaluate(str(EN), metrics=["faithfulness"], store=r.Store())
    assert r.Store().find_run(default.run_id) is not None and (tmp_path / "home").is_dir()


def test_rows_from_python_and_a_ready_run_spec() -> None:
    rows = [{"id": "q1", "question": "What does dropout do?", "contexts": ["Dropout zeroes random activations."],
             "answer": "It zeroes random activations."},
            {"id": "q2", "contexts": ["x"], "answer": "no question"},
            r.Sample("q3", "Is it?", ("It is.",), "It is.")]
    quick = r.evaluate(rows, metrics=["faithfulness"])
    assert sorted(s.row_id for s in quick.results) == ["q1", "q3"]
    assert [(i.row, i.field) for i in quick.skipped] == [(2, "question")]

    from rageval_core.scoring.metrics.registry import build_scorers

    spec = r.RunSpec([r.Sample("s1", "Q?", ("A fact.",), "A fact.")], build_scorers(["faithfulness"]))
    assert [s.row_id for s in r.evaluate(spec).results] == ["s1"]
    with pytest.raises(r.ConfigError, match="RunSpec carries"):
        r.evaluate(spec, metrics=["faithfulness"])


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"metrics": ["faithfulnes"]}, r.ConfigError, "unknown metric id"),
    ({"metrics": "faithfulness"}, r.ConfigError, "lists of ids"),
    ({}, r.ConfigError, "nothing to evaluate"),
    ({"judges": ["no-such-rubric"]}, r.ConfigError, "not a preset"),
    ({"metrics": ["faithfulness"], "provider": "gemini"}, r.ConfigError, "GEMINI_API_KEY"),
    ({"metrics": ["faithfulness"], "provider": r.ProviderConfig("openai-compatible")}, r.ConfigError, "base_url"),
    ({"metrics": ["faithfulness"], "provider": "nope"}, r.ConfigError, "nope"),
])
def test_a_call_that_cannot_work_raises_a_ragevalerror_naming_it(kwargs: dict, error: type, words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        r.evaluate(str(EN), **kwargs)
    assert isinstance(caught.value, r.RagevalError)


def test_data_that_cannot_be_evaluated_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(r.DataError, match="no such dataset file"):
        r.evaluate(tmp_path / "missing.json", metrics=["faithfulness"])
    with pytest.raises(r.DataError, match="question"):
        r.evaluate([{"id": "a", "answer": "x"}], metrics=["faithfulness"])


def test_with_a_provider_the_run_reports_usage_and_a_second_run_is_served_by_the_store_cache(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        config = r.ProviderConfig("openai-compatible", base_url=server.openai_base_url, model="fake-model",
                                  api_key="sk-python-api", embedding_model="fake-embed")
        first = r.evaluate(str(EN), metrics=["faithfulness"], judges=["binary"], provider=config, store=tmp_path / "s.sqlite")
        sent = server.count("/chat/completions")
        again = r.evaluate(str(EN), metrics=["faithfulness"], judges=["binary"], provider=config, store=tmp_path / "s.sqlite")
    assert first.provider == "openai-compatible" and first.model == "fake-model"
    assert first.calls > 0 and first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    assert sent >= first.calls - first.cached_calls > 0
    assert again.calls == 0 and again.cached_calls > 0 and again.usage.input_tokens == 0
    assert [s.value for s in again.results] == [s.value for s in first.results]
    assert "sk-python-api" not in repr(first) + repr(config)


def test_trust_and_compare_read_what_evaluate_returned(tmp_path: Path) -> None:
    labelled = r.evaluate(str(ROOT / "sample_data" / "trust_labelled.jsonl"), metrics=["faithfulness"], judges=["binary"])
    report = r.trust(labelled, iterations=200)
    assert isinstance(report, r.TrustReport) and report.run_id == labelled.run_id
    found = report.find("faithfulness", "decomposed")
    assert found is not None and found.n_labelled == 48 and found.auroc.value is not None and found.auroc.value > 0.7
    assert json.dumps(report.to_dict(), default=str)

    en = r.evaluate(str(EN), metrics=["faithfulness"], judges=["rubric5"])
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps({"id": i, "label_faithful": v}) for i, v in [("1-en", 1), ("4-en", 0)]),
                      encoding="utf-8")
    mine = r.trust(en, labels=labels, iterations=100)
    asked = {(c.row_id, c.criterion) for c in mine.label_next}
    assert asked and not asked & {("1-en", "faithfulness"), ("4-en", "faithfulness")}  # labelled: not asked again
    with pytest.raises(r.DataError):
        r.trust(en, labels=tmp_path / "none.jsonl")

    within = r.compare(en)
    assert isinstance(within, r.MethodComparison) and within.method_b == "judge:rubric5"
    assert list(within.agreement["criterion"]) == ["faithfulness"] and int(within.agreement["n"][0]) == 12
    across = r.compare(en, r.evaluate(str(EN), metrics=["faithfulness"], judges=["binary"]))
    assert isinstance(across, r.RunComparison)
    assert any(path.startswith("settings.judges") for path, _a, _b in across.changes)
    assert "faithfulness" in set(across.summary["metric"]) and len(across.rows) >= 12


def test_trust_of_a_stored_run_id(tmp_path: Path) -> None:
    run = r.evaluate(str(ROOT / "sample_data" / "labelled_mini_ja.jsonl"), metrics=["faithfulness"], store=r.Store())
    assert r.trust(run.run_id, iterations=100).run_id == run.run_id
    with pytest.raises(r.ConfigError, match="no run"):
        r.trust("no-such-run")
