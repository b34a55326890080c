"""The annotation queue's choices: rows by label-next, a filter or a seeded sample; dealt so loads stay even."""

from __future__ import annotations

import pytest

from rageval_core.analysis.trust.queue import deal, pick_rows

ROWS = [f"r{i}" for i in range(1, 11)]


def test_pick_by_label_next_then_the_rest() -> None:
    assert pick_rows(ROWS, "label_next", 4, ranked=["r7", "r2", "x"]) == ["r7", "r2", "r1", "r3"]


def test_pick_by_filter_and_random() -> None:
    assert pick_rows(ROWS, "filter", 3, keep=lambda r: int(r[1:]) % 2 == 0) == ["r2", "r4", "r6"]
    a = pick_rows(ROWS, "random", 4, seed=3)
    assert len(a) == 4 and a == pick_rows(ROWS, "random", 4, seed=3) and a == [r for r in ROWS if r in a]
    assert pick_rows(ROWS, "random", 40) == ROWS
    with pytest.raises(ValueError, match="unknown queue mode"):
        pick_rows(ROWS, "everything", 3)


def test_deal_two_per_row_evenly() -> None:
    got = deal(ROWS[:5], ["ann", "ben", "cho"])
    # row i to annotators 2i, 2i+1 (mod 3): r1 ann ben, r2 cho ann, r3 ben cho, r4 ann ben, r5 cho ann
    assert got == {"ann": ["r1", "r2", "r4", "r5"], "ben": ["r1", "r3", "r4"], "cho": ["r2", "r3", "r5"]}
    assert deal(["r1", "r2"], ["solo"]) == {"solo": ["r1", "r2"]}
    with pytest.raises(ValueError):
        deal(ROWS, [])
