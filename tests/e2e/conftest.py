"""The browser tests' shared fixtures: the app server on a module's ``home`` (each module makes its own state dir,
with the runs it needs stored) and one Chromium for the module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.browser import streamlit_app
from tests.support.browser import chromium, require_browser


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[str]:
    """The workbench served from the module's ``home`` fixture."""
    require_browser()
    with streamlit_app(home) as url:
        yield url


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[Any]:
    """A headless Chromium for the module, launched once the server is up."""
    with chromium() as launched:
        yield launched
