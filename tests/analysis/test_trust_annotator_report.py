"""The annotators block, hand-computed: two people's kappa with its interval, alpha for three, each judge's
kappa with every annotator, the verdict sentence, the disagreements to settle; labels naming annotators."""

from __future__ import annotations

import pytest

from rageval_core.analysis.trust.annotator_report import build_annotators
from rageval_core.analysis.trust.labels import annotator_label_map, dataset_labels, merge_labels

A = {"r1": 1, "r2": 1, "r3": 0, "r4": 0, "r5": 1, "r6": 0, "r7": 1, "r8": 0}
B = {"r1": 1, "r2": 1, "r3": 0, "r4": 1, "r5": 1, "r6": 0, "r7": 1, "r8": 0}  # disagrees on r4
SCORES = {"faithfulness": {"judge:rubric5": {"r1": 0.9, "r2": 0.2, "r3": 0.1, "r4": 0.8, "r5": 0.7, "r6": 0.6, "r7": 0.9, "r8": 0.1}}}


def test_two_people_and_a_judge() -> None:
    block = build_annotators({"faithfulness": {"ann": A, "ben": B}}, SCORES, threshold=0.5, iterations=300, seed=0)
    c = block.criteria[0]
    # people: agree on 7/8; p_ann = 4/8, p_ben = 5/8; pe = 0.5*0.625 + 0.5*0.375 = 0.5; kappa = (0.875 - 0.5)/0.5 = 0.75
    assert (c.statistic, c.n_shared) == ("kappa", 8) and c.people.value == pytest.approx(0.75)
    assert c.people.low <= 0.75 <= c.people.high
    j = c.judges[0]
    # judge passes r1 r4 r5 r6 r7. With ann: agree r1 r3 r5 r7 r8 = 5/8, pj = 5/8, pe = 5/8*4/8 + 3/8*4/8 = 0.5, kappa 0.25.
    # With ben: agree r1 r3 r4 r5 r7 r8 = 6/8, pe = 5/8*5/8 + 3/8*3/8 = 34/64, kappa = (48/64 - 34/64) / (30/64) = 14/30.
    assert j.per_annotator["ann"]["kappa"] == pytest.approx(0.25)
    assert j.per_annotator["ben"]["kappa"] == pytest.approx(14 / 30)
    assert j.mean == pytest.approx((0.25 + 14 / 30) / 2)
    assert j.verdict == ("below" if j.mean < c.people.low else "within")
    assert j.sentence.startswith(f"faithfulness, judge:rubric5: {'below' if j.verdict == 'below' else 'within'} the people's range")
    assert c.disagreements == [{"row_id": "r4", "labels": {"ann": 0, "ben": 1}, "settled": False}]
    assert block.to_settle() == [{"criterion": "faithfulness", "row_id": "r4", "labels": {"ann": 0, "ben": 1}, "settled": False}]
    assert block.to_dict()["to_settle"] == 1
    settled = build_annotators({"faithfulness": {"ann": A, "ben": B}}, SCORES, threshold=0.5, iterations=50, seed=0,
                               settled={("r4", "faithfulness"): {"label": 1}})
    assert settled.to_settle() == []


def test_three_people_use_alpha_and_one_person_gives_no_block() -> None:
    C = dict(A)
    block = build_annotators({"faithfulness": {"ann": A, "ben": B, "cho": C}}, {}, threshold=0.5, iterations=100, seed=0)
    c = block.criteria[0]
    assert c.statistic == "alpha" and c.n_shared == 8
    # r4 holds (0, 1, 0), the other 7 units agree: o01 = o10 = 2 * 1/2 = 1; 13 ones and 11 zeros, n = 24
    # alpha = 1 - (n - 1) * 2 / (n^2 - 13^2 - 11^2) = 1 - 46/286
    assert c.people.value == pytest.approx(1 - 46 / 286)
    assert [(p.a, p.b) for p in c.pairs] == [("ann", "ben"), ("ann", "cho"), ("ben", "cho")]
    assert c.spread == (pytest.approx(0.75), pytest.approx(1.0))
    assert build_annotators({"faithfulness": {"ann": A}}, SCORES, threshold=0.5, iterations=10, seed=0) is None


def test_rows_restrict_the_block() -> None:
    block = build_annotators({"faithfulness": {"ann": A, "ben": B}}, {}, rows={"r1", "r2", "r3"}, threshold=0.5, iterations=10, seed=0)
    assert block.criteria[0].n_shared == 3


def test_labels_name_their_annotator_by_field_or_column() -> None:
    rows = [
        ("r1", {"annotator": "ann", "label_faithful": 1}),
        ("r1", {"annotator": "ben", "label_faithful": 0}),
        ("r2", {"label_faithful@ann": 1, "label_faithful@ben": 1, "label_faithful@cho": 0}),
        ("r3", {"label_faithful": 1}),
    ]
    labels = dataset_labels(rows)
    assert sorted((lab.row_id, lab.annotator, lab.value) for lab in labels) == [
        ("r1", "ann", 1), ("r1", "ben", 0), ("r2", "ann", 1), ("r2", "ben", 1), ("r2", "cho", 0), ("r3", None, 1)]
    assert annotator_label_map(labels) == {"faithfulness": {"ann": {"r1": 1, "r2": 1}, "ben": {"r1": 0, "r2": 1}, "cho": {"r2": 0}}}
    merged = merge_labels(labels)
    # r1 is a tie (no label until settled), r2 is the majority 2 to 1, r3 the only label
    assert merged.for_criterion("faithfulness") == {"r2": 1, "r3": 1}
    assert merged.conflicts == []
