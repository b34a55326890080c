"""Annotators in the store: each person's labels beside the team's word, an older store opening with its labels,
the annotation queue's progress per annotator, settling a disagreement."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from rageval_core.store import annotations
from rageval_core.store.runs import Store


def test_named_labels_are_kept_per_person_and_the_latest_is_the_teams(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    store.set_label("h", "r1", "faithfulness", 1.0, annotator="ann")
    store.set_label("h", "r1", "faithfulness", 0.0, "contradicts ctx 2", annotator="ben")
    store.set_label("h", "r2", "faithfulness", 1.0)  # no name: the team's word only, as before annotators
    assert store.labels("h") == {"r1": {"faithfulness": 0.0}, "r2": {"faithfulness": 1.0}}
    assert store.annotator_labels("h") == {"r1": {"faithfulness": {"ann": 1.0, "ben": 0.0}}}
    store.set_label("h", "r1", "faithfulness", None, annotator="ben")
    assert store.annotator_labels("h") == {"r1": {"faithfulness": {"ann": 1.0}}}


def test_an_older_store_opens_with_its_labels(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE human_labels (dataset_hash TEXT NOT NULL, row_id TEXT NOT NULL, criterion TEXT NOT NULL,"
                 " label REAL, note TEXT, ts REAL NOT NULL, PRIMARY KEY (dataset_hash, row_id, criterion))")
    conn.execute("INSERT INTO human_labels VALUES ('h', 'r1', 'faithfulness', 1.0, 'ok', 1.0)")
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.labels("h") == {"r1": {"faithfulness": 1.0}} and store.label_notes("h") == {"r1": {"faithfulness": "ok"}}
    assert store.annotator_labels("h") == {} and annotations.progress(store, "h") == []


def test_queue_progress_and_settling(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    assert annotations.hand_out(store, "h", {"ann": ["r1", "r2"], "ben": ["r2", "r3"]}, ["faithfulness"]) == 4
    assert annotations.hand_out(store, "h", {"ann": ["r2", "r4"]}, ["answer_correctness"]) == 1  # r2 kept, r4 added
    assert annotations.queue(store, "h", "ann") == [("r1", ["faithfulness"]), ("r2", ["faithfulness", "answer_correctness"]),
                                                     ("r4", ["answer_correctness"])]
    store.set_label("h", "r1", "faithfulness", 1.0, annotator="ann")
    store.set_label("h", "r2", "faithfulness", 1.0, annotator="ann")  # r2 still needs answer_correctness
    store.set_label("h", "r2", "faithfulness", 0.0, annotator="ben")
    got = {p.annotator: (p.assigned, p.done, p.next_row) for p in annotations.progress(store, "h")}
    assert got == {"ann": (3, 1, "r2"), "ben": (2, 1, "r3")}
    annotations.settle(store, "h", "r2", "faithfulness", 1.0, "lead")
    assert annotations.settlements(store, "h") == {("r2", "faithfulness"): {"label": 1.0, "settled_by": "lead"}}
    assert store.labels("h")["r2"]["faithfulness"] == 1.0 and store.label_notes("h")["r2"]["faithfulness"] == "settled by lead"
    store.set_label("h", "r2", "faithfulness", 0.0, annotator="ann")  # someone changes their mind: the settlement lapses
    assert annotations.settlements(store, "h") == {}


def test_importing_named_labels_makes_clear_majorities_the_teams_word(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    store.set_label("h", "r3", "faithfulness", 0.0)  # the team already said something: kept
    n = annotations.import_labels(store, "h", [("r1", "faithfulness", "ann", 1), ("r1", "faithfulness", "ben", 1),
                                               ("r2", "faithfulness", "ann", 1), ("r2", "faithfulness", "ben", 0),
                                               ("r3", "faithfulness", "ann", 1), ("r3", "faithfulness", "ben", 1)])
    assert n == 6
    assert store.labels("h") == {"r1": {"faithfulness": 1.0}, "r3": {"faithfulness": 0.0}}  # r2 is a tie: to settle
    assert store.annotator_labels("h")["r2"] == {"faithfulness": {"ann": 1.0, "ben": 0.0}}
