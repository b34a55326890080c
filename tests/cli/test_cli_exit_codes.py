"""Exit codes from the error tree: an error that escapes a command exits with its branch's code (docs/cli.md), says
its message on one stderr line, and leaves no crash log; only errors outside the tree are internal (exit 3)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.cli import EXIT_CODES, exit_code
from rageval_core.core.errors import ConfigError, DataError, ProviderError, RagevalError, ResultsNotKept, StoreError, UsageError
from rageval_core.data.datasets import DatasetError
from rageval_core.run.batch import BatchCancelled, BatchError
from rageval_core.run.plan import RunError
from rageval_core.scoring.rubric import RubricError
from rageval_core.store.db import StoreBusy


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """``runs list`` raises ``exc`` where it opens the store."""

    def broken(_args: object) -> None:
        raise exc

    monkeypatch.setattr("rageval_core.cli.runs.open_store", broken)


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (DataError("rows.json: row 3: 'question' is empty"), 2),
        (DatasetError("rows.json: not a JSON array"), 2),
        (ConfigError("judges.yaml: judge 1: unknown provider 'nope'"), 2),
        (RubricError("rubric.json: no criteria"), 2),
        (UsageError("--limit must be at least 1"), 2),
        (RunError("no run 'r-404'"), 2),
        (StoreError("store.sqlite: written by a newer program"), 2),
        (StoreBusy("database is locked after 5 tries"), 2),
        (ProviderError("no OPENAI_API_KEY", kind="missing_key"), 2),
        (BatchError("batch job b-1 failed: quota"), 2),
        (RagevalError("a message for the user"), 2),
    ],
)
def test_an_error_of_each_branch_exits_with_its_code_and_one_line(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], exc: RagevalError, code: int
) -> None:
    _raising(monkeypatch, exc)
    assert cli.main(["runs", "list"]) == code
    err = capsys.readouterr().err
    assert err == f"error: {exc}\n"
    assert not (home / "home" / "logs").exists() or not list((home / "home" / "logs").glob("internal-error-*"))


def test_an_interrupt_and_a_cancelled_batch_exit_130(home: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    for exc in (KeyboardInterrupt(), BatchCancelled("stopped while job b-1 runs"),
                ProviderError("run cancelled", kind="cancelled")):
        _raising(monkeypatch, exc)
        assert cli.main(["runs", "list"]) == 130
        assert capsys.readouterr().err == "aborted\n"


def test_an_error_outside_the_tree_is_internal_with_a_log(home: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    _raising(monkeypatch, KeyError("planted"))
    assert cli.main(["runs", "list"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("internal error (KeyError); traceback in ") and len(err.strip().splitlines()) == 1
    assert len(list((home / "home" / "logs").glob("internal-error-*.log"))) == 1


def test_a_store_error_from_a_full_disk_says_so(home: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    busy = StoreBusy("write failed after retries")
    busy.__cause__ = sqlite3.OperationalError("database or disk is full")
    _raising(monkeypatch, busy)
    assert cli.main(["runs", "list"]) == 2
    assert "a full disk or a read-only folder" in capsys.readouterr().err


def test_the_table_covers_every_branch_most_specific_first() -> None:
    classes = [cls for cls, _code in EXIT_CODES]
    assert set(classes) == {ResultsNotKept, DataError, ConfigError, StoreError, ProviderError, RagevalError}
    for i, cls in enumerate(classes):  # a class listed after one of its bases would never be reached
        assert not any(issubclass(cls, earlier) for earlier in classes[:i]), cls
    assert exit_code(ValueError("not ours")) == 3 and exit_code(KeyboardInterrupt()) == 130
    assert exit_code(ResultsNotKept("a full disk")) == 4 and exit_code(StoreError("locked")) == 2
