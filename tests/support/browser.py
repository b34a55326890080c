"""The browser tests' rule for a missing browser: a skip with the reason locally, a failure under
RAGEVAL_REQUIRE_E2E=1, as on CI. Chromium, the app server and the in-page timer are in bench/browser.py, which the
browser bench shares."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from bench.browser import CHROMIUM, CHROMIUM_ARGS


def unavailable(reason: str) -> None:
    if os.environ.get("RAGEVAL_REQUIRE_E2E") == "1":
        pytest.fail(f"RAGEVAL_REQUIRE_E2E=1 but {reason}")
    pytest.skip(reason)


def require_browser() -> None:
    """Chromium and the playwright package, or ``unavailable``."""
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is missing (apt-get install chromium fonts-noto-cjk)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("the playwright package is not installed (pip install -r requirements-dev.txt)")


TEXT_TIMEOUT_MS = 90_000  # a deadline to wait for text on a loaded 2-core machine, not a timing assertion


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium through playwright (or ``unavailable``), closed on exit: the browser tests' one launch."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def new_tab(browser: Any, *, width: int = 1400, height: int = 1000, locale: str = "en-US") -> Any:
    """A page in a fresh context (its own cookies and session) of ``width`` × ``height`` in ``locale``."""
    tab = browser.new_context(viewport={"width": width, "height": height}, locale=locale).new_page()
    tab.set_default_timeout(TEXT_TIMEOUT_MS)
    return tab
