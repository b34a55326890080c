"""AppTest: Compare and History filter rows by the trace's latency, the language and metadata fields, and link trace
ids with the sidebar's trace link template (issue 38 item 9)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_ui import data, filters
from tests.support.apptest import ROOT, assert_ok, set_kept, start_app
from tests.support.runs import run_rows

COMPARE, HISTORY = "rageval_ui/app_pages/compare.py", "rageval_ui/app_pages/history.py"
TEMPLATE = "https://phoenix.example/projects/{project}/traces/{trace_id}"
LATENCY = {"r1": 150, "r2": 2600, "r3": 800, "r4": 4100}
ENV = {"r1": "prod", "r2": "staging", "r3": "prod", "r4": "staging"}


def trace_rows() -> bytes:
    """Four rows as a trace import writes them (trace id, latency, an attribute), two English and two Japanese."""
    en = load_dataset(ROOT / "sample_data" / "ml_qa_en.json").samples
    ja = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json").samples
    rows = []
    for rid, sample in zip(LATENCY, [en[0], en[3], ja[1], ja[6]]):
        rows.append({"id": rid, "question": sample.question, "contexts": list(sample.contexts), "answer": sample.answer,
                     "trace_id": f"trace-{rid}", "latency_ms": LATENCY[rid], "env": ENV[rid]})
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An offline run of the four trace rows, and an older run of the English sample (no trace facts)."""
    root = tmp_path_factory.mktemp("row-facts")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        sample = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
        other = run_rows(sample.samples[:2], build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=sample.name,
                         dataset_digest=sample.content_hash)
        ws = data.load_upload("traces.jsonl", trace_rows())
        done = run_rows(ws.samples, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ws.name,
                        dataset_digest=ws.content_hash)
        yield {"home": str(root), "run": done.run_id, "other": other.run_id}


def page(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], path: str) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False, timeout=240)
    at.session_state["dataset"] = data.load_upload("traces.jsonl", trace_rows())  # the texts of the traced run
    at.session_state["selected_run"] = home["run"]
    set_kept(at, "w.trace_url", TEMPLATE)
    set_kept(at, "w.phoenix_project", "rag app")
    at.switch_page(path).run()
    assert_ok(at)
    return at


def filtered_rows(at: AppTest) -> list[str]:
    return [o.split()[0][1:] for o in next(s for s in at.selectbox if s.label == "Row").options]


def test_compare_filters_by_latency_language_and_metadata(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = page(monkeypatch, home, COMPARE)
    latency = at.slider(key=filters.LATENCY)
    assert (latency.min, latency.max) == (150.0, 4100.0)
    latency.set_value((500.0, 3000.0)).run()
    assert_ok(at)
    assert any("Filtered: 2 of 4 rows." in i.value for i in at.info)
    at.multiselect(key=filters.LANGUAGES).set_value(["ja"]).run()
    assert any("Filtered: 1 of 4 rows." in i.value for i in at.info)  # r3: 800 ms and Japanese
    at.button(key="filter.reset").click().run()
    at.selectbox(key=filters.META_FIELD).set_value("env").run()
    assert at.multiselect(key=filters.META_VALUES).options == ["prod", "staging"]
    at.multiselect(key=filters.META_VALUES).set_value(["staging"]).run()
    assert any("Filtered: 2 of 4 rows." in i.value for i in at.info)
    # Inspect keeps the filter (one setting for the pages).
    at.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    assert_ok(at)
    assert filtered_rows(at) == ["r2", "r4"]
    at.button(key="filter.reset").click().run()


def test_compare_links_each_row_to_its_trace(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    from tests.support.apptest import compare_tab

    at = page(monkeypatch, home, COMPARE)
    compare_tab(at, "Row by row")
    assert_ok(at)
    table = next(d for d in at.dataframe if "trace" in d.value.columns)
    links = dict(zip(table.value["sample_id"], table.value["trace"]))
    assert links["r2"] == "https://phoenix.example/projects/rag%20app/traces/trace-r2"
    config = json.loads(table.proto.columns)["trace"]
    assert config["type_config"]["type"] == "link"


def test_history_ranks_runs_on_the_rows_the_filters_leave(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = page(monkeypatch, home, HISTORY)
    board = at.dataframe[0].value.set_index("run")
    assert set(board.index) == {home["run"], home["other"]} and board.loc[home["run"], "rows"] == 4
    whole = board.loc[home["run"], "decomposed/faithfulness"]
    at.selectbox(key=filters.META_FIELD).set_value("env").run()
    at.multiselect(key=filters.META_VALUES).set_value(["prod"]).run()
    assert_ok(at)
    assert any("1 of 2 runs have such rows" in i.value for i in at.info)
    board = at.dataframe[0].value.set_index("run")
    assert list(board.index) == [home["run"]]  # the sample run has no env field: nothing of it passes
    assert board.loc[home["run"], "rows"] == 2
    from rageval_core.store.runs import Store

    monkeypatch.setenv("RAGEVAL_HOME", home["home"])
    prod = [r.value for r in Store().results(home["run"]) if r.sample_id in ("r1", "r3") and r.value is not None]
    assert board.loc[home["run"], "decomposed/faithfulness"] == pytest.approx(sum(prod) / len(prod))
    assert board.loc[home["run"], "decomposed/faithfulness"] != pytest.approx(whole)
    # The picked run's rows that pass, each linked to its trace.
    rows = next(d.value for d in at.dataframe if "trace" in d.value.columns)
    assert list(rows["sample_id"]) == ["r1", "r3"] and list(rows["latency_ms"]) == [150.0, 800.0]
    assert rows["trace"].iloc[1].endswith("/traces/trace-r3")
    at.button(key="filter.reset").click().run()
