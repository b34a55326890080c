"""Store faults (issue 36 item 6): a corrupted or non-SQLite store ends in exit 2 naming the file and what to do and
is never written; a read-only store (a 0400 file, a read-only folder) is read with a note and refused by evaluate up
front; the program tightens the modes of files it finds but never widens them; a RAGEVAL_HOME that is not a folder
is said as such. Every command that opens the store is run in this process (``cli.main``) on a copy of one store.

Read-only here is the file's or folder's mode, which the store honours even for root (whom the kernel would let
write): so these tests run the same as a user and as root, without chattr. Only "a folder that cannot be made"
needs the kernel to refuse, and skips as root.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.core import private
from rageval_core.store import db

ROOT = Path(__file__).resolve().parents[2]
DATA = str(ROOT / "sample_data" / "ml_qa_ja.json")
STORE = "rageval.sqlite"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One store with one offline run in it, written by another process (closed: no -wal beside it), and the run id."""
    home = tmp_path_factory.mktemp("made")
    done = subprocess.run([sys.executable, "-m", "rageval_core", "evaluate", DATA, "--provider", "offline",
                           "--metrics", "faithfulness", "--out", str(home / "run.json")], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**os.environ, "RAGEVAL_HOME": str(home / "state")})
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split("run ", 1)[1].split()[0]
    conn = sqlite3.connect(home / "state" / STORE)  # the last connection: its close folds the WAL in and removes it
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert sorted(p.name for p in (home / "state").iterdir() if p.name.startswith(STORE)) == [STORE]
    return home / "state" / STORE, run_id


