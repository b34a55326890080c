"""AppTest: the sidebar's fields (provider, model, key, base URL, limits, language) survive every navigation,
the in-page buttons that call ``st.switch_page`` included (issue 38 item 1).

``st.switch_page`` drops every widget's value, so before the rule in ``rageval_ui.state`` (``kept_widget``)
a button such as Trust's "Load ... and go to Evaluate" put the sidebar back to Offline and emptied the key.
The browser test of the same walk is in tests/e2e/test_browser_sidebar_state.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.providers.config import PROVIDERS
from rageval_ui import nav, state
from rageval_ui.i18n import LANG
from tests.support.apptest import assert_ok, start_app

WIDGET_KINDS = ("selectbox", "text_input", "text_area", "number_input", "radio", "checkbox", "toggle",
                "multiselect", "slider", "select_slider")


def sidebar_widgets(at: AppTest) -> dict[str, Any]:
    """Every keyed widget drawn in the sidebar, by key."""
    return {w.key: w for kind in WIDGET_KINDS for w in at.sidebar.get(kind) if getattr(w, "key", None)}


def page_switch_button(at: AppTest):
    """Trust's button that loads the labelled sample and calls st.switch_page (shown while no run is stored)."""
    return next(b for b in at.button if (b.key or "").startswith("trust.sample."))


def typed_value(key: str, widget: Any, provider: str) -> Any:
    """A value for ``widget`` that no default or other provider has."""
    if widget.type == "number_input":
        return {state.RPM: 60, state.TPM: 6000, state.CONCURRENCY: 3}.get(key, 7)
    return f"{provider}:{key}:typed"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home", nav.TRUST.path)


def test_every_keyed_sidebar_widget_is_a_kept_field(app: AppTest) -> None:
    """A field a new provider adds must be registered with state.kept_widget, or a page button empties it."""
    seen: set[str] = set()
    for provider in PROVIDERS:
        app.selectbox(key=state.PROVIDER).set_value(provider).run()
        assert_ok(app)
        seen |= set(sidebar_widgets(app))
    assert seen, "no keyed widget found in the sidebar"
    assert seen <= set(state.KEPT_WIDGETS), sorted(seen - set(state.KEPT_WIDGETS))
    assert {state.PROVIDER, state.API_KEY, state.MODEL, state.BASE_URL, LANG} <= seen


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_a_page_button_keeps_provider_fields_and_language(app: AppTest, provider: str) -> None:
    app.radio(key=LANG).set_value("ja").run()
    app.selectbox(key=state.PROVIDER).set_value(provider).run()
    typed: dict[str, Any] = {}
    for key, widget in sidebar_widgets(app).items():
        if key in (state.PROVIDER, LANG):
            continue
        typed[key] = typed_value(key, widget, provider)
        widget.set_value(typed[key]).run()
    page_switch_button(app).click().run()
    assert_ok(app)
    assert app.title[0].value == f"{nav.EVALUATE.icon} 評価"  # the button did switch page, in Japanese
    assert app.selectbox(key=state.PROVIDER).value == provider
    assert app.radio(key=LANG).value == "ja"
    shown = {key: widget.value for key, widget in sidebar_widgets(app).items() if key in typed}
    assert shown == typed
    # And a rerun after it (the next click anywhere) still holds them.
    app.run()
    assert {key: widget.value for key, widget in sidebar_widgets(app).items() if key in typed} == typed


def test_a_key_typed_after_a_page_button_is_taken_not_the_kept_one(app: AppTest) -> None:
    """The kept copy follows the browser: a change made after the switch wins over the value kept before it."""
    app.selectbox(key=state.PROVIDER).set_value("openai").run()
    app.text_input(key=state.API_KEY).set_value("sk-first").run()
    page_switch_button(app).click().run()
    app.text_input(key=state.API_KEY).set_value("sk-second").run()
    app.switch_page(nav.TRUST.path).run()
    assert app.text_input(key=state.API_KEY).value == "sk-second"
    page_switch_button(app).click().run()
    assert app.text_input(key=state.API_KEY).value == "sk-second"


def test_switching_provider_after_a_page_button_still_keeps_keys_apart(app: AppTest) -> None:
    """The per-provider fields (a key typed for OpenAI is never shown to Gemini) survive the page switch too."""
    app.selectbox(key=state.PROVIDER).set_value("openai").run()
    app.text_input(key=state.API_KEY).set_value("sk-openai-only").run()
    page_switch_button(app).click().run()
    app.selectbox(key=state.PROVIDER).set_value("gemini").run()
    assert app.text_input(key=state.API_KEY).value == ""
    app.selectbox(key=state.PROVIDER).set_value("openai").run()
    assert app.text_input(key=state.API_KEY).value == "sk-openai-only"
