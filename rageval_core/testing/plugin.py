"""The pytest plugin (entry point ``pytest11``, named after this module so ``-p rageval_core.testing.plugin``
and an installed package never load it twice).

- ``--rageval-provider`` / ``--rageval-model`` / ``--rageval-base-url``: the judge (else ``RAGEVAL_PROVIDER``,
  else the provider whose key is set; the offline judge only when named);
- ``rageval`` fixture (session): a ``Judge`` with ``score(rows, metrics, judges)`` and ``assert_scores(rows,
  thresholds, mode)``; it skips the test, with the reason, when no judge can run;
- ``@pytest.mark.rageval``: the marked tests run only when a judge is chosen and usable (skipped otherwise).

A missed threshold fails with every row under it, its score and the judge's reason.
"""

from __future__ import annotations

from typing import Any

import pytest

from rageval_core.testing.judge import Judge, JudgeChoice, choose, unavailable

MARKER = "rageval"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rageval", "RAG Eval Workbench: score rows with a judge and assert thresholds")
    group.addoption("--rageval-provider", default=None, help="judge provider: offline, gemini, openai, openai-compatible, replay")
    group.addoption("--rageval-model", default=None, help="judge model (default: the provider's)")
    group.addoption("--rageval-base-url", default=None, help="base URL of an openai-compatible server")
    group.addoption("--rageval-db", default=None, help="SQLite store for the runs and the response cache (default .rageval/)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: needs a judge; skipped unless --rageval-provider, RAGEVAL_PROVIDER "
                                       "or a provider key chooses one")


def _choice(config: pytest.Config) -> JudgeChoice:
    return choose(config.getoption("--rageval-provider"), config.getoption("--rageval-model"),
                  config.getoption("--rageval-base-url"))


def pytest_report_header(config: pytest.Config) -> str:
    return f"rageval: {_choice(config).label()}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker(MARKER) is not None:
        reason = unavailable(_choice(item.config))
        if reason:
            pytest.skip(reason)


@pytest.fixture(scope="session")
def rageval(pytestconfig: pytest.Config) -> Any:
    """The session's judge: ``rageval.assert_scores(rows, {"faithfulness": 0.7})``."""
    choice = _choice(pytestconfig)
    reason = unavailable(choice)
    if reason:
        pytest.skip(reason)
    return Judge(choice, pytestconfig.getoption("--rageval-db"))
