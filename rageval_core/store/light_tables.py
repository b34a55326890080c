"""Narrow copies of the results and the call log, without details, prompts or responses, for the pages.

A result's ``details`` (claims, verdicts, the judge's criterion) and a call's prompt and response are most
of the database: a 10,000-row run is about 1.3 GB, and SQLite stores the columns after a large text in the
same row's overflow pages, so even ``SELECT value, provider`` of a run read every result's details. The
pages (Compare, History, Inspect's row list) need none of it: ``result_light`` holds every result column but
``details`` plus the judge id (the one detail a frame needs), ``call_light`` every call-log column but prompt
and response. Both are clustered by run (``WITHOUT ROWID``, keyed by run and id), so one run's rows are
read in order from a few pages; an index covering the leaderboard's means lets SQLite group every run's
results without sorting them.

Triggers on ``results`` and ``call_log`` keep the copies equal to their tables on every insert, update and
delete, whoever writes (the store, a jury, SQL in a test, an older version of this program sharing the
database). A database made before these tables is migrated once, in the same transaction that creates
them: the copies are filled from the existing rows (this reads every detail once; seconds per 1,000 rows).
"""

from __future__ import annotations

import sqlite3

from rageval_core.store import columns, engine

# The judge id as ``core.method_labels.judge_of`` reads it: the top-level "judge" of the details, if any (the
# substring test first: parsing each result's details JSON would cost as much as the details themselves).
_JUDGE = "CASE WHEN instr({d}.details, '\"judge\"') > 0 THEN json_extract({d}.details, '$.judge') END"

RESULT_COLUMNS = columns.RESULT_LIGHT_COLUMNS
CALL_COLUMNS = columns.CALL_LIGHT_COLUMNS

_TABLES = "\n".join((
    columns.create_light_table("result_light", columns.RESULTS, RESULT_COLUMNS, extra=("judge",),
                               key=("run_id", "repeat_index", "id")),
    columns.create_light_table("call_light", columns.CALL_LOG, CALL_COLUMNS, not_null=("run_id",), key=("run_id", "id")),
    "CREATE INDEX IF NOT EXISTS result_light_means ON result_light (run_id, repeat_index, method, judge, metric, value);",
))


def _copy(table: str, columns: tuple[str, ...], source: str, extra: str = "") -> str:
    """``INSERT OR REPLACE INTO <table> ... SELECT`` the light columns of ``source`` (NEW, or the table itself)."""
    names = ", ".join(columns) + (", judge" if extra else "")
    values = ", ".join(f"{source}.{c}" for c in columns) + (f", {extra}" if extra else "")
    return f"INSERT OR REPLACE INTO {table} ({names}) SELECT {values}"


def _triggers() -> str:
    result_new = _copy("result_light", RESULT_COLUMNS, "NEW", _JUDGE.format(d="NEW"))
    result_old = "DELETE FROM result_light WHERE run_id = OLD.run_id AND repeat_index = OLD.repeat_index AND id = OLD.id"
    call_new = _copy("call_light", CALL_COLUMNS, "NEW") + " WHERE NEW.run_id IS NOT NULL"
    call_old = "DELETE FROM call_light WHERE run_id = OLD.run_id AND id = OLD.id"
    return f"""
CREATE TRIGGER IF NOT EXISTS result_light_insert AFTER INSERT ON results BEGIN {result_new}; END;
CREATE TRIGGER IF NOT EXISTS result_light_delete AFTER DELETE ON results BEGIN {result_old}; END;
CREATE TRIGGER IF NOT EXISTS result_light_update AFTER UPDATE ON results BEGIN {result_old}; {result_new}; END;
CREATE TRIGGER IF NOT EXISTS call_light_insert AFTER INSERT ON call_log BEGIN {call_new}; END;
CREATE TRIGGER IF NOT EXISTS call_light_delete AFTER DELETE ON call_log BEGIN {call_old}; END;
CREATE TRIGGER IF NOT EXISTS call_light_update AFTER UPDATE ON call_log BEGIN {call_old}; {call_new}; END;
"""


_NAMES = ("result_light", "call_light", "result_light_means", "result_light_insert", "result_light_delete", "result_light_update",
          "call_light_insert", "call_light_delete", "call_light_update")


def _missing(conn: sqlite3.Connection) -> set[str]:
    marks = ",".join("?" * len(_NAMES))
    have = {r[0] for r in conn.execute(f"SELECT name FROM sqlite_master WHERE name IN ({marks})", _NAMES)}
    return set(_NAMES) - have


def _are_views(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT type FROM sqlite_master WHERE name = 'result_light'").fetchone()
    return row is not None and row[0] == "view"


def ensure(conn: sqlite3.Connection) -> None:
    """Create the light tables and their triggers if this database lacks them, filling the tables from the
    existing results and calls in the same transaction (so no write falls between the copy and the triggers).
    Cheap when they exist (or are views already, ``to_views``): one look at the schema. Needs the ``results``
    and ``call_log`` tables."""
    if _are_views(conn) or not _missing(conn):
        return

    def migrate() -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            missing = _missing(conn)  # another process may have migrated meanwhile
            if missing:
                fill = {"result_light", "call_light"} & missing
                for statement in _TABLES.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                for statement in _triggers().strip().split("\n"):
                    conn.execute(statement)
                if "result_light" in fill:
                    conn.execute(_copy("result_light", RESULT_COLUMNS, "results", _JUDGE.format(d="results"))
                                 + " FROM results")
                if "call_light" in fill:
                    conn.execute(_copy("call_light", CALL_COLUMNS, "call_log") + " FROM call_log WHERE run_id IS NOT NULL")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite rolls back itself on a full disk; keep its error
                conn.execute("ROLLBACK")
            raise

    engine.write(migrate, what="create light tables")


# ---- views: once the texts are out of the rows (store.migrate_texts), the copies are not needed ------------
# The full rows now hold no prompt, response or inline details (texts by reference: store.packing), so a run's
# light columns are read from the tables themselves at about the pages a copy took; the copies only doubled
# every result and call on disk (about 440 bytes a result). The same names stay as views, so every reader is
# unchanged; the leaderboard's covering index moves to ``results`` over the same expression the view names.
_VIEW_JUDGE = "json_extract(details, '$.judge')"
_VIEWS = f"""
CREATE VIEW result_light AS SELECT {", ".join(RESULT_COLUMNS)}, {_VIEW_JUDGE} AS judge FROM results;
CREATE VIEW call_light AS SELECT {", ".join(CALL_COLUMNS)} FROM call_log WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS results_means ON results (run_id, repeat_index, method, {_VIEW_JUDGE}, metric, value);
"""


def to_views(conn: sqlite3.Connection) -> None:
    """Replace the light tables and their triggers by views of the same names and columns (once, in one
    transaction; a no-op look when done). Call only when no row holds its texts inline any more."""
    if _are_views(conn):
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'results_means'").fetchone() is None:
            engine.write(lambda: conn.execute(_VIEWS.strip().split("\n")[-1]), what="results_means index")
        return

    def switch() -> None:
        with engine.immediate(conn):  # (SQLite rolls back itself on a full disk; its error is kept)
            if not _are_views(conn):
                for name in _NAMES:
                    kind = "INDEX" if name == "result_light_means" else "TRIGGER" if name.endswith(("_insert", "_delete", "_update")) else "TABLE"
                    conn.execute(f"DROP {kind} IF EXISTS {name}")
                for statement in _VIEWS.strip().split("\n"):
                    conn.execute(statement)

    engine.write(switch, what="light tables to views")
