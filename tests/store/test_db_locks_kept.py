"""Opening another connection must not drop the locks this process already holds on the database.

POSIX (fcntl) locks belong to the process, and closing *any* descriptor of the file releases all of them. A
connect that opened and closed the database file to fix its mode silently unlocked every other connection's
transaction; concurrent writers then met "disk I/O error" (seen in the SIGKILL/resume test).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading

from rageval_core.store import db


def _other_process_can_write(path: str) -> bool:
    code = (
        "import sqlite3, sys\n"
        f"c = sqlite3.connect({path!r}, timeout=0, isolation_level=None)\n"
        "try:\n"
        "    c.execute('BEGIN IMMEDIATE'); print('wrote')\n"
        "except sqlite3.OperationalError as e:\n"
        "    print('locked' if 'locked' in str(e) else e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return out.stdout.strip() == "wrote"


def test_a_new_connection_keeps_the_write_lock_another_connection_holds(tmp_path):
    path = str(tmp_path / "state" / "rageval.sqlite")
    holder = db.connect(path)
    holder.execute("CREATE TABLE IF NOT EXISTS t (x)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO t VALUES (1)")
    assert not _other_process_can_write(path), "the held transaction should lock other processes out"

    opened: list[sqlite3.Connection] = []
    worker = threading.Thread(target=lambda: opened.append(db.connect(path)))  # a connection of its own thread
    worker.start()
    worker.join()
    assert opened and opened[0] is not holder

    assert not _other_process_can_write(path), "connecting from another thread released this process's lock"
    holder.execute("COMMIT")
