"""Fixtures shared across test modules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_server import FakeLLMServer


@pytest.fixture()
def server() -> Iterator[FakeLLMServer]:
    """The local fake OpenAI + Gemini server with its default responder (a module that needs another
    responder, or a real app server, defines its own ``server``)."""
    with FakeLLMServer() as srv:
        yield srv
