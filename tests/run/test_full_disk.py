"""A store whose disk fills mid-run never ends in success (issue 27, issue 36 item 2).

The full disk is SQLite's own page cap (``PRAGMA max_page_count``, a genuine "database or disk is full"), set through
the test hook ``RAGEVAL_TEST_STORE_ROOM_PAGES`` (``store/db.py``), so these run in a user's clone without root. The
run ends with exit 4 (results not kept); every computed result is in the spill file (room set aside before the run)
or the ``--out`` export, the export says it is incomplete, ``--fail-under`` is judged on every computed result, the
message says what was lost and how to resume, and ``--resume`` writes the spilled results back without scoring them
again. Before, the run printed "(done)" and exited 0, the spill file was written on the same full disk (0 bytes),
the export held what the store held, and the thresholds were judged on the stored rows alone."""

from __future__ import annotations

import csv
import errno
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.core.types import MetricResult
from rageval_core.run import spill
from rageval_core.store import migrations
from rageval_core.store.db import ROOM_PAGES_ENV
from rageval_core.store.runs import Store

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "sample_data" / "ml_qa_en.json"  # 12 rows
FLAGS = ["--provider", "offline", "--metrics", "faithfulness,context_recall", "--judge", "rubric5", "--quiet"]
RESULTS = 12 * 6  # 2 metrics + rubric5's 4 criteria a row


