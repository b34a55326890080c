"""Human 👍 / 👎 labels per dataset row and criterion: the store's label methods and the export merge.

The ``human_labels`` table is created with the store's schema; ``Store`` mixes these methods in (they use
its write transaction), so labels live in the one workbench database next to the runs they judge.

``human_labels`` holds the team's latest word per row and criterion (what judge–human agreement uses);
``annotator_labels`` keeps each named annotator's own label beside it, for human–human agreement. A label
saved without a name goes to ``human_labels`` only, as before annotators existed; a store made before the
``annotator_labels`` table gains it (empty) when it is opened.
"""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

from rageval_core.core.redact import redact_optional


T = TypeVar("T")


def put_team_label(conn: sqlite3.Connection, dataset_hash: str, row_id: str, criterion: str, label: float | None,
                   note: str | None) -> None:
    """Inside a write transaction: the team's word on one row and criterion (``human_labels``), replacing any."""
    conn.execute(
        "INSERT INTO human_labels (dataset_hash, row_id, criterion, label, note, ts) VALUES (?,?,?,?,?,?)"
        " ON CONFLICT (dataset_hash, row_id, criterion) DO UPDATE SET label = excluded.label,"
        " note = excluded.note, ts = excluded.ts",
        (dataset_hash, row_id, criterion, label, redact_optional(note), time.time()),
    )


class HumanLabels:
    """Label methods of ``rageval_core.store.runs.Store`` (set, read, notes); they use its ``_conn`` and ``_write``."""

    if TYPE_CHECKING:  # provided by Store, which mixes these methods in
        def _conn(self) -> sqlite3.Connection: ...

        def _write(self, fn: Callable[[sqlite3.Connection], T], what: str) -> T: ...

    def set_label(self, dataset_hash: str, row_id: str, criterion: str, label: float | None, note: str | None = None,
                  annotator: str | None = None) -> None:
        """Store (or with ``label=None`` and no note, remove) one human label for a dataset row; with ``annotator``
        the label is also kept as that person's (``annotator_labels``)."""
        name = (annotator or "").strip()
        if name:
            self.set_annotator_label(dataset_hash, row_id, criterion, name, label, note)
        if label is None and note is None:
            self._write(lambda conn: conn.execute("DELETE FROM human_labels WHERE dataset_hash = ? AND row_id = ?"
                                                  " AND criterion = ?", (dataset_hash, row_id, criterion)), "save label")
        else:
            self._write(lambda conn: put_team_label(conn, dataset_hash, row_id, criterion, label, note), "save label")

    def set_annotator_label(self, dataset_hash: str, row_id: str, criterion: str, annotator: str,
                            label: float | None, note: str | None = None) -> None:
        """One person's own label only (``None`` removes it); ``set_label`` with ``annotator`` also makes it the team's word."""
        if label is None:
            sql = "DELETE FROM annotator_labels WHERE dataset_hash = ? AND row_id = ? AND criterion = ? AND annotator = ?"
            args: tuple[Any, ...] = (dataset_hash, row_id, criterion, annotator)
        else:
            sql = (
                "INSERT INTO annotator_labels (dataset_hash, row_id, criterion, annotator, label, note, ts) VALUES (?,?,?,?,?,?,?)"
                " ON CONFLICT (dataset_hash, row_id, criterion, annotator) DO UPDATE SET label = excluded.label,"
                " note = excluded.note, ts = excluded.ts"
            )
            args = (dataset_hash, row_id, criterion, annotator, label, redact_optional(note), time.time())
        self._write(lambda conn: conn.execute(sql, args), "save annotator label")

    def annotator_labels(self, dataset_hash: str) -> dict[str, dict[str, dict[str, float]]]:
        """``{row_id: {criterion: {annotator: label}}}`` for one dataset: each named person's own labels."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for r in self._conn().execute(
            "SELECT row_id, criterion, annotator, label FROM annotator_labels WHERE dataset_hash = ?"
            " ORDER BY row_id, criterion, annotator",
            (dataset_hash,),
        ).fetchall():
            out.setdefault(r["row_id"], {}).setdefault(r["criterion"], {})[r["annotator"]] = r["label"]
        return out

    def annotator_label_times(self, dataset_hash: str) -> dict[tuple[str, str], float]:
        """``{(row_id, criterion): ts}`` of the latest annotator label (settling a disagreement must come after it)."""
        return {
            (r["row_id"], r["criterion"]): r["ts"]
            for r in self._conn().execute(
                "SELECT row_id, criterion, MAX(ts) AS ts FROM annotator_labels WHERE dataset_hash = ? GROUP BY row_id, criterion",
                (dataset_hash,),
            ).fetchall()
        }

    def labels(self, dataset_hash: str) -> dict[str, dict[str, float | None]]:
        """``{row_id: {criterion: label}}`` for one dataset."""
        out: dict[str, dict[str, float | None]] = {}
        for r in self._conn().execute(
            "SELECT row_id, criterion, label FROM human_labels WHERE dataset_hash = ? ORDER BY row_id, criterion",
            (dataset_hash,),
        ).fetchall():
            out.setdefault(r["row_id"], {})[r["criterion"]] = r["label"]
        return out

    def label_notes(self, dataset_hash: str) -> dict[str, dict[str, str]]:
        """``{row_id: {criterion: note}}`` for one dataset: the free text a person wrote beside a label."""
        out: dict[str, dict[str, str]] = {}
        for r in self._conn().execute(
            "SELECT row_id, criterion, note FROM human_labels WHERE dataset_hash = ? AND note IS NOT NULL AND note != ''"
            " ORDER BY row_id, criterion",
            (dataset_hash,),
        ).fetchall():
            out.setdefault(r["row_id"], {})[r["criterion"]] = r["note"]
        return out


def rows_with_labels(rows: Sequence[Mapping[str, Any]], labels: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Dataset rows with their stored human labels under ``human_labels`` (only when the user asks to export)."""
    out = []
    for row in rows:
        copy = dict(row)
        got = labels.get(str(row.get("id")))
        if got:
            merged = dict(copy.get("human_labels") or {})
            merged.update(got)
            copy["human_labels"] = merged
        out.append(copy)
    return out
