"""AppTest: Compare's run A vs run B shows the difference corrected by people's labels (judge-only,
labels-only, corrected) for two offline runs of the same labelled rows with different answers."""

from __future__ import annotations

import pytest

from rageval_core.analysis.trust.compare_run import compare_runs
from rageval_core.core.types import Sample
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from tests.support.runs import run_rows
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT, assert_ok, compare_tab, start_app

MINI = ROOT / "sample_data" / "labelled_mini_ja.jsonl"
pytestmark = pytest.mark.timeout(300)


def test_run_a_vs_b_has_the_corrected_difference(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    ds = load_dataset(MINI)
    # without the file's label columns: the labels here are people's, given in Inspect (a run keeps its rows' columns,
    # and those would count as labels too)
    rows = [Sample(s.id, s.question, s.contexts, s.answer, s.ground_truth,
                   {k: v for k, v in s.metadata.items() if not k.startswith("label_")}) for s in ds.samples[:8]]
    longer = [Sample(s.id, s.question, s.contexts, s.answer + s.contexts[0], s.ground_truth, dict(s.metadata)) for s in rows]
    scorers = build_scorers(["faithfulness"])
    a = run_rows(rows, scorers, config=ProviderConfig(), dataset_name="a", dataset_digest="hash-a").run_id
    b = run_rows(longer, scorers, config=ProviderConfig(), dataset_name="b", dataset_digest="hash-b").run_id
    for rid in ("p01", "p02", "p03", "p04"):  # labels of each run's own answers, given in Inspect
        Store().set_label("hash-a", rid, "faithfulness", 1.0)
        Store().set_label("hash-b", rid, "faithfulness", 1.0 if rid != "p02" else 0.0)
    at = start_app(monkeypatch, tmp_path, check=False, timeout=120)
    at.session_state["selected_run"] = a
    at.session_state["compare.run_b"] = b
    at.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(at, "Run A vs run B")
    assert_ok(at)
    assert any(m.value.startswith("**Corrected by people's labels**") for m in at.markdown)
    frame = next(d.value for d in at.dataframe if "corrected" in d.value.columns)
    row = frame.iloc[0]
    assert (row["method"], row["rows"], row["labelled in both"]) == ("decomposed", 8, 4)
    expected = compare_runs(Store(), a, b).comparisons[0]
    assert row["labels only"].startswith(f"{expected.labels_only.value:+.3f}")  # (1 - 0) / 4 = +0.250
    assert row["corrected"].startswith(f"{expected.corrected.value:+.3f}")
    assert any("only 4 labelled rows" in c.value for c in [*at.caption, *at.warning])
