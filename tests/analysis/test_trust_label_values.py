"""Issue 36, item 4: what a label column holds is read by one rule (rageval_core.analysis.trust.label_values):
0/1 in numbers, booleans or words, or a whole column on the 1-5 scale; anything else named, never read as 0."""

from __future__ import annotations

import math

import pytest

from rageval_core.analysis.trust.label_values import read_labels, read_value
from rageval_core.analysis.trust.labels import dataset_labels


@pytest.mark.parametrize(("value", "kind", "number"), [
    (1, "bit", 1.0), (0.0, "bit", 0.0), (True, "bit", 1.0), ("false", "bit", 0.0), ("PASS", "bit", 1.0),
    ("fail", "bit", 0.0), ("👍", "bit", 1.0), ("1", "bit", 1.0), (4, "scale", 4.0), ("5", "scale", 5.0),
    (None, "blank", None), ("", "blank", None), (" null ", "blank", None),
    (0.5, "bad", None), (-1, "bad", None), (7, "bad", None), (3.5, "bad", None), ("NaN", "bad", None),
    (math.nan, "bad", None), (math.inf, "bad", None), ("maybe", "bad", None), ([1], "bad", None), ({"v": 1}, "bad", None),
])
def test_each_value_is_a_label_a_blank_or_named_as_not_a_label(value, kind, number) -> None:
    read = read_value(value)
    assert (read.kind, read.number) == (kind, number)


def test_the_dataset_path_drops_a_mixed_column_and_names_what_is_not_a_label() -> None:
    rows = [("a", {"label_faithful": 1, "label_relevant": 1}), ("b", {"label_faithful": 0, "label_relevant": 5}),
            ("c", {"label_faithful": 2, "label_relevant": 3}), ("d", {"label_faithful": 1, "label_relevant": "NaN"})]
    read = read_labels(rows)
    assert [m.column for m in read.mixed] == ["label_faithful"]
    assert [(p.cell.row_id, p.cell.column) for p in read.not_labels] == [("d", "label_relevant")]
    got = {(lab.row_id, lab.criterion): lab.value for lab in dataset_labels(rows)}
    assert got == {("a", "answer_relevancy"): 0, ("b", "answer_relevancy"): 1, ("c", "answer_relevancy"): 0}
    assert read.messages()[0].startswith("column label_faithful mixes 0/1 (b=0) with 2–5 (c=2)")
