"""The Trust page's one-screen answer in a real browser (issue 38 item 7): at 1,400 × 1,000 the answer block ends
above the fold once the page has loaded, and with every folded section opened no Trust table is wider than its
frame (the agreement table used to cut "best threshold" off), in English and in Japanese.

One `streamlit run app.py` serves the tests, with a stored offline run of the shipped labelled set (faithfulness by
the decomposed method and the binary judge, answer correctness by the judge), its probes and a label split, so every
table of the page is drawn. Skips with a reason when Chromium or playwright is missing, unless RAGEVAL_REQUIRE_E2E=1.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.browser import streamlit_app
from tests.support.browser import chromium, require_browser

pytestmark = pytest.mark.e2e

TEXT_TIMEOUT_MS = 120_000  # a deadline to wait for text on a loaded 2-core machine, not a timing
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("RAGEVAL_SCREENSHOTS") or Path(tempfile.gettempdir()) / "rageval-e2e-screenshots")
VIEWPORT = {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The labelled set evaluated offline, its probes saved beside the run, and its labels split (seed 0)."""
    require_browser()
    from rageval_core.analysis.trust import run_report as trust_report
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.session import probes as probe_runs
    from rageval_core.store.runs import Store
    from tests.support.runs import run_rows

    home = tmp_path_factory.mktemp("e2e-trust-answer")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
        scorers = [*build_scorers(["faithfulness"]), JudgeScorer("binary")]
        run = run_rows(ds.samples, scorers, config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash)
        store = Store()
        few = [s for s in ds.samples if not s.id.endswith("-en")][:6]
        parallel = [s for s in ds.samples if s.id.endswith("-en")][:6]
        report = probe_runs.run_probes(few, scorers, ["order", "answer_injection"], store=store, base_run_id=run.run_id,
                                       config=ProviderConfig(), parallel=parallel, dataset_name=ds.name).to_dict()
        trust_report.save_report(store, run.run_id, {"sections": {"probes": report}})
        trust_report.deal_split(store, run.run_id, {"train": 0.4, "dev": 0.3, "test": 0.3}, 0, samples=ds.samples)
    return {"home": str(home), "run": run.run_id}


@pytest.fixture(scope="module")
def browser(stored: dict[str, str]) -> Iterator[tuple[str, Any]]:
    require_browser()
    with streamlit_app(Path(stored["home"])) as url, chromium() as launched:
        yield url, launched


OVERFLOW = """() => [...document.querySelectorAll('[data-testid=stDataFrame]')].map(frame => {
    const scroller = frame.querySelector('.dvn-scroller');
    const box = frame.getBoundingClientRect();
    return {width: Math.round(box.width), scroll: scroller ? scroller.scrollWidth : null,
            client: scroller ? scroller.clientWidth : null,
            heads: [...frame.querySelectorAll('[role=columnheader]')].map(h => h.textContent).join(' | ')};
})"""


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("locale", "heading", "sections"), [
    ("en-US", "The answer", "Agreement with people"),
    ("ja-JP", "答え", "人との一致"),
])
def test_the_answer_is_above_the_fold_and_no_table_overflows(browser: tuple[str, Any], stored: dict[str, str],
                                                             locale: str, heading: str, sections: str) -> None:
    from playwright.sync_api import expect

    url, chromium = browser
    expect.set_options(timeout=TEXT_TIMEOUT_MS)
    tab = chromium.new_context(viewport=VIEWPORT, locale=locale).new_page()
    tab.set_default_timeout(TEXT_TIMEOUT_MS)
    try:
        tab.goto(f"{url}/trust")
        main = tab.get_by_test_id("stMain")
        expect(main.get_by_role("heading", name=heading)).to_be_visible()
        answer = tab.locator(".st-key-trust-answer")
        expect(answer.locator("[class*=st-key-trust-answer-]")).to_have_count(3)  # one line per metric × method
        expect(main.locator("[data-testid=stExpander]").first).to_be_visible()  # the page below has drawn too
        tab.wait_for_timeout(1500)  # fonts and the badges settle
        box = answer.bounding_box()
        assert box is not None and box["y"] + box["height"] <= VIEWPORT["height"], box
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SHOTS / f"trust-answer-{locale}.png"))
        expect(main.locator("[data-testid=stExpander]").filter(has_text=sections)).to_be_visible()
        folded = main.locator("[data-testid=stExpander] details:not([open]) > summary")
        for _ in range(30):  # open each folded section (one already open, the split's with test shown, stays open)
            if not folded.count():
                break
            folded.first.click()
            tab.wait_for_timeout(300)
        assert folded.count() == 0, "a section did not open"
        tab.get_by_test_id("stStatusWidget").wait_for(state="hidden")
        frames = main.locator("[data-testid=stDataFrame]")
        expect(frames.first).to_be_visible()
        for i in range(frames.count()):  # a grid draws its canvas once scrolled into view
            frames.nth(i).scroll_into_view_if_needed()
            frames.nth(i).locator("canvas").first.wait_for()
        tab.wait_for_timeout(1500)
        tables = tab.evaluate(OVERFLOW)
        assert len(tables) >= 8, tables  # split sizes, agreement per split, calibration, coverage, agreement, ...
        wide = [t for t in tables if t["scroll"] is None or t["scroll"] > t["client"] + 1]
        assert wide == [], wide
    finally:
        tab.context.close()
