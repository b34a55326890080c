"""The schema is one ordered list of named steps and its version is the file's ``PRAGMA user_version``: a new
store takes them all, a store from a newer program is refused (exit 2) and never written, and an older store that
cannot be written is read as it is (its exports the same bytes as the program that wrote it exported) or, when
SQLite cannot read it there, refused with exit 2 saying what to do.

Read-only here is real: the file and its folder made read-only (``chmod``, or ``chattr +i`` for root, whom modes do
not stop); where neither can be done, the store is told the file is read-only and SQLite's ``mode=ro`` still
refuses every write.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.analysis import export
from rageval_core.store import db, engine, migrations
from rageval_core.store.runs import RowInfo, Store

T = TypeVar("T")
FIXTURES = Path(__file__).parent / "fixtures"
RUNS = {"legacy_500ef79": "20261202-134435-d43156", "main_8a158dc": "20261202-163227-4fb2b7"}

# The steps as released, in order. A new step is appended here and in store.migrations; an old one is never
# renamed, moved or removed (a store's version counts the steps it has taken).
RELEASED = (
    "runs_results_call_log", "human_labels", "rubric_versions", "results_repeat_index", "runs_name", "runs_warnings",
    "call_log_reask_structured_output", "batch_jobs", "trust_reports", "local_salt", "light_tables", "label_splits",
    "annotations", "texts", "texts_move", "cache_tables", "light_views", "run_rows_sample",
)


def _load(tmp_path: Path, fixture: str) -> Path:
    path = tmp_path / "store" / f"{fixture}.sqlite"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.executescript(gzip.decompress((FIXTURES / fixture / "store.sql.gz").read_bytes()).decode("utf-8"))
    conn.close()
    return path


def _files(folder: Path) -> dict[str, str]:
    """Every file of ``folder`` by name, with the SHA-256 of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The CLI's exit code and stderr (in this process: a store told it is read-only stays told)."""
    capsys.readouterr()
    code = cli.main(list(args))
    return code, capsys.readouterr().err


def _in_a_new_thread(fn: Callable[[], T]) -> T:
    """``fn()`` on a thread of its own: a new connection, not this thread's (kept read-only) one."""
    out: list[T] = []
    worker = threading.Thread(target=lambda: out.append(fn()))
    worker.start()
    worker.join()
    return out[0]


@contextlib.contextmanager
def _read_only(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    """``folder`` and its files read-only for this process for the duration; yields False when that could not be
    done (root without CAP_LINUX_IMMUTABLE): then the store is told the file is read-only, and SQLite's
    ``mode=ro`` still refuses every write, but the folder itself stays writable."""
    files = [folder, *folder.iterdir()]
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in files}
        for p in files:
            p.chmod(0o555 if p.is_dir() else 0o444)
        try:
            yield True
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    made = subprocess.run(["chattr", "+i", *map(str, files)], capture_output=True)
    if made.returncode != 0:
        monkeypatch.setattr(engine, "_read_only_file", lambda target: True)
    try:
        yield made.returncode == 0
    finally:
        if made.returncode == 0:
            subprocess.run(["chattr", "-i", *map(str, files)], check=True)


def test_the_released_steps_stay_in_order_and_new_ones_are_appended() -> None:
    names = [m.name for m in migrations.MIGRATIONS]
    assert tuple(names[: len(RELEASED)]) == RELEASED and len(set(names)) == len(names)
    assert migrations.SCHEMA_VERSION == len(names)


def test_a_new_store_takes_every_step_and_records_the_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "new.sqlite")
    assert migrations.version(store._conn()) == migrations.SCHEMA_VERSION
    assert migrations.pending(store._conn()) == []


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))


def test_a_store_from_a_newer_program_is_refused_and_never_written(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store" / "newer.sqlite"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE runs (id TEXT PRIMARY KEY)")  # whatever it holds: this program cannot know
    conn.execute(f"PRAGMA user_version = {migrations.SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    before = _files(path.parent)
    with pytest.raises(db.StoreTooNew, match=f"schema version {migrations.SCHEMA_VERSION + 1}"):
        Store(path)
    code, err = _cli(capsys, "--db", str(path), "runs", "list")
    assert code == 2, err
    assert "written by a newer version of rageval" in err and "nothing was written" in err
    assert "Traceback" not in err and "internal error" not in err
    assert _files(path.parent) == before  # not a byte, and no journal or WAL beside it


@pytest.mark.parametrize("fixture", sorted(RUNS))
def test_an_old_store_that_cannot_be_written_is_read_as_it_is(tmp_path: Path, fixture: str,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _load(tmp_path, fixture)
    before = _files(path.parent)
    with _read_only(path.parent, monkeypatch):
        store = Store(path)
        assert db.is_read_only(path) and migrations.version(store._conn()) == 0  # not migrated
        for name, make in {
            "export.csv": lambda p: export.export_csv(store, RUNS[fixture], p),
            "calls.jsonl": lambda p: export.export_calls_jsonl(store, RUNS[fixture], p),
        }.items():
            make(tmp_path / name)  # as the program that wrote the store exported it, byte for byte
            assert (tmp_path / name).read_bytes() == gzip.decompress((FIXTURES / fixture / (name + ".gz")).read_bytes())
        with pytest.raises(sqlite3.Error) as refused:
            store.create_run(scorers=["faithfulness"], rows=[RowInfo("1", 0)])
        assert db.is_unwritable(refused.value)  # a write says the store cannot be written, as the CLI then does
        code, err = _cli(capsys, "--db", str(path), "runs", "export", RUNS[fixture], "--out", str(tmp_path / "cli.csv"))
        assert code == 0, err
    assert _files(path.parent) == before
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "export.csv").read_bytes()
    # writable again: migrated in place on the next open
    assert _in_a_new_thread(lambda: migrations.version(Store(path)._conn())) == migrations.SCHEMA_VERSION


def test_a_read_only_store_sqlite_cannot_read_there_is_refused_with_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store" / "copied.sqlite"
    path.parent.mkdir()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE runs (id TEXT PRIMARY KEY)")
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("copied.sqlite", "copied.sqlite-wal"):  # copied while in use: its -wal beside it, no -shm
        (copy / name).write_bytes((path.parent / name).read_bytes())
    writer.close()
    with _read_only(copy, monkeypatch) as genuine:
        if not genuine:
            pytest.skip("needs a folder this process cannot write (root without CAP_LINUX_IMMUTABLE has none)")
        code, err = _cli(capsys, "--db", str(copy / "copied.sqlite"), "runs", "list")
    assert code == 2, err
    assert "cannot be read as it is" in err and "copy the store to a writable folder" in err
    assert "Traceback" not in err and "internal error" not in err
