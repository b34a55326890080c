"""Label splits: the seeded, stratified dealing (hand-checked on small cases), groups kept whole, and the
split as the store keeps it (extended, re-dealt, test looks counted, older stores)."""

import sqlite3
from collections import Counter

import pytest

from rageval_core.analysis.trust.split_run import current_split, ensure_split
from rageval_core.analysis.trust.splits import (
    SplitRow,
    assign_splits,
    deal,
    format_split,
    parse_split,
    rows_in,
    split_counts,
    split_rows,
)
from rageval_core.store import label_splits
from rageval_core.store.runs import Store

FR = {"train": 0.2, "dev": 0.4, "test": 0.4}


def test_parse_split_reads_fractions_and_names_the_bad_part():
    assert parse_split("train=0.2,dev=0.4,test=0.4") == pytest.approx(FR)
    assert parse_split("dev=0.5, test=0.5") == pytest.approx({"train": 0.0, "dev": 0.5, "test": 0.5})
    assert format_split(parse_split("train=0.2,dev=0.4,test=0.4")) == "train=0.2,dev=0.4,test=0.4"
    for text, words in (("train=0.2,dev=0.4", "sum to 0.6"), ("val=0.5,test=0.5", "'val=0.5'"),
                        ("train=x,dev=0.5,test=0.5", "'x' is not a number"), ("train=0.5,train=0.5", "twice"),
                        ("train=-0.2,dev=0.6,test=0.6", "outside 0..1")):
        with pytest.raises(ValueError, match=words):
            parse_split(text)


def test_deal_by_largest_deficit_by_hand():
    # dealt 1: deficits train .2, dev .4, test .4 -> dev (tie: SPLITS order); dealt 2: .4, -.2, .8 -> test;
    # dealt 3: .6, .2, .2 -> train; dealt 4: -.2, .6, .6 -> dev; dealt 5: 0, 0, 1 -> test
    assert deal([1] * 5, FR) == ["dev", "test", "train", "dev", "test"]
    # a unit of 2 rows counts twice: dealt 2 -> deficits .4, .8, .8 -> dev takes 2; dealt 3 -> .6, -.8, 1.2 -> test
    assert deal([2, 1], FR) == ["dev", "test"]
    assert deal([1, 1], {"train": 0.0, "dev": 1.0, "test": 0.0}) == ["dev", "dev"]


def _rows(n_pass: int, n_fail: int, category: str = "c") -> list[SplitRow]:
    return [SplitRow(f"{category}{i:02d}", category, {"faithfulness": int(i < n_pass)}) for i in range(n_pass + n_fail)]


def test_assign_is_seeded_order_free_and_stratified():
    rows = _rows(10, 10, "a") + _rows(5, 5, "b")
    first = assign_splits(rows, FR, seed=3)
    assert first == assign_splits(list(reversed(rows)), FR, seed=3)
    assert first != assign_splits(rows, FR, seed=4)
    assert split_counts(first) == {"train": 6, "dev": 12, "test": 12}  # 30 rows: exactly 0.2 / 0.4 / 0.4
    strata = Counter((r.stratum, first[r.row_id]) for r in rows)
    for stratum, size in (("a|faithfulness=1", 10), ("a|faithfulness=0", 10), ("b|faithfulness=1", 5), ("b|faithfulness=0", 5)):
        for split, share in FR.items():
            assert abs(strata[(stratum, split)] - share * size) <= 1, (stratum, split)
    assert rows_in(first, "train") == sorted(r for r, s in first.items() if s == "train")


def test_groups_and_translations_share_a_split():
    rows = split_rows(["x1", "x1-en", "x2", "x2-en", "p1", "p2", "solo"], {"p1": "c"},
                      {"faithfulness": {"x1": 1, "x1-en": 1, "p1": 0, "p2": 1}}, {"p1": "g", "p2": "g"}, "-en")
    by_id = {r.row_id: r for r in rows}
    assert by_id["x1-en"].group == by_id["x1"].group == "row:x1" and by_id["p1"].group == by_id["p2"].group == "group:g"
    assert by_id["solo"].group == "row:solo" and by_id["p1"].category == "c" and by_id["x1"].labels == {"faithfulness": 1}
    for seed in range(20):
        got = assign_splits(rows, FR, seed)
        assert got["x1"] == got["x1-en"] and got["x2"] == got["x2-en"] and got["p1"] == got["p2"]


def test_ensure_split_keeps_stored_rows_adds_new_ones_and_redeals_on_a_new_seed(tmp_path):
    store = Store(tmp_path / "s.db")
    assert current_split(store, "h") is None
    rows = _rows(6, 6)
    first = ensure_split(store, "h", rows, FR, seed=1)
    assert first.added == 12 and not first.redealt and first.test_looks == 0
    again = ensure_split(store, "h", rows + _rows(2, 2, "n"), FR, seed=1)
    assert again.added == 4 and {r: again.assignment[r] for r in first.assignment} == first.assignment
    assert current_split(store, "h").assignment == again.assignment
    other = ensure_split(store, "h", rows, FR, seed=2)
    assert other.redealt and set(other.assignment) == {r.row_id for r in rows}
    assert current_split(store, "h").seed == 2 and current_split(store, "other") is None


def test_test_looks_are_counted_per_dataset_and_survive_a_redeal(tmp_path):
    store = Store(tmp_path / "s.db")
    ensure_split(store, "h", _rows(3, 3), FR, seed=0)
    assert label_splits.record_test_look(store, "h", "cli") == 1
    assert label_splits.record_test_look(store, "h", "trust page") == 2
    ensure_split(store, "h", _rows(3, 3), FR, seed=9)
    assert current_split(store, "h").test_looks == 2 and label_splits.count_test_looks(store, "other") == 0


def test_a_store_made_before_splits_opens_and_gets_the_tables(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE human_labels (dataset_hash TEXT NOT NULL, row_id TEXT NOT NULL, criterion TEXT NOT NULL,"
                 " label REAL, note TEXT, ts REAL NOT NULL, PRIMARY KEY (dataset_hash, row_id, criterion))")
    conn.execute("INSERT INTO human_labels VALUES ('h', 'r1', 'faithfulness', 1, NULL, 0)")
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.labels("h") == {"r1": {"faithfulness": 1.0}}
    assert current_split(store, "h") is None
    assert ensure_split(store, "h", [SplitRow("r1", None, {"faithfulness": 1})], FR).assignment == {"r1": "dev"}
