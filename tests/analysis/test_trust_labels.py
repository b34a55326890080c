"""Human labels from dataset columns, a labels file and the inspector: scales, mapping, precedence,
conflicts, preference pairs; reading them never changes the dataset hash."""

from pathlib import Path

from rageval_core.data.datasets import dataset_hash, load_dataset
from rageval_core.store.runs import Store
from rageval_core.analysis.trust.labels import (
    ALL_CRITERIA,
    DATASET,
    FILE,
    INSPECTOR,
    dataset_labels,
    inspector_labels,
    merge_labels,
)

ROOT = Path(__file__).resolve().parents[2]


def test_columns_map_to_criteria_and_ratings_binarise_at_4():
    rows = [
        ("r1", {"label_faithful": 1, "label_relevant": 5, "label_context": "yes", "label_correct": True}),
        ("r2", {"label_faithful": 0, "label_relevant": 3, "label_context": 0, "label_correct": None}),
        ("r3", {"label_relevant": 1, "meta": {"label_faithful": 1}}),  # benchmark files nest labels in meta
        ("r4", {"label_relevant": 4, "label_faithful": "", "human_labels": {"answer_correctness": 0.0}}),
    ]
    got = {(lab.row_id, lab.criterion): (lab.value, lab.raw) for lab in dataset_labels(rows)}
    assert got[("r1", "faithfulness")] == (1, 1.0) and got[("r2", "faithfulness")] == (0, 0.0)
    assert got[("r3", "faithfulness")] == (1, 1.0)
    # label_relevant holds 5, 3, 1, 4: a 1-5 rating, so 1 is a fail and 4, 5 pass
    assert [got[(r, "answer_relevancy")][0] for r in ("r1", "r2", "r3", "r4")] == [1, 0, 0, 1]
    assert got[("r1", "context_precision")] == (1, 1.0) and got[("r1", "context_relevance")] == (1, 1.0)
    assert got[("r2", "context_relevance")] == (0, 0.0)
    assert got[("r1", "answer_correctness")] == (1, 1.0) and got[("r4", "answer_correctness")] == (0, 0.0)
    assert ("r2", "answer_correctness") not in got and ("r4", "faithfulness") not in got


def test_inspector_wins_over_file_over_dataset_and_conflicts_are_listed():
    rows = [("a", {"label_faithful": 1}), ("b", {"label_faithful": 0}), ("c", {"label_faithful": 1})]
    merged = merge_labels(
        dataset_labels(rows),
        [lab.__class__(lab.row_id, lab.criterion, lab.value, FILE, lab.raw) for lab in dataset_labels([("b", {"label_faithful": 1})])],
        inspector_labels({"a": {"faithfulness": 0.0}, "c": {"faithfulness": 1.0}, "d": {"faithfulness": None}}),
        rows=rows,
    )
    assert merged.for_criterion("faithfulness") == {"a": 0, "b": 1, "c": 1}
    assert merged.labels[("a", "faithfulness")].source == INSPECTOR
    assert merged.labels[("b", "faithfulness")].source == FILE
    conflicts = {c.row_id: c for c in merged.conflicts}
    assert set(conflicts) == {"a", "b"}  # c agrees in both sources: no conflict
    assert conflicts["a"].values == {INSPECTOR: 0, DATASET: 1} and conflicts["a"].used == INSPECTOR
    assert merged.by_row() == {"a": ["faithfulness"], "b": ["faithfulness"], "c": ["faithfulness"]}


def test_preference_pairs_from_groups_and_a_preferred_column():
    rows = [  # WikiEval's pointwise mapping: the answer row is preferred on each criterion it is labelled on
        ("q1_answer", {"label_faithful": 1, "label_relevant": 1, "meta": {"pair_group": "q1"}}),
        ("q1_ungrounded", {"label_faithful": 0, "meta": {"pair_group": "q1"}}),
        ("q1_poor", {"label_relevant": 0, "meta": {"pair_group": "q1"}}),
        ("q2_a", {"pair_id": "q2", "preferred": 1}),
        ("q2_b", {"pair_id": "q2", "preferred": 0}),
        ("q3_a", {"pair_id": "q3", "preferred": True, "pair_criterion": "faithfulness"}),
        ("q3_b", {"pair_id": "q3", "preferred": False}),
        ("solo", {"label_faithful": 0}),
    ]
    merged = merge_labels(dataset_labels(rows), rows=rows)
    pairs = {(p.group, p.criterion, p.preferred, p.other) for p in merged.pairs}
    assert pairs == {
        ("q1", "faithfulness", "q1_answer", "q1_ungrounded"),
        ("q1", "answer_relevancy", "q1_answer", "q1_poor"),
        ("q2", ALL_CRITERIA, "q2_a", "q2_b"),
        ("q3", "faithfulness", "q3_a", "q3_b"),
    }
    assert merged.groups["q1_poor"] == "q1" and "solo" not in merged.groups


def test_reading_labels_leaves_the_dataset_hash_alone(tmp_path):
    path = ROOT / "sample_data" / "labelled_mini_ja.jsonl"
    before = path.read_bytes()
    ds = load_dataset(path)
    store = Store(tmp_path / "s.sqlite")
    store.set_label(ds.content_hash, "p02", "faithfulness", 1.0)
    rows = [(s.id, s.metadata) for s in ds.samples]
    merged = merge_labels(dataset_labels(rows), inspector_labels(store.labels(ds.content_hash)), rows=rows)
    assert len(merged.for_criterion("faithfulness")) == 16 and merged.for_criterion("faithfulness")["p02"] == 1
    assert [c.row_id for c in merged.conflicts] == ["p02"]
    assert dataset_hash(ds.samples) == ds.content_hash == load_dataset(path).content_hash
    assert path.read_bytes() == before