@pytest.fixture()
def state(made: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the made store in this test's RAGEVAL_HOME (its folder made writable again afterwards)."""
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    shutil.copy2(made[0], home / STORE)
    os.chmod(home / STORE, 0o600)
    monkeypatch.setenv("RAGEVAL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    yield home
    os.chmod(home, 0o700)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _random(path: Path) -> None:
    path.write_bytes(random.Random(36).randbytes(200_000))


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _text(path: Path) -> None:
    path.write_text("runs,results\nthis is a CSV someone saved over the store\n", encoding="utf-8")


def _damaged_page(path: Path) -> None:
    """Page 2 overwritten: the header and the version read fine ("database disk image is malformed" on a query)."""
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    data[size: 2 * size] = b"\xff" * size
    path.write_bytes(bytes(data))


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "random bytes": _random, "truncated to a third": _truncated, "a text file": _text, "a damaged page": _damaged_page,
}


def _commands(run_id: str, out: Path) -> dict[str, list[str]]:
    return {
        "runs list": ["runs", "list"],
        "runs export": ["runs", "export", run_id, "--out", str(out / "export.json")],
        "runs calls": ["runs", "calls", run_id, "--out", str(out / "calls.jsonl")],
        "evaluate": ["evaluate", DATA, "--provider", "offline", "--metrics", "faithfulness", "--out", str(out / "e.json")],
        "compare": ["compare", run_id, run_id],
        "report": ["report", run_id, "--out", str(out / "report.html")],
        "trust": ["trust", run_id],
        "annotate": ["annotate", run_id],
    }


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_corrupted_store_is_exit_2_naming_the_file_and_what_to_do_and_is_never_written(
        state: Path, made: tuple[Path, str], corruption: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = state / STORE
    CORRUPTIONS[corruption](path)
    before = _sha(path)
    for name, args in _commands(made[1], state.parent).items():
        code, _out, err = _cli(capsys, *args)
        assert code == 2, (name, err)
        assert f"the store {path} is not a readable SQLite database" in err, (name, err)
        assert "Move it aside or restore it from a backup" in err and "RAGEVAL_HOME" in err, (name, err)
        assert "internal error" not in err and "Traceback" not in err, (name, err)
        assert _sha(path) == before, name  # never written, never "repaired"
    assert not (state / "logs").exists()  # no crash log: not a bug
    assert not (state.parent / "e.json").exists()  # evaluate computed nothing


def test_a_corrupted_store_named_by_db_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    path = tmp_path / "elsewhere.sqlite"
    _text(path)
    code, _out, err = _cli(capsys, "--db", str(path), "runs", "list")
    assert code == 2 and f"the store {path} is not a readable SQLite database (file is not a database)" in err


def test_an_empty_file_is_a_new_store_as_sqlite_reads_it(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Zero bytes is what an interrupted first open leaves: SQLite reads it as an empty database, and so do we."""
    (state / STORE).write_bytes(b"")
    code, out, _err = _cli(capsys, "runs", "list")
    assert code == 0 and "no runs yet" in out


def test_a_store_locked_by_another_process_while_opening_says_so(tmp_path: Path) -> None:
    path = tmp_path / STORE
    path.write_bytes(b"")  # zero bytes, and another process holds a lock on the whole file
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0);"
        " print('held', flush=True); time.sleep(60)"), str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(db.StoreBusy, match=f"the store {path} is locked by another process"):
            db.connect(path, busy_timeout_s=0.2)
        assert time.monotonic() - started < 10
    finally:
        holder.kill()
        holder.wait()
    assert path.read_bytes() == b""


def _read_only_file(state: Path) -> Path:
    os.chmod(state / STORE, 0o400)
    return state / STORE


def _read_only_folder(state: Path) -> Path:
    os.chmod(state, 0o500)
    return state / STORE


@pytest.mark.parametrize(("how", "why"), [(_read_only_file, "the file is not writable"),
                                          (_read_only_folder, "its folder is not writable")])
def test_a_read_only_store_is_read_with_a_note_and_evaluate_is_refused_up_front(
        state: Path, made: tuple[Path, str], how: Callable[[Path], Path], why: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    run_id = made[1]
    out_dir = state.parent / "out"
    out_dir.mkdir()
    # the same run exported from the writable original (a connection this thread keeps is writable: not the copy's)
    assert _cli(capsys, "--db", str(made[0]), "runs", "export", run_id, "--out", str(out_dir / "writable.json"))[0] == 0
    path = how(state)
    mode, before, files = _mode(path), _sha(path), sorted(p.name for p in state.iterdir())
    note = f"note: the store {path} is read-only ({why}): runs and labels are shown, nothing can be saved"

    code, out, err = _cli(capsys, "runs", "list")
    assert code == 0 and run_id in out and note in err, err
    code, _out, err = _cli(capsys, "runs", "export", run_id, "--out", str(out_dir / "read_only.json"))
    assert code == 0 and note in err, err
    assert (out_dir / "read_only.json").read_bytes() == (out_dir / "writable.json").read_bytes()
    code, out, err = _cli(capsys, "trust", run_id)
    assert code == 0 and f"trust report of run {run_id}" in out, err
    assert "so this could not be saved (save trust report)" in err

    code, out, err = _cli(capsys, *_commands(run_id, out_dir)["evaluate"])
    assert code == 2, err
    assert f"the store {path} is read-only ({why}): evaluate keeps its results there, so nothing was run" in err
    assert "chmod u+w" in err and "RAGEVAL_HOME" in err and "estimate" not in err  # refused before any estimate
    assert not (out_dir / "e.json").exists()
    code, _out, err = _cli(capsys, "annotate", run_id, "--settle", "ml-001", "faithfulness", "1", "--by", "ann")
    assert code == 2 and f"the store {path} is read-only ({why}), so this could not be saved" in err, err
    assert "internal error" not in err

    assert (_mode(path), _sha(path), sorted(p.name for p in state.iterdir())) == (mode, before, files)


def test_modes_are_tightened_never_widened(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = state / STORE
    os.chmod(path, 0o640)  # group-readable (an older version's, or a copy): tightened
    assert _cli(capsys, "runs", "list")[0] == 0
    assert _mode(path) == 0o600
    for found, kept in ((0o644, 0o600), (0o444, 0o400), (0o400, 0o400), (0o200, 0o200), (0o700, 0o700)):
        other = state.parent / f"mode-{found:o}.txt"
        other.write_text("x", encoding="utf-8")
        os.chmod(other, found)
        private.tighten_file(other)
        assert _mode(other) == kept, f"{found:o}"
    write_only = state.parent / "write-only.jsonl"  # a file its owner may write but not read: never made readable
    write_only.write_text("", encoding="utf-8")
    os.chmod(write_only, 0o200)
    with private.open_private(write_only, "a") as fh:
        fh.write("added\n")
    assert _mode(write_only) == 0o200
    fresh = private.write_private_text(state.parent / "fresh.txt", "new")
    assert _mode(fresh) == 0o600


def test_a_read_only_store_keeps_its_mode_after_every_command(state: Path, made: tuple[Path, str],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = _read_only_file(state)
    for args in _commands(made[1], state.parent).values():
        _cli(capsys, *args)
        assert _mode(path) == 0o400, args


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_rageval_home_that_is_not_a_folder_is_exit_2_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str], where: str) -> None:
    blocking = tmp_path / "state"
    blocking.write_text("not a folder\n", encoding="utf-8")
    monkeypatch.setenv("RAGEVAL_HOME", str(blocking if where == "a file" else blocking / "sub"))
    monkeypatch.chdir(tmp_path)
    for args in (["runs", "list"], _commands("x", tmp_path)["evaluate"]):
        code, _out, err = _cli(capsys, *args)
        assert code == 2, err
        assert f"the state folder {blocking} (RAGEVAL_HOME, or ./.rageval when it is unset) is a file, not a folder" in err
        assert "internal error" not in err
    assert blocking.read_text(encoding="utf-8") == "not a folder\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may make a folder anywhere: the kernel never refuses it")
def test_rageval_home_that_cannot_be_made_is_exit_2_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    parent = tmp_path / "locked"
    parent.mkdir(mode=0o500)
    monkeypatch.setenv("RAGEVAL_HOME", str(parent / "state"))
    try:
        code, _out, err = _cli(capsys, "runs", "list")
    finally:
        os.chmod(parent, 0o700)
    assert code == 2 and f"cannot make the state folder {parent / 'state'}" in err and "Permission denied" in err


def test_a_damaged_page_found_by_a_query_is_said_as_the_store_not_as_a_bug(state: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The open reads only the schema; damage found by a later query reaches the CLI's last resort as SQLite's own
    error, which it says as the store's fault (exit 2), with the file."""
    path = state / STORE
    conn = sqlite3.connect(path)
    pages = [r[0] for r in conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'results'")]
    conn.close()
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    start = (pages[0] - 1) * size
    data[start: start + size] = b"\x00" * 8 + b"\xff" * (size - 8)
    path.write_bytes(bytes(data))
    code, _out, err = _cli(capsys, "runs", "list")
    assert code == 2 and f"the store {path} is not a readable SQLite database" in err, err
