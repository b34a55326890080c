"""The sidebar's provider, model, base URL and key survive an in-page button that switches page, in a real browser
(Debian's Chromium through Playwright; issue 38 item 1). The AppTest version of the rule, over every provider's
fields, is tests/ui/test_ui_sidebar_state.py.

The button is Trust's "Load ... and go to Evaluate" (shown while the store is empty), which calls
``st.switch_page`` as "Open in Compare", "Inspect #N" and "Label next" do; before the rule in
``rageval_ui.state`` it put the sidebar back to Offline with an empty key field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bench.browser import streamlit_app
from tests.support.browser import chromium, new_tab, require_browser

pytestmark = pytest.mark.e2e

TEXT_TIMEOUT_MS = 90_000  # a deadline to wait for text on a loaded 2-core machine, not a timing
KEY = "sk-e2e-session-key-38"  # a made-up key: the page never sends a call in this test
MODEL = "qwen-e2e"
BASE_URL = "http://127.0.0.1:9/v1"


@pytest.fixture(scope="module")
def tab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    require_browser()
    home = tmp_path_factory.mktemp("e2e-sidebar")
    with streamlit_app(home) as url, chromium() as browser:
        yield url, new_tab(browser)


def _field(page: Any, label: str) -> Any:
    return page.get_by_test_id("stSidebar").get_by_label(label, exact=True)


def _fill(page: Any, label: str, value: str) -> None:
    """Type into a sidebar field and commit it (Enter), then wait until the app has taken the value."""
    field = _field(page, label)
    field.fill(value)
    field.press("Enter")
    page.wait_for_timeout(300)
    page.get_by_test_id("stStatusWidget").wait_for(state="hidden")


@pytest.mark.timeout(600)
def test_a_page_button_keeps_provider_model_base_url_and_key(tab: tuple[str, Any]) -> None:
    from playwright.sync_api import expect

    url, page = tab
    expect.set_options(timeout=TEXT_TIMEOUT_MS)
    page.goto(f"{url}/trust")
    button = page.get_by_role("button", name="Load trust_labelled.jsonl", exact=False)
    expect(button).to_be_visible()
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").filter(has_text="Provider").click()
    page.get_by_role("option", name="OpenAI-compatible server").click()
    expect(_field(page, "Base URL")).to_be_visible()
    expect(sidebar.get_by_role("combobox", name="Provider")).to_have_value("OpenAI-compatible server")
    _fill(page, "Model", MODEL)
    _fill(page, "API key", KEY)
    _fill(page, "Base URL", BASE_URL)

    button.click()
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible()
    expect(sidebar.get_by_role("combobox", name="Provider")).to_have_value("OpenAI-compatible server")
    expect(_field(page, "Model")).to_have_value(MODEL)
    expect(_field(page, "API key")).to_have_value(KEY)
    expect(_field(page, "Base URL")).to_have_value(BASE_URL)

    # A sidebar link afterwards (the path that always kept them) still does.
    page.get_by_test_id("stSidebarNav").get_by_text("Trust", exact=True).click()
    expect(button).to_be_visible()
    expect(_field(page, "API key")).to_have_value(KEY)
    expect(_field(page, "Base URL")).to_have_value(BASE_URL)


@pytest.mark.timeout(900)
def test_no_provider_name_is_cut_in_the_select_box(tab: tuple[str, Any]) -> None:
    """At 1,400 px (the sidebar's default 300 px) every provider's name fits the select box, in both languages: the
    Japanese offline label was cut at "オフライン（ヒューリスティッ" before it was shortened (issue 39)."""
    url, page = tab
    page.goto(f"{url}/trust")
    sidebar = page.get_by_test_id("stSidebar")
    cut: list[tuple[str, int, int]] = []
    for language in ("日本語", "English"):
        sidebar.get_by_text(language, exact=True).click()
        page.wait_for_timeout(300)
        page.get_by_test_id("stStatusWidget").wait_for(state="hidden")
        box = sidebar.get_by_test_id("stSelectbox").first
        box.click()
        names = page.get_by_role("option").all_inner_texts()
        page.keyboard.press("Escape")
        assert len(names) >= 8, names
        for name in names:
            box.click()
            page.get_by_role("option", name=name, exact=True).click()
            page.wait_for_timeout(300)
            page.get_by_test_id("stStatusWidget").wait_for(state="hidden")
            shown = sidebar.get_by_role("combobox").first.evaluate(
                "e => [e.value, e.scrollWidth, e.clientWidth]")
            assert shown[0] == name
            if shown[1] > shown[2]:
                cut.append((name, shown[1], shown[2]))
    assert cut == []
