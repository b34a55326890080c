"""AppTest: the Evaluate page says how the estimate's tokens were counted (issue 39 item 7): by o200k_base for an
OpenAI model, approximate offline, and for Claude by its token-counting endpoint after a click (through the local
fake server), kept while the settings stay the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.testing.fake_llm import FakeLLMServer
from rageval_ui import state
from tests.support.apptest import assert_ok, button, start_app

KEY = "sk-ui-tokens-0123456789abcdef"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/evaluate.py")


def captions(app: AppTest) -> str:
    return " ".join(c.value for c in app.main.caption)


def test_offline_tokens_are_said_to_be_approximate(app: AppTest) -> None:
    assert "Tokens approximate: ~4 ASCII characters or ~1 kana / kanji a token" in captions(app)
    assert not [b for b in app.button if b.key == "evaluate.count_tokens"]


def test_openai_tokens_are_counted_by_o200k(app: AppTest) -> None:
    app.sidebar.selectbox(key=state.PROVIDER).set_value("openai").run()
    app.sidebar.text_input(key=state.API_KEY).set_value(KEY).run()
    assert_ok(app)
    assert "Tokens counted by o200k_base." in captions(app).replace("\\", "")


def test_claude_tokens_are_counted_by_its_endpoint_on_a_click(app: AppTest) -> None:
    with FakeLLMServer() as server:
        app.sidebar.selectbox(key=state.PROVIDER).set_value("anthropic").run()
        for key, value in ((state.API_KEY, KEY), (state.BASE_URL, server.url)):
            app.sidebar.text_input(key=key).set_value(value).run()
        assert_ok(app)
        assert "Tokens approximate" in captions(app)
        before = app.metric[2].value
        button(app, "Count tokens with the provider's endpoint").click().run()
        assert_ok(app)
        counted = [r for r in server.requests if r.path == "/v1/messages/count_tokens"]
        assert len(counted) > 10 and not [r for r in server.requests if r.path == "/v1/messages"]
        said = captions(app).replace("\\", "")
        assert "Tokens counted by anthropic count_tokens (claude-haiku-4-5)." in said
        assert app.metric[2].value != before
        app.run()  # kept while nothing changed: no second count
        assert len([r for r in server.requests if r.path == "/v1/messages/count_tokens"]) == len(counted)
        assert "Tokens counted by anthropic count_tokens" in captions(app).replace("\\", "")
        app.sidebar.text_input(key=state.MODEL).set_value("claude-sonnet-4-5").run()  # another model: counted again on a click
        assert "Tokens approximate" in captions(app)
