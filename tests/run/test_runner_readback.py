"""Large runs read back without loading them: the CLI's tables and failure lines from a lean frame and a
cursor, the CSV export and the call log a line at a time, and a runner that keeps no finished result."""

from __future__ import annotations

import gc
import weakref
from types import SimpleNamespace

import pandas as pd

from rageval_core.analysis import export
from rageval_core.analysis.compare import agreement, category_table, results_frame
from rageval_core.data.datasets import load_dataset
from rageval_core.analysis.failures import summarize_failures
from rageval_core.scoring.judges.bound import judge_scorers
from rageval_core.scoring.judges.config import JudgeConfig
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.base import CallEstimate
from rageval_core.scoring.metrics.registry import build_scorers
from tests.support.runs import run_rows
from rageval_core.run.persist import MAX_QUEUED
from rageval_core.run.readback import analysis_frame, result_pairs, unscored_results
from rageval_core.store.runs import RowInfo, Store
from rageval_core.core.types import MetricResult, Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

SAMPLES = load_dataset("sample_data/ml_qa_ja.json").samples


def _offline_run(store: Store):
    """Decomposed metrics and two judge configurations (so methods carry ``@judge``), one row unscorable."""
    samples = [*SAMPLES[:6], Sample("blank", "質問は？", ("文脈。",), "", None, {"category": "empty"})]
    scorers = list(build_scorers(["faithfulness", "answer_relevancy"]))
    scorers += judge_scorers([JudgeConfig("a", provider="offline"), JudgeConfig("b", provider="offline")], ProviderConfig())
    invalid = [RowInfo("bad-row", 0, None, False, "row 9: question: missing question")]
    return run_rows(samples, scorers, config=ProviderConfig(), store=store, concurrency=2, invalid_rows=invalid), samples


