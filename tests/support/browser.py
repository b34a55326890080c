"""The browser tests' rule for a missing browser: a skip with the reason locally, a failure under
RAGEVAL_REQUIRE_E2E=1, as on CI. Chromium, the app server and the in-page timer are in bench/browser.py, which the
browser bench shares."""

from __future__ import annotations

import os

import pytest

from bench.browser import CHROMIUM


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
