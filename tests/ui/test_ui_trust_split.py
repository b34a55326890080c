"""AppTest: the Trust page's label split on a small offline run: deal it, see sizes and agreement per split,
test hidden until opened, each opening counted in the store (a redraw is not a new look)."""

from __future__ import annotations

import pytest

from rageval_core.analysis.trust.split_run import current_split
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from tests.support.runs import run_rows
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT, assert_ok, button, start_app

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"
pytestmark = pytest.mark.timeout(300)


def test_split_panel_deals_hides_test_and_counts_looks(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    ds = load_dataset(LABELLED)
    rows = [s for s in ds.samples if not s.id.endswith("-en")][:12]
    result = run_rows(rows, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name,
                 dataset_digest=ds.content_hash)
    at = start_app(monkeypatch, tmp_path, check=False, timeout=120)
    at.session_state["selected_run"] = result.run_id
    at.switch_page("rageval_ui/app_pages/trust.py").run()
    assert_ok(at)
    assert {"Label split: train · dev · test", "Bias in your labelled rows"} <= {e.label for e in at.expander}
    assert any("feature" in d.value.columns and "Holm p" in d.value.columns for d in at.dataframe)
    button(at, "Split the labels").click().run()
    assert_ok(at)
    state = current_split(Store(), ds.content_hash)
    assert state is not None and sum(state.counts().values()) == 12
    sizes = next(d.value for d in at.dataframe if "train" in d.value.columns)
    assert sizes.iloc[0].tolist()[1:] == [state.counts()[s] for s in ("train", "dev", "test")]
    shown = [m.value for m in at.markdown]
    assert "**Agreement on dev**" in shown and "**Agreement on test**" not in shown
    assert any("test opened 0 times" in i.value for i in at.info)
    coverage = next(d.value for d in at.dataframe if "labelled" in d.value.columns)
    assert coverage.iloc[0]["labelled"] == f"{12 - state.counts()['test']} / 12"  # test labels withheld
    assert "**Pass thresholds calibrated on dev**" in shown
    cal = next(d.value for d in at.dataframe if "test balanced accuracy" in d.value.columns)
    assert cal.iloc[0]["test balanced accuracy"] == "hidden (open test above)"
    agreement = next(d.value for d in at.dataframe if "AUROC" in d.value.columns and "threshold" in d.value.columns)
    assert agreement.iloc[0]["threshold"].endswith("calibrated on dev")
    button(at, "Open test figures (counted)").click().run()
    assert_ok(at)
    assert "**Agreement on test**" in [m.value for m in at.markdown]
    assert any("test opened 1 times" in w.value for w in at.warning)
    at.run()  # a redraw keeps test open without counting again
    assert current_split(Store(), ds.content_hash).test_looks == 1
    button(at, "Hide test figures").click().run()
    button(at, "Open test figures (counted)").click().run()
    assert_ok(at)
    assert current_split(Store(), ds.content_hash).test_looks == 2
