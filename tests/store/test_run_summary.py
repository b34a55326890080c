"""run_summary: the pages' SQL reads of a run (light results, per-method call totals, one row) equal what the
full reads give, are cached until the run changes, and Compare's run B defaults to the latest sibling run."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.analysis import compare
from rageval_core.views import run_summary
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from tests.support.runs import run_rows
from rageval_core.store.runs import CallEntry, RunInfo, Store
from rageval_core.core.types import SEED_METRICS, MetricResult, Usage
from tests.support.apptest import ROOT, assert_ok, compare_tab, start_app
from bench.big_run import clone_run


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An offline run (3 seed rows, the seed metrics + rubric5) with a few extra call-log entries."""
    root = tmp_path_factory.mktemp("run-summary")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
        done = run_rows(ds.samples[:3], [*build_scorers(SEED_METRICS), JudgeScorer("rubric5")], config=ProviderConfig(),
                   dataset_name=ds.name, dataset_digest=ds.content_hash)
        store = Store()
        for cached, error, method in ((True, None, "judge:rubric5"), (False, "boom", None), (False, None, "")):
            store.log_call(CallEntry(done.run_id, "1", "judge:rubric5" if method is None else "faithfulness", method,
                                     "judge", "k", usage=Usage(7, 3), cost_usd=0.25, latency_s=1.5, cached=cached,
                                     error=error))
        yield {"home": str(root), "run": done.run_id, "hash": ds.content_hash, "name": ds.name}


@pytest.fixture
def store(stored: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("RAGEVAL_HOME", stored["home"])
    return Store()


def test_light_results_build_the_same_frame_as_the_full_results(store: Store, stored: dict[str, str]) -> None:
    full = store.results(stored["run"])
    light = run_summary.light_results(store, stored["run"])
    assert len(light) == len(full) > 0
    assert all(set(r.details) <= {"judge"} for r in light)
    pd.testing.assert_frame_equal(compare.results_frame(light), compare.results_frame(full))


def test_method_costs_equal_the_call_log_summed_in_python(store: Store, stored: dict[str, str]) -> None:
    expected = compare.cost_by_method(store.calls(stored["run"]))
    got = run_summary.method_costs(store, stored["run"])
    assert list(got) == list(expected)
    for method, cost in expected.items():
        assert got[method].to_dict() == pytest.approx(cost.to_dict())
    assert got["judge:rubric5"].cached_calls >= 1 and got["judge:rubric5"].errors == 1


def test_one_row_reads_only_that_row_with_its_details(store: Store, stored: dict[str, str]) -> None:
    row = run_summary.row_results(store, stored["run"], "2")
    assert row == [r for r in store.results(stored["run"]) if r.sample_id == "2"]
    assert any(r.details.get("claims") for r in row)
    calls = run_summary.row_calls(store, stored["run"], "2")
    assert calls and {c.sample_id for c in calls} == {"2"}


def test_the_cache_holds_until_the_run_changes(store: Store, stored: dict[str, str]) -> None:
    copy = clone_run(store, stored["run"], 1)
    first = run_summary.light_results(store, copy)
    assert run_summary.light_results(store, copy) is first  # nothing changed: the same list
    store.save_task(copy, "1", "extra", [MetricResult("1", "faithfulness", "decomposed", 0.5)])
    again = run_summary.light_results(store, copy)
    assert again is not first and len(again) == len(first) + 1


def test_a_clone_multiplies_rows_results_and_calls(store: Store, stored: dict[str, str]) -> None:
    big = clone_run(store, stored["run"], 4, dataset_hash="other")
    info = store.get_run(big)
    assert info is not None and info.n_rows == 12 and info.dataset_hash == "other"
    assert len(store.rows(big)) == 12 and [r.position for r in store.rows(big)] == list(range(12))
    assert len(store.results(big)) == 4 * len(store.results(stored["run"]))
    assert len(store.calls(big)) == 4 * len(store.calls(stored["run"]))


def _info(run_id: str, created: float, digest: str | None, name: str | None) -> RunInfo:
    return RunInfo(run_id, created, "done", name, digest, [], {}, "offline", "m", None, {})


def test_run_b_is_the_latest_sibling_then_other_versions_then_the_rest() -> None:
    a = _info("a", 10, "h1", "qa")
    infos = [_info("new-other", 50, "h9", "other"), _info("old-sib", 5, "h1", "qa"), _info("sib", 20, "h1", "qa"),
             _info("v2", 30, "h2", "qa"), a]
    assert run_summary.run_b_choices(infos, a) == ["sib", "old-sib", "v2", "new-other"]


def test_compare_defaults_run_b_to_the_latest_run_on_the_same_dataset(
    stored: dict[str, str], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    sibling = clone_run(store, stored["run"], 1, created_at=now + 1000)
    unrelated = clone_run(store, stored["run"], 1, dataset_hash="unrelated", dataset_name="other",
                          created_at=now + 2000)  # the newest run overall
    at: AppTest = start_app(monkeypatch, stored["home"], check=False)
    at.session_state["selected_run"] = stored["run"]
    at.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(at, "Run A vs run B")
    assert_ok(at)
    assert at.selectbox(key="compare.run_b").value == sibling
    at.selectbox(key="compare.run_b").set_value(unrelated).run()
    assert at.selectbox(key="compare.run_b").value == unrelated  # the user's pick holds while A stays
    compare_tab(at, "Row by row")
    compare_tab(at, "Run A vs run B")
    assert at.selectbox(key="compare.run_b").value == unrelated  # and while its tab was closed
    run_a = next(s for s in at.selectbox if s.label == "Run")
    run_a.set_value(sibling).run()
    assert_ok(at)
    siblings = [i for i in store.list_runs() if i.dataset_hash == stored["hash"] and i.id != sibling]
    expected = max(siblings, key=lambda i: i.created_at).id
    assert at.selectbox(key="compare.run_b").value == expected != unrelated  # A changed: B is A's latest sibling
