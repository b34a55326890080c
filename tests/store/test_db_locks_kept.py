"""Connecting to an existing database must never open (and so close) a descriptor of the database file.

POSIX (fcntl) locks belong to the process, and closing *any* descriptor of a file releases all of them: a
connect that opened and closed the database file to fix its mode silently dropped the locks every other
connection of this process held on it. Concurrent writers then met "disk I/O error" (the SIGKILL/resume test,
48 worker threads). So the mode of an existing database is fixed with chmod alone.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading

from rageval_core.core import private
from rageval_core.store import db


def test_connecting_to_an_existing_database_opens_no_descriptor_of_it(tmp_path, monkeypatch):
    path = tmp_path / "state" / "rageval.sqlite"
    path.parent.mkdir()
    older = sqlite3.connect(path)  # a store written before this version, and a connection holding it open
    older.execute("CREATE TABLE t (x)")
    older.commit()
    os.chmod(path, 0o644)

    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(private.os, "open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    worker = threading.Thread(target=lambda: db.connect(path))  # each thread connects on its own
    worker.start()
    worker.join()

    assert str(path) not in opened
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # tightened by path
    older.close()


def test_a_new_database_is_created_private(tmp_path):
    path = tmp_path / "fresh" / "rageval.sqlite"
    db.connect(path).execute("CREATE TABLE IF NOT EXISTS t (x)")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
