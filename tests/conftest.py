"""Fixtures shared across test modules, and the CI rule that a skip is a failure unless allow-listed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.skips import ALLOWED_SKIPS, allowed, strict_skips


@pytest.fixture()
def server() -> Iterator[FakeLLMServer]:
    """The local fake OpenAI + Gemini server with its default responder (a module that needs another
    responder, or a real app server, defines its own ``server``)."""
    with FakeLLMServer() as srv:
        yield srv


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private state folder (RAGEVAL_HOME) and working directory in this test's tmp_path; a module may override it."""
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(autouse=True)
def _forget_remembered_secrets() -> Iterator[None]:
    """Each test starts with no remembered secrets (rageval_core.core.redact keeps them for the process)."""
    from rageval_core.core import redact

    redact.forget_all()
    yield
    redact.forget_all()


@pytest.fixture(autouse=True)
def _forget_structured_output_levels() -> None:
    """Each test starts with no remembered structured-output drops: the memory is process-wide and keyed by endpoint,
    and a local server on a reused port would inherit an earlier test's drop (a gemini run then sent 48 calls, not 36)."""
    from rageval_core.llm.structured import LADDER

    LADDER.forget()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Under RAGEVAL_STRICT_SKIPS=1 (CI) a skipped test that is not in tests/support/skips.py's
    ALLOWED_SKIPS is reported as failed, with the skip's reason."""
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and strict_skips()) or hasattr(report, "wasxfail") or allowed(report.nodeid):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under RAGEVAL_STRICT_SKIPS=1 (CI), and not in ALLOWED_SKIPS "
        f"({len(ALLOWED_SKIPS)} entries, tests/support/skips.py): {reason}"
    )