def test_the_lean_frame_gives_the_tables_the_full_results_give(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    result, samples = _offline_run(store)
    categories = {s.id: s.category for s in samples}
    full = results_frame(store.results(result.run_id), categories)
    lean = analysis_frame(store, result.run_id, categories)
    columns = list(lean.columns)
    assert set(full["method"]) == {"decomposed", "judge:rubric5@a", "judge:rubric5@b"} and len(lean) == len(full) > 40
    def plain(frame: pd.DataFrame) -> list[list]:  # None and NaN alike as None
        return frame.astype(object).where(frame.notna(), None).to_numpy().tolist()

    assert plain(lean) == plain(full[columns])
    for method in ("decomposed", "judge:rubric5@a"):
        pd.testing.assert_frame_equal(category_table(lean, method), category_table(full, method))
    pd.testing.assert_frame_equal(agreement(lean, "decomposed", "judge:rubric5@a"), agreement(full, "decomposed", "judge:rubric5@a"))
    unscored = list(unscored_results(store, result.run_id))
    assert unscored and all(r.value is None for r in unscored)
    assert summarize_failures(unscored) == summarize_failures(store.results(result.run_id))


def _csv_from_dict(store: Store, run_id: str, samples) -> str:
    """The wide CSV as it was built before it streamed: from the whole export dict."""
    from rageval_core.core.csvsafe import dumps_csv
    from rageval_core.core.method_labels import base_method, display_method

    data = export.run_to_dict(store, run_id)
    pairs: list[tuple[str, str]] = []
    for row in data["rows"]:
        for r in row["results"]:
            key = (display_method(r["method"], r.get("judge")), r["metric"])
            if key not in pairs:
                pairs.append(key)
    order = export.result_order(data["scorers"])
    pairs.sort(key=lambda p: order(SimpleNamespace(method=base_method(p[0]), metric=p[1], details={"judge": p[0].partition("@")[2]})))
    header = ["id", "category", "row_error", "question", "answer"]
    for method, metric in pairs:
        header += [f"{method}/{metric}", f"{method}/{metric}/unscored", f"{method}/{metric}/reason"]
    lines = []
    for row in data["rows"]:
        cells = {(display_method(r["method"], r.get("judge")), r["metric"]): r for r in row["results"]}
        s = samples.get(row["id"])
        line = [row["id"], row["category"] or "", "", s.question if s else "", s.answer if s else ""]
        for key in pairs:
            r = cells.get(key)
            line += ["" if r is None or r["value"] is None else r["value"], "" if r is None else (r["unscored_reason"] or ""),
                     "" if r is None else (r.get("reason") or "")]
        lines.append(line)
    for bad in data["invalid_rows"]:
        lines.append([bad["id"], "", bad["error"] or "invalid", "", ""] + [""] * (3 * len(pairs)))
    return dumps_csv(lines, header)


def test_the_csv_export_streams_the_same_text_the_whole_dict_gave(tmp_path, monkeypatch) -> None:
    store = Store(tmp_path / "db.sqlite")
    result, samples = _offline_run(store)
    by_id = {s.id: s for s in samples}
    expected = _csv_from_dict(store, result.run_id, by_id)
    assert len(result_pairs(store, result.run_id)) == 2 + 2 * 4
    monkeypatch.setattr(export, "run_to_dict", lambda *a, **k: (_ for _ in ()).throw(AssertionError("loaded whole")))
    lines = export.csv_lines(store, result.run_id, by_id)
    assert next(lines).startswith("id,category,row_error,question,answer,decomposed/faithfulness,")
    assert export.run_to_csv(store, result.run_id, by_id) == expected
    path = export.export_csv(store, result.run_id, tmp_path / "out.csv", by_id)
    assert path.read_text(encoding="utf-8") == expected and "bad-row" in expected


def test_the_call_log_export_converts_entries_as_it_writes_them(tmp_path, monkeypatch) -> None:
    import rageval_core.store.runs as store_module

    store = Store(tmp_path / "db.sqlite")
    rows = [Sample(f"r{i}", f"Question {i}?", ("Item one stores data.",), f"Item one stores data {i}.") for i in range(60)]
    result = run_rows(rows, list(build_scorers(["faithfulness"])), config=ProviderConfig(), store=store, concurrency=2)
    total = len(store.calls(result.run_id))
    assert total >= 120
    made = [0]
    real = store_module.call_entry

    def counting(row, read=None):
        made[0] += 1
        return real(row, read)

    monkeypatch.setattr(store_module, "call_entry", counting)
    monkeypatch.setattr(Store, "calls", lambda *a, **k: (_ for _ in ()).throw(AssertionError("loaded whole")))
    original = Store.iter_calls
    monkeypatch.setattr(Store, "iter_calls", lambda self, run_id, batch=500: original(self, run_id, 25))  # small batches
    lines = export.call_lines(store, result.run_id)
    next(lines)
    assert made[0] <= 25 < total  # one batch converted for the first line, not the whole log
    assert 1 + sum(1 for _ in lines) == total
    export.export_calls_jsonl(store, result.run_id, tmp_path / "calls.jsonl")
    assert len((tmp_path / "calls.jsonl").read_text(encoding="utf-8").splitlines()) == total


class _Tracked:
    """A scorer whose results are watched through weak references; it records how many are still alive (and
    how many tasks the runner had started) when each task runs."""

    method = "decomposed"

    def __init__(self, name: str, refs: list, alive: list, started: list) -> None:
        self.name, self.metrics = name, (name,)
        self._refs, self._alive, self._started = refs, alive, started

    def score(self, sample, ctx):
        self._started[0] += 1
        if self._started[0] % 100 == 0:
            gc.collect()  # results in a reference cycle count as kept until a collection
        self._alive.append(sum(1 for r in self._refs if r() is not None))
        result = MetricResult(sample.id, self.name, self.method, 0.5, details={"claims": ["x" * 200]})
        self._refs.append(weakref.ref(result))
        return [result]

    def estimate(self, sample):
        return CallEstimate(llm_calls=1)


def test_the_runner_keeps_no_result_once_stored_and_reports_before_planning_every_task(tmp_path) -> None:
    refs, alive, started = [], [], [0]
    scorers = [_Tracked("faithfulness", refs, alive, started), _Tracked("answer_correctness", refs, alive, started)]
    rows = [Sample(str(i), f"q{i}", ("c",), "a") for i in range(600)]
    seen: list[tuple[int, int]] = []
    result = run_rows(rows, scorers, ScriptedLLM(), HashEmbedder(), store=Store(tmp_path / "r.sqlite"), concurrency=2, workers=4,
                 progress=lambda p: seen.append((p.done, started[0])))
    assert result.done_tasks == 1200 and len(refs) == 1200
    # after a collection: results of the tasks in flight, of the batch being written and of those waiting for the
    # next group commit (at most MAX_QUEUED each), no more
    assert max(alive[99::100]) <= 2 * MAX_QUEUED + 16
    gc.collect()
    assert sum(1 for r in refs if r() is not None) == 0
    assert seen[0] == (0, 0)  # the first progress line comes before any task is planned
    first_done = next(s for d, s in seen if d > 0)
    assert first_done < 1200  # and the first finished task is reported long before the last one is planned


def test_the_cli_summary_never_loads_every_result(tmp_path, monkeypatch, capsys) -> None:
    from rageval_core import cli

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    refuse = lambda *a, **k: (_ for _ in ()).throw(AssertionError("every result loaded"))  # noqa: E731
    for name in ("results", "results_with_scorer", "calls"):
        monkeypatch.setattr(Store, name, refuse)
    code = cli.main(["evaluate", "sample_data/ml_qa_ja.json", "--provider", "offline", "--metrics", "faithfulness",
                     "--judge", "rubric5", "--out", str(tmp_path / "o.csv"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "per category, decomposed" in out and "agreement, decomposed vs judge:rubric5" in out
    assert (tmp_path / "o.csv").read_text(encoding="utf-8").count("\n") == 13
