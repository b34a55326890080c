"""Issue 27: a store that cannot be written (a full disk, here SQLite's own page cap: a genuine "database or disk
is full") ends the run with a clear message, at once (not after the 600 s a lock gets), with what was scored
kept: in the store up to the point it filled, the rest in the spill file a ``--resume`` writes back. Before, the
explicit ROLLBACK after SQLite's own one raised "cannot rollback", which hid the cause, and the run waited."""

from __future__ import annotations

import json
from pathlib import Path

from rageval_core import cli
from rageval_core.store import db, migrations
from rageval_core.store.runs import Store

ROOT = Path(__file__).resolve().parents[2]


def test_a_full_store_ends_the_run_with_a_message_and_keeps_every_result(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    real = db.connect
    args = ["evaluate", str(ROOT / "sample_data" / "ml_qa_en.json"), "--provider", "offline", "--metrics",
            "faithfulness,context_recall", "--judge", "rubric5", "--out", str(tmp_path / "out.json"), "--quiet"]

    def pages() -> int:
        real().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(real().execute("PRAGMA page_count").fetchone()[0])

    Store()
    before = pages()
    assert cli.main(args) == 0  # one whole run measures what a run takes
    after = pages()
    capsys.readouterr()

    def capped(*a, **k):
        conn = real(*a, **k)
        conn.execute(f"PRAGMA max_page_count={after + (after - before) // 3}")  # a third of a run, then full
        return conn

    monkeypatch.setattr(db, "connect", capped)
    code = cli.main(args)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err and "cannot rollback" not in err
    kept = int(err.split("full or read-only); ", 1)[1].split()[0])
    spill = Path(err.split("kept in ", 1)[1].split(",")[0])
    lines = [json.loads(line) for line in spill.read_text(encoding="utf-8").splitlines()]
    assert kept == len(lines) > 0
    monkeypatch.setattr(db, "connect", real)
    run_id = err.split("--resume ", 1)[1].split()[0]
    stored = {(r.sample_id, r.metric, r.method) for r in Store().results(run_id)}
    spilled = {(line["sample_id"], r["metric"], r["method"]) for line in lines for r in line["results"]}
    assert not stored & spilled and len(stored | spilled) == 12 * 6  # every result kept once: 2 metrics + 4 criteria


def test_a_store_that_cannot_take_the_run_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    real = migrations.ensure

    def capped(conn, path, read_only=False):
        conn.execute("PRAGMA max_page_count=5")  # not even the schema fits, let alone the run's own record
        real(conn, path, read_only)  # (its migration stops at the cap: the store is read as it is)

    monkeypatch.setattr(migrations, "ensure", capped)
    code = cli.main(["evaluate", str(ROOT / "sample_data" / "ml_qa_en.json"), "--provider", "offline", "--metrics",
                     "faithfulness", "--out", str(tmp_path / "out.json"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "error: the store cannot be written (database or disk is full): a full disk or a read-only folder" in err
    assert "internal error" not in err
