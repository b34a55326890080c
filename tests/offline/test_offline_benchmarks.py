"""Each labelled file in ../shared/benchmarks, scored through the product path on a small fixed subset.

A subset is the first N rows of each label in the test half of bench/trust.py's seeded split, scored by the
real decomposed scorer on the offline provider (the values a user gets). Each floor is well below what the
subset measures (shown beside it) and above chance, so a regression in the heuristic or in how the metric
aggregates claims fails here; the full figures, with intervals, come from ``python bench/trust.py``.
Skips with the path it needs when ../shared is absent (a fresh clone).
"""

import importlib.util
import sys
from pathlib import Path

import pytest

from rageval_core.core.stats import auroc
from tests.support.skips import needs_shared

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_trust", ROOT / "bench" / "trust.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_trust", module)
    spec.loader.exec_module(module)
    return module


trust = _bench()


@pytest.fixture(scope="module")
def ctx():
    return trust.offline_context()


def subset(samples, label, per_label):
    """The first ``per_label`` rows of each label in the test half (file order), a fixed selection."""
    test = trust.split_halves(samples)[1]
    chosen = []
    for value in (1, 0):
        chosen += [s for s in test if trust.label_of(s, label) == value][:per_label]
    return chosen


# file, metric, label, rows per label, floor (measured on the subset when the floor was set)
POINTWISE = [
    ("jhars", "faithfulness", "label_faithful", 8, 0.65),  # 0.781
    ("jafaithsum", "faithfulness", "label_faithful", 8, 0.60),  # 0.750
    ("lfqa_verification", "faithfulness", "label_faithful", 8, 0.70),  # 0.859
    ("halueval_qa", "faithfulness", "label_faithful", 12, 0.80),  # 0.955
    ("jtruthfulqa", "answer_correctness", "label_correct", 10, 0.60),  # 0.733 (19 scored, a bare yes unscored)
]


@pytest.mark.shared
@pytest.mark.parametrize("name,metric,label,per_label,floor", POINTWISE, ids=[p[0] for p in POINTWISE])
def test_the_decomposed_metric_agrees_with_the_labels(name, metric, label, per_label, floor, ctx):
    samples = trust.load_samples(needs_shared(f"benchmarks/{name}.jsonl"))
    rows = subset(samples, label, per_label)
    assert len(rows) == 2 * per_label
    scored = trust.score_samples(rows, trust.build_methods([metric], judges=()), ctx)
    values = scored.values[("decomposed", metric)]
    kept = [s for s in rows if values[s.id] is not None]
    assert len(kept) >= len(rows) - 2, scored.reasons  # at most a bare yes / no left unscored
    got = auroc([values[s.id] for s in kept], [trust.label_of(s, label) for s in kept])
    assert got is not None and got >= floor, f"{name}: AUROC {got:.3f} on {len(kept)} rows, floor {floor}"


@pytest.mark.shared
def test_wikieval_prefers_the_grounded_answer(ctx):
    samples = trust.load_samples(needs_shared("benchmarks/wikieval_subset.jsonl"))
    rows = [s for s in samples if (s.metadata.get("meta") or {}).get("variant") in ("answer", "ungrounded")]
    scored = trust.score_samples(rows, trust.build_methods(["faithfulness"], judges=()), ctx)
    wins, pairs = trust.wikieval_pairs(rows, scored.values[("decomposed", "faithfulness")], "ungrounded")
    assert pairs == 11
    assert wins >= 8, f"{trust.fraction(wins, pairs)} pairs prefer the grounded answer (measured 11/11)"


def test_the_split_is_fixed_halves_and_keeps_groups_together():
    from rageval_core.core.types import Sample

    # 11 pairs by meta.pair_id (each pair its own question), and 10 rows sharing 5 question + contexts
    rows = [Sample(f"r{i}", f"q{i // 2}", ("c",), "a", metadata={"meta": {"pair_id": f"p{i // 2}"}}) for i in range(22)]
    rows += [Sample(f"s{i}", f"shared{i % 5}", ("doc", f"d{i % 5}"), f"a{i}") for i in range(10)]
    dev, test = trust.split_halves(rows)
    assert len(dev) == len(test) == 16 and {s.id for s in dev}.isdisjoint({s.id for s in test})
    groups = trust.group_keys(rows)
    assert len(set(groups.values())) == 16
    assert {groups[s.id] for s in dev}.isdisjoint({groups[s.id] for s in test})
    assert trust.shared_question_context_pairs(dev, test) == 0
    assert trust.split_halves(rows) == (dev, test)  # the seed fixes it
    assert trust.fraction(10.5, 11) == "10.5/11" and trust.fraction(11.0, 11) == "11/11"


def test_groups_join_a_pair_and_a_shared_question_transitively():
    from rageval_core.core.types import Sample

    rows = [Sample("a", "q1", ("c",), "x", metadata={"meta": {"pair_id": "p"}}),
            Sample("b", "q2", ("c",), "y", metadata={"meta": {"pair_id": "p"}}),
            Sample("c", "q2", ("c",), "z"), Sample("d", "q3", ("c",), "w")]
    groups = trust.group_keys(rows)
    assert groups["a"] == groups["b"] == groups["c"] == "a" and groups["d"] == "d"
    by_row_id = ([rows[0], rows[3]], [rows[1], rows[2]])
    assert trust.shared_question_context_pairs(*by_row_id) == 0
    assert trust.shared_question_context_pairs([rows[1]], [rows[2]]) == 1
