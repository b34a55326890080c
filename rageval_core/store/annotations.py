"""The annotation queue and settled disagreements, kept with the human labels (same database, keyed by
dataset hash + row id).

``annotation_queue`` holds which rows each annotator was handed (and on which criteria): progress is how
many of them that person has labelled on every criterion (``annotator_labels``). ``label_settlements``
records a disagreement settled: the label chosen and who chose it; settling also writes that label as the
team's word (``human_labels``), which judge–human agreement reads. A settlement older than the latest
annotator label of its row no longer counts (someone changed their mind since). The tables are made by the
``annotations`` step of ``store.migrations``: an older store gets them empty.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rageval_core.store import db
from rageval_core.store.human_labels import put_team_label
from rageval_core.store.runs import Store


@dataclass(frozen=True)
class Progress:
    """One annotator's share of the queue: rows handed out, rows labelled on all their criteria, the next one."""

    annotator: str
    assigned: int
    done: int
    next_row: str | None

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def _conn(store: Store) -> sqlite3.Connection:
    return db.connect(store.path)


def hand_out(store: Store, dataset_hash: str, assignment: Mapping[str, Sequence[str]], criteria: Sequence[str]) -> int:
    """Add rows to annotators' queues (``{annotator: [row, ...]}``), after what they already hold; a row already
    in someone's queue keeps its place and gains the new criteria. Returns the rows added."""

    def write(conn: sqlite3.Connection) -> int:
        added = 0
        for annotator, rows in assignment.items():
            have = {r["row_id"]: json.loads(r["criteria"]) for r in conn.execute(
                "SELECT row_id, criteria FROM annotation_queue WHERE dataset_hash = ? AND annotator = ?", (dataset_hash, annotator))}
            position = len(have)
            for row in rows:
                if row in have:
                    merged = list(dict.fromkeys([*have[row], *criteria]))
                    conn.execute("UPDATE annotation_queue SET criteria = ? WHERE dataset_hash = ? AND row_id = ? AND annotator = ?",
                                 (json.dumps(merged), dataset_hash, row, annotator))
                    continue
                conn.execute("INSERT INTO annotation_queue (dataset_hash, row_id, annotator, criteria, position, ts) VALUES (?,?,?,?,?,?)",
                             (dataset_hash, row, annotator, json.dumps(list(criteria)), position, time.time()))
                position += 1
                added += 1
        return added

    return store._write(write, "hand out rows")


def queue(store: Store, dataset_hash: str, annotator: str) -> list[tuple[str, list[str]]]:
    """``[(row, criteria)]`` handed to one annotator, in the order given."""
    return [(r["row_id"], json.loads(r["criteria"])) for r in _conn(store).execute(
        "SELECT row_id, criteria FROM annotation_queue WHERE dataset_hash = ? AND annotator = ? ORDER BY position",
        (dataset_hash, annotator))]


def progress(store: Store, dataset_hash: str) -> list[Progress]:
    """Each annotator's progress through their queue (a row is done once they labelled all its criteria)."""
    labels = store.annotator_labels(dataset_hash)
    names = [r["annotator"] for r in _conn(store).execute(
        "SELECT DISTINCT annotator FROM annotation_queue WHERE dataset_hash = ? ORDER BY annotator", (dataset_hash,))]
    out = []
    for name in names:
        items = queue(store, dataset_hash, name)
        undone = [row for row, crits in items if not all(name in labels.get(row, {}).get(c, {}) for c in crits)]
        out.append(Progress(name, len(items), len(items) - len(undone), undone[0] if undone else None))
    return out


def import_labels(store: Store, dataset_hash: str, labels: Sequence[tuple[str, str, str, float]]) -> int:
    """Store ``(row, criterion, annotator, 0/1)`` as each person's own label (a labels file naming its
    annotators); where the people's majority is clear and the team has no word yet, it becomes the team's
    word. Ties stay unlabelled for the team: they are disagreements to settle. Returns the labels stored."""
    for row, criterion, annotator, value in labels:
        store.set_annotator_label(dataset_hash, row, criterion, annotator, float(value))
    team = store.labels(dataset_hash)
    for row, by_criterion in store.annotator_labels(dataset_hash).items():
        for criterion, by_name in by_criterion.items():
            ones = sum(1 for v in by_name.values() if v >= 0.5)
            zeros = len(by_name) - ones
            if ones != zeros and team.get(row, {}).get(criterion) is None:
                store.set_label(dataset_hash, row, criterion, float(ones > zeros))
    return len(labels)


def settle(store: Store, dataset_hash: str, row_id: str, criterion: str, label: float, settled_by: str) -> None:
    """Record the label chosen for a disagreement and make it the team's word (``human_labels``), both in one write
    transaction (retried while another writer holds the store; a read-only store says what was not saved)."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO label_settlements (dataset_hash, row_id, criterion, label, settled_by, ts) VALUES (?,?,?,?,?,?)"
            " ON CONFLICT (dataset_hash, row_id, criterion) DO UPDATE SET label = excluded.label,"
            " settled_by = excluded.settled_by, ts = excluded.ts",
            (dataset_hash, row_id, criterion, float(label), settled_by, time.time()),
        )
        put_team_label(conn, dataset_hash, row_id, criterion, float(label), f"settled by {settled_by}")

    store._write(write, "settle a disagreement")


def settlements(store: Store, dataset_hash: str) -> dict[tuple[str, str], dict[str, object]]:
    """``{(row, criterion): {"label", "settled_by"}}`` of the settlements still standing (newer than every
    annotator label of the row and criterion)."""
    latest = store.annotator_label_times(dataset_hash)
    out: dict[tuple[str, str], dict[str, object]] = {}
    for r in _conn(store).execute(
        "SELECT row_id, criterion, label, settled_by, ts FROM label_settlements WHERE dataset_hash = ?", (dataset_hash,)):
        key = (r["row_id"], r["criterion"])
        if r["ts"] >= latest.get(key, 0.0):
            out[key] = {"label": r["label"], "settled_by": r["settled_by"]}
    return out
