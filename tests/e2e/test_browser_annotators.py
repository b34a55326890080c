"""The Trust page's annotators block in a real browser (Debian's Chromium through Playwright): an offline run of
the 24 Japanese labelled rows with two annotators' labels in the store, the people's kappa with its interval
beside each judge's, the sentence, the disagreements to settle. Screenshot trust-annotators.png (RAGEVAL_SCREENSHOTS
names the folder, as for tests/e2e/test_browser.py)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.browser import streamlit_app
from tests.support.browser import chromium, new_tab, require_browser

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("RAGEVAL_SCREENSHOTS") or Path(tempfile.gettempdir()) / "rageval-e2e-screenshots")
TEXT_TIMEOUT_MS = 90_000
RUN_TIMEOUT_MS = 400_000  # bootstrap intervals on a loaded 2-core machine: a deadline to wait for text, not a timing


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The server's RAGEVAL_HOME holding the run and the two annotators' labels (imported as the page would)."""
    from rageval_core.analysis.trust.labels import FILE, dataset_labels
    from rageval_core.analysis.trust.run_report import read_label_rows
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from tests.support.runs import run_rows
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.store import annotations
    from rageval_core.store.runs import Store

    home = tmp_path_factory.mktemp("e2e-annotators")
    ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
    rows = [s for s in ds.samples if not s.id.endswith("-en")]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        done = run_rows(rows, [*build_scorers(["faithfulness"]), JudgeScorer("binary")], config=ProviderConfig(),
                   dataset_name=ds.name, dataset_digest=ds.content_hash)
        labels = dataset_labels(read_label_rows(ROOT / "sample_data" / "trust_two_annotators.jsonl"), source=FILE)
        annotations.import_labels(Store(), ds.content_hash, [(x.row_id, x.criterion, x.annotator, x.value) for x in labels])
    return {"home": home, "run": done.run_id}


@pytest.fixture(scope="module")
def page(stored: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    require_browser()
    with streamlit_app(stored["home"]) as url, chromium() as browser:
        yield url, new_tab(browser, width=1440, height=1400)


@pytest.mark.timeout(900)
def test_trust_page_annotators_block_in_a_real_browser(page: tuple[str, Any], stored: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    url, tab = page
    expect.set_options(timeout=TEXT_TIMEOUT_MS)
    tab.goto(f"{url}/trust")
    tab.get_by_test_id("stSelectbox").filter(has_text="Run").click()
    tab.get_by_role("option").filter(has_text=stored["run"]).click()
    heading = tab.get_by_text("People against each other, beside the judges", exact=True)
    expect(heading).to_be_visible(timeout=RUN_TIMEOUT_MS)
    heading.click()  # a folded section under the page's one-screen answer
    expect(tab.get_by_text("faithfulness, judge:binary:", exact=False).first).to_be_visible()
    expect(tab.get_by_text("disagreement(s) to settle", exact=False)).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.get_by_test_id("stMain").locator("[data-testid=stExpander]").last.wait_for()  # the page below the block has drawn
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    tab.locator("[data-testid=stDataFrame] canvas").first.wait_for()
    tab.wait_for_timeout(2500)  # the grids paint their canvases after they scroll into view
    tab.screenshot(path=str(SHOTS / "trust-annotators.png"))
    assert (SHOTS / "trust-annotators.png").stat().st_size > 10_000
