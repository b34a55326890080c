"""Daily use, round two (issue 38), in a real browser (Debian's Chromium through Playwright): the landing page in
the browser's language (item 2), side runs kept under their parent in the run pickers and History (item 3).

One `streamlit run app.py` serves every test here, with state in its own RAGEVAL_HOME; each test opens its own
browser context (the language is the context's). Skips with a reason when Chromium or playwright is missing, unless
RAGEVAL_REQUIRE_E2E=1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_app
from tests.support.browser import require_browser

pytestmark = pytest.mark.e2e

TEXT_TIMEOUT_MS = 90_000  # a deadline to wait for text on a loaded 2-core machine, not a timing
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e-daily")


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[str]:
    require_browser()
    with streamlit_app(home) as url:
        yield url


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def new_tab(browser: Any, locale: str = "en-US") -> Any:
    from playwright.sync_api import expect

    expect.set_options(timeout=TEXT_TIMEOUT_MS)
    tab = browser.new_context(viewport={"width": 1400, "height": 1000}, locale=locale).new_page()
    tab.set_default_timeout(TEXT_TIMEOUT_MS)
    return tab


def main(tab: Any) -> Any:
    return tab.get_by_test_id("stMain")


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("locale", "sample", "next_step", "heading"), [
    ("en-US", "ml_qa_en", "Next: Prompts & rubric", "Prompts & rubric"),
    ("ja-JP", "ml_qa_ja", "次へ：プロンプトとルーブリック", "プロンプトとルーブリック"),
])
def test_the_first_visit_follows_the_browser_language(server: str, browser: Any, locale: str, sample: str,
                                                      next_step: str, heading: str) -> None:
    """Item 2: the UI language and the landing dataset follow navigator.language; the page's one primary button is
    the tour's next step (on the Japanese sample the recording's button is there too, as a secondary one)."""
    from playwright.sync_api import expect

    tab = new_tab(browser, locale)
    try:
        tab.goto(server)
        expect(main(tab).get_by_text(sample, exact=True)).to_be_visible()
        primary = main(tab).locator("[data-testid=stBaseButton-primary]:visible")  # a button with help has a hidden twin
        expect(primary).to_have_count(1)
        expect(primary).to_contain_text(next_step)
        if locale == "ja-JP":
            secondary = main(tab).locator("[data-testid=stBaseButton-secondary]:visible")
            expect(secondary.filter(has_text="qwen2.5-coder-1.5b")).to_be_visible()
        primary.click()
        expect(tab.get_by_role("heading", name=heading)).to_be_visible()
    finally:
        tab.context.close()
