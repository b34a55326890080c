"""Agreement math (AUROC, balanced accuracy, kappa, pairwise share, bootstrap) and the real-benchmark check."""

import json
from pathlib import Path

import pytest

from rageval_core.offline.agreement import (
    auroc,
    balanced_accuracy,
    bootstrap_ci,
    cohens_kappa,
    pairwise_agreement,
)
from rageval_core.offline.checks import faithfulness_precheck
from rageval_core.offline.support import faithfulness_score

BENCH = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


def test_auroc_hand_computed():
    assert auroc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert auroc([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 0.0
    # pairs (pos, neg): (0.8,0.5) win, (0.8,0.8) tie, (0.4,0.5) loss, (0.4,0.8) loss -> 1.5 / 4
    assert auroc([0.8, 0.4, 0.5, 0.8], [1, 1, 0, 0]) == pytest.approx(0.375)
    assert auroc([0.5, 0.5], [1, 1]) is None


def test_balanced_accuracy_and_kappa():
    assert balanced_accuracy([1, 1, 1, 0], [1, 1, 0, 0]) == pytest.approx(
        (1.0 + 0.5) / 2
    )
    assert balanced_accuracy([], []) is None
    # observed 0.75; expected 0.75*0.5 + 0.25*0.5 = 0.5 -> (0.75-0.5)/0.5
    assert cohens_kappa([1, 1, 1, 0], [1, 1, 0, 0]) == pytest.approx(0.5)
    assert cohens_kappa([1, 1], [1, 1]) == 1.0
    assert cohens_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert cohens_kappa([], []) is None


def test_pairwise_agreement_counts_ties_half():
    assert pairwise_agreement([0.9, 0.5, 0.2], [0.1, 0.5, 0.3]) == pytest.approx(
        1.5 / 3
    )
    assert pairwise_agreement([], []) is None
    with pytest.raises(ValueError):
        pairwise_agreement([1.0], [])


def test_bootstrap_ci_brackets_the_statistic_and_keeps_groups():
    scores = [0.9, 0.8, 0.7, 0.3, 0.2, 0.6, 0.4, 0.1]
    labels = [1, 1, 1, 0, 0, 1, 0, 0]
    point = auroc(scores, labels)
    lo, hi = bootstrap_ci(
        lambda idx: auroc([scores[i] for i in idx], [labels[i] for i in idx]),
        len(scores),
        iterations=300,
    )
    assert lo <= point <= hi and 0.0 <= lo and hi <= 1.0
    seen_sizes = set()

    def size(idx):
        seen_sizes.add(len(idx))
        return float(len(idx))

    bootstrap_ci(size, 4, groups=["a", "a", "b", "b"], iterations=50)
    assert seen_sizes == {4}  # two groups of two, always drawn whole
    assert bootstrap_ci(lambda idx: None, 3, iterations=5) is None


@pytest.mark.shared
def test_jhars_auroc_on_the_real_benchmark():
    path = BENCH / "jhars.jsonl"
    if not path.exists():
        pytest.skip(
            f"needs the labelled benchmarks at {BENCH} (../shared beside the project); not present here"
        )
    rows = [
        json.loads(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    scores, labels = [], []
    for row in rows:
        if faithfulness_precheck(row["answer"], row["contexts"]) is not None:
            continue
        value, _ = faithfulness_score(
            row["question"], row["contexts"], row["answer"]
        )  # lexical only: fast
        scores.append(value)
        labels.append(row["label_faithful"])
    assert len(scores) >= 90
    assert auroc(scores, labels) >= 0.85
