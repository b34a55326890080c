"""The pytest plugin (entry point ``pytest11``, named after this module so ``-p rageval_core.testing.plugin``
and an installed package never load it twice).

- ``--rageval-provider`` / ``--rageval-model`` / ``--rageval-base-url``: the judge (else ``RAGEVAL_PROVIDER``,
  else the provider whose key is set; the offline judge only when named);
- ``rageval`` fixture (session): a ``Judge`` with ``score(rows, metrics, judges)`` and ``assert_scores(rows,
  thresholds, mode)``;
- ``@pytest.mark.rageval``: marks tests that need a judge (so does using the fixture).

A test needing a judge is skipped, with the reason, only when no judge is chosen at all, and not even then under
``--rageval-require`` or ``RAGEVAL_REQUIRE_JUDGE=1`` (CI: a gate that cannot judge must not go green). A provider
name that does not exist (``--rageval-provider nonexistent``, ``RAGEVAL_PROVIDER=offlne``) is a usage error and a
named provider that cannot run (no key) an error: every such test fails with the message. A missed threshold fails
with every row under it, its score and the judge's reason. At the end a ``rageval`` section sums the session up:
the judge, the tests that scored, each metric × method's mean beside its threshold, pass / fail, the run ids, and
how many tests were skipped or failed before scoring, and why.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from rageval_core.testing.judge import Judge, JudgeChoice, JudgeProblem, choose, problem
from rageval_core.testing.summary import SessionRecord, skip_reason

MARKER = "rageval"
FIXTURE = "rageval"
REQUIRE_ENV = "RAGEVAL_REQUIRE_JUDGE"
RECORD = pytest.StashKey[SessionRecord]()
CHOICE = pytest.StashKey[tuple[JudgeChoice, JudgeProblem | None]]()
NEEDING = pytest.StashKey[set[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rageval", "RAG Eval Workbench: score rows with a judge and assert thresholds")
    group.addoption("--rageval-provider", default=None, help="judge provider: offline, gemini, openai, openai-compatible, replay")
    group.addoption("--rageval-model", default=None, help="judge model (default: the provider's)")
    group.addoption("--rageval-base-url", default=None, help="base URL of an openai-compatible server")
    group.addoption("--rageval-db", default=None, help="SQLite store for the runs and the response cache (default .rageval/)")
    group.addoption("--rageval-require", action="store_true", default=False,
                    help=f"fail, not skip, the tests needing a judge when none is chosen (CI); also {REQUIRE_ENV}=1")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: needs a judge; skipped unless --rageval-provider, RAGEVAL_PROVIDER "
                                       f"or a provider key chooses one (failed instead under --rageval-require)")
    choice = choose(config.getoption("--rageval-provider"), config.getoption("--rageval-model"),
                    config.getoption("--rageval-base-url"))
    config.stash[CHOICE] = (choice, problem(choice))
    config.stash[RECORD] = SessionRecord(judge=choice.label())
    config.stash[NEEDING] = set()


def _required(config: pytest.Config) -> bool:
    return bool(config.getoption("--rageval-require")) or os.environ.get(REQUIRE_ENV, "").strip().lower() in ("1", "true", "yes")


def _stop(config: pytest.Config) -> None:
    """Skip or fail the test at hand when the session's judge cannot run (module docstring)."""
    found = config.stash[CHOICE][1]
    if found is None:
        return
    if found.is_skip(_required(config)):
        pytest.skip(found.message)
    pytest.fail(found.message + (f" ({REQUIRE_ENV} / --rageval-require: a judge is required)"
                                 if found.is_skip(False) else ""), pytrace=False)


def pytest_report_header(config: pytest.Config) -> str:
    choice, found = config.stash[CHOICE]
    line = f"rageval: {choice.label()}"
    if found is not None and not found.is_skip(_required(config)):
        line += f" — {found.message}"
    return line


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker(MARKER) is None and FIXTURE not in getattr(item, "fixturenames", ()):
        return
    item.config.stash[NEEDING].add(item.nodeid)
    item.config.stash[RECORD].current = item.nodeid
    _stop(item.config)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    if item.nodeid not in item.config.stash[NEEDING]:
        return
    record = item.config.stash[RECORD]
    if report.when == "setup" and report.skipped:
        record.report(item.nodeid, "skipped", skip_reason(report), stopped=False)
    elif report.when == "setup" and report.failed:
        record.report(item.nodeid, "failed", report.longreprtext.strip().splitlines()[-1] if report.longreprtext else None,
                      stopped=item.config.stash[CHOICE][1] is not None)
    elif report.when == "call":
        record.report(item.nodeid, "skipped" if report.skipped else report.outcome,
                      skip_reason(report) if report.skipped else None, stopped=False)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not config.stash.get(NEEDING, None):
        return
    terminalreporter.section("rageval summary")
    for line in config.stash[RECORD].text():
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def rageval(pytestconfig: pytest.Config) -> Any:
    """The session's judge: ``rageval.assert_scores(rows, {"faithfulness": 0.7})``."""
    _stop(pytestconfig)
    choice = pytestconfig.stash[CHOICE][0]
    return Judge(choice, pytestconfig.getoption("--rageval-db"), record=pytestconfig.stash[RECORD])