def _cli(tmp_path: Path, home: Path, *args: str, room: int | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m rageval_core`` as a user runs it, the store's disk "full" after ``room`` more pages."""
    env = {**os.environ, "RAGEVAL_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop(ROOM_PAGES_ENV, None)
    if room is not None:
        env[ROOM_PAGES_ENV] = str(room)
    return subprocess.run([sys.executable, "-m", "rageval_core", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def _pages(home: Path) -> int:
    with sqlite3.connect(home / "rageval.sqlite") as conn:
        return int(conn.execute("PRAGMA page_count").fetchone()[0])


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> int:
    """A third of what one whole run adds to a store: the disk fills a third of the way through the run."""
    tmp = tmp_path_factory.mktemp("measure")
    home = tmp / "home"
    first = _cli(tmp, home, "runs", "list")
    assert first.returncode == 0, first.stderr
    before = _pages(home)
    done = _cli(tmp, home, "evaluate", str(DATA), *FLAGS, "--out", str(tmp / "whole.json"))
    assert done.returncode == 0, done.stderr
    return max(1, (_pages(home) - before) // 3)


def _flat(export: dict) -> dict[tuple[str, str, str, str | None], float | None]:
    return {(row["id"], r["metric"], r["method"], r.get("judge")): r["value"] for row in export["rows"] for r in row["results"]}


def test_a_full_disk_ends_in_exit_4_with_every_result_kept_and_the_resume_completes_the_run(tmp_path, room):
    home = tmp_path / "home"
    assert _cli(tmp_path, home, "runs", "list").returncode == 0  # the store exists: the cap counts from here
    out = tmp_path / "out" / "results.json"
    out.parent.mkdir()
    gate = ["--fail-under", "faithfulness=0.0"]  # a gate every run passes: only exit 4 can say it was partial
    full = _cli(tmp_path, home, "evaluate", str(DATA), *FLAGS, "--out", str(out), *gate, room=room)

    assert full.returncode == 4, full.stderr
    err = full.stderr
    assert "Traceback" not in err and "results unaffected" not in err and "internal error" not in err
    assert "error: results not kept: the store could not keep " in err
    assert "(done)" not in full.stdout and "results not kept) → " in full.stdout
    run_id = err.split("--resume ", 1)[1].split()[0].rstrip(":")
    spilled_file = Path(err.split("in the spill file ", 1)[1].split()[0])
    assert spilled_file.parent == out.parent / spill.FOLDER  # beside the export, where room was set aside
    assert f"free space on the store's disk ({home / 'rageval.sqlite'}), then run the same command with --resume {run_id}" in err
    assert "pays for none of their calls again" in err
    n_spilled = int(err.split("  kept: ", 1)[1].split()[0])
    lines = [json.loads(line) for line in spilled_file.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == n_spilled > 0

    # Nothing computed is missing from the spill file and the export; the store holds the rest, once.
    export = json.loads(out.read_text(encoding="utf-8"))
    assert export["complete"] is False and export["not_kept"]["in_spill_file"] == n_spilled
    assert export["not_kept"]["spill_file"] == str(spilled_file) and export["not_kept"]["only_in_this_export"] == 0
    assert len(_flat(export)) == RESULTS
    stored = {(r.sample_id, r.metric, r.method) for r in Store(home / "rageval.sqlite").results(run_id)}
    in_spill = {(line["sample_id"], r["metric"], r["method"]) for line in lines for r in line["results"]}
    assert not stored & in_spill and len(stored | in_spill) == RESULTS and len(stored) < RESULTS
    assert Store(home / "rageval.sqlite").get_run(run_id).status != "done"

    # The gate was judged on all 12 rows (the export's summary too), never on the stored part.
    faith = export["summary"]["decomposed"]["faithfulness"]
    assert faith["scored"] + faith["unscored"] == 12
    assert "(12 scored, 0 unscored) ok" in full.stdout
    assert f"judged on all {RESULTS} computed results" in err

    # Still full: the resume cannot write them back, says so, and the spill file stays.
    still = _cli(tmp_path, home, "evaluate", str(DATA), *FLAGS, "--out", str(out), "--resume", run_id, room=0)
    assert still.returncode == 2, still.stderr
    assert f"kept in {spilled_file} back into the store" in still.stderr and "they stay in that file" in still.stderr
    assert spilled_file.exists() and "Traceback" not in still.stderr

    # Space freed: the resume writes the spilled tasks back, scores only what is missing, and the run is complete.
    again = _cli(tmp_path, home, "evaluate", str(DATA), *FLAGS, "--out", str(out), *gate, "--resume", run_id)
    assert again.returncode == 0, again.stderr
    assert f"run {run_id} (done) → " in again.stdout
    assert "calls: 0 offline heuristic calls" in again.stdout  # every spilled task restored, none scored again
    assert not spilled_file.exists()
    final = json.loads(out.read_text(encoding="utf-8"))
    assert "complete" not in final and _flat(final) == _flat(export)
    assert len(Store(home / "rageval.sqlite").results(run_id)) == RESULTS


def test_with_no_room_for_a_spill_it_says_so_up_front_and_the_export_holds_every_result(tmp_path, monkeypatch, capsys,
                                                                                          room):
    home = tmp_path / "home"
    monkeypatch.setenv("RAGEVAL_HOME", str(home))
    monkeypatch.setenv(ROOM_PAGES_ENV, str(room))
    monkeypatch.setattr(spill, "_free", lambda folder: 0)  # every folder full before the run

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(spill, "_write_all", full)  # and still full when the run ends
    out = tmp_path / "results.csv"
    code = cli.main(["evaluate", str(DATA), *FLAGS, "--out", str(out), "--fail-under", "faithfulness=0.0"])
    err = capsys.readouterr().err
    assert code == 4, err
    head, _, tail = err.partition("error: results not kept")
    assert "warning: no folder has room to keep" in head and "would then be only in the export" in head
    assert "could not be written to any spill file: they are only in " + str(out) in tail
    assert "in the spill file" not in tail
    with open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and int(sum(int(r["not_kept_in_store"]) for r in rows)) > 0
    score_columns = [c for c in rows[0] if c.count("/") == 1 and not c.endswith(("/unscored", "/reason"))]
    assert len(score_columns) == 6
    assert all(r[c] != "" or r[c + "/unscored"] for r in rows for c in score_columns)  # every result, kept or not


def test_the_room_is_set_aside_before_the_run_and_a_spill_cut_short_keeps_whole_lines(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    rid = store.create_run(scorers=["faithfulness"])
    room = spill.reserve(store, rid, 100, beside=[tmp_path / "out"])
    assert room.folder == tmp_path / "out" / spill.FOLDER and room.shortfall is None
    held = (room.folder / f"{rid}.reserve").stat()
    assert held.st_size == spill.wanted_bytes(100) == 100 * spill.PER_TASK_BYTES
    assert held.st_blocks * 512 >= held.st_size  # really allocated, not a sparse promise

    tasks = [(str(i), "faithfulness", [MetricResult(str(i), "faithfulness", "decomposed", 0.5)], 0) for i in range(3)]
    real, calls = spill._write_all, []

    def fills_on_the_third(fd: int, data: bytes) -> None:
        calls.append(1)
        if len(calls) == 3:
            real(fd, data[:5])  # half a line reaches the disk, then it is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(spill, "_write_all", fills_on_the_third)
    written, path = room.write(tasks)
    assert written == 2 and path == room.target and not (room.folder / f"{rid}.reserve").exists()
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2  # truncated to whole lines
    assert spill.restore(store, rid) == 0  # not where the store looks by default...
    assert spill.restore(store, rid, beside=[tmp_path / "out"]) == 2  # ...but beside the export
    assert sorted(r.sample_id for r in store.results(rid)) == ["0", "1"] and not path.exists()


def test_a_run_with_nothing_refused_gives_the_room_back(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    room = spill.reserve(store, "r1", 10, beside=[tmp_path])
    assert (tmp_path / spill.FOLDER / "r1.reserve").exists()
    room.release()
    assert not (tmp_path / spill.FOLDER).exists()


def test_a_store_that_cannot_take_the_run_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    real = migrations.ensure

    def capped(conn, path, read_only=False):
        conn.execute("PRAGMA max_page_count=5")  # not even the schema fits, let alone the run's own record
        real(conn, path, read_only)  # (its migration stops at the cap: the store is read as it is)

    monkeypatch.setattr(migrations, "ensure", capped)
    code = cli.main(["evaluate", str(DATA), "--provider", "offline", "--metrics", "faithfulness",
                     "--out", str(tmp_path / "out.json"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "error: the store cannot be written (database or disk is full): a full disk or a read-only folder" in err
    assert "internal error" not in err
    assert not list(tmp_path.rglob("*.reserve"))  # the room set aside for the run is given back


def test_an_export_the_full_disk_refuses_still_ends_in_exit_4_naming_the_spill_and_what_is_lost(tmp_path, monkeypatch,
                                                                                               capsys, room):
    from rageval_core.analysis import export

    home = tmp_path / "home"
    monkeypatch.setenv("RAGEVAL_HOME", str(home))
    monkeypatch.setenv(ROOM_PAGES_ENV, str(room))

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out.json"))

    monkeypatch.setattr(export, "export_json", full)
    code = cli.main(["evaluate", str(DATA), *FLAGS, "--out", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == 4, err
    line = err.split("error: cannot write ", 1)[1]
    assert "No space left on device" in line and "were not kept by the store; " in line
    spilled = Path(line.split("in the spill file ", 1)[1].split(";")[0])
    assert spilled.is_file() and spilled.parent == tmp_path / spill.FOLDER
    assert "--resume " in line and not (tmp_path / "out.json").exists()
