"""Shared AppTest helpers: start app.py in a tmp RAGEVAL_HOME with no provider keys, and find elements by label."""

from __future__ import annotations

import re
from typing import Any
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_ui.state import COMPARE_TAB

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY")


def assert_ok(at: AppTest, *, any_error: bool = False) -> None:
    """No exception and no page-level error message (app.py turns page exceptions into messages).

    With ``any_error`` every ``st.error`` counts, not only the page-level one.
    """
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error if any_error or "unexpected error" in e.value]
    assert not errors, errors


def start_app(monkeypatch: pytest.MonkeyPatch, home: Path | str, page: str | None = None, *,
              timeout: float = 60, check: bool = True, any_error: bool = False, locale: str | None = None,
              sample: str | None = None) -> AppTest:
    """app.py run once with state in ``home`` and no API key in the environment, then switched to ``page``.

    ``locale``: the browser's language (``st.context.locale``; none by default, as AppTest sends none: English).
    ``sample``: a shipped sample file loaded as if picked on the Dataset page, in place of the landing sample (which
    follows the UI language: ml_qa_en.json in English)."""
    monkeypatch.setenv("RAGEVAL_HOME", str(home))
    for name in KEY_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if locale is not None:
        at.context = {"locale": locale}
    if sample is not None:
        from rageval_ui import data

        ws = data.load_sample_file(sample)
        at.session_state["dataset"] = ws
        at.session_state["pinned"] = set(data.default_pins(ws))
    at.run()
    if page is not None:
        at.switch_page(page).run()
    if check:
        assert_ok(at, any_error=any_error)
    return at


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def button(at: AppTest, label: str):
    """The button whose label reads ``label`` (labels holding data are escaped Markdown: compared as shown)."""
    return next(b for b in at.button if plain(b.label) == label)


def compare_tab(at: AppTest, label: str) -> AppTest:
    """Open one of Compare's tabs (``COMPARE_TAB``: a tab runs only when open) as a click on it does."""
    at.session_state[COMPARE_TAB] = label
    return at.run()


_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def plain(text: str) -> str:
    """Markdown source as a reader sees it: backslash escapes and word joiners (``ui.safe_text.md_escape``) removed."""
    return _MD_ESCAPE.sub(r"\1", str(text)).replace("\u2060", "")


def set_kept(app: Any, key: str, value: Any) -> None:
    """A sidebar field set as if typed: the widget's key and its kept copy (rageval_ui.state.bind), which the
    sidebar puts back on every run."""
    app.session_state[key] = value
    app.session_state[f"{key}.kept"] = value
