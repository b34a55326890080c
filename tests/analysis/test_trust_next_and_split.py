"""Issue 36, item 7 on stored runs: label next never proposes a split's test rows (their labels are hidden, not
missing) nor a labelled row, and a dataset edited in one row keeps its split and its test-look counter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rageval_core.analysis.trust.run_report import label_next_for_run, run_report
from rageval_core.analysis.trust.split_run import current_split
from rageval_core.analysis.trust.splits import TEST
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from tests.support.runs import run_rows

ROOT = Path(__file__).resolve().parents[2]
SPLIT = {"train": 0.2, "dev": 0.4, "test": 0.4}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(unlabelled: int = 8) -> list[dict[str, Any]]:
    """The 24 Japanese rows of the labelled sample, the last ``unlabelled`` without their label columns."""
    rows = [json.loads(line) for line in (ROOT / "sample_data" / "trust_labelled.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    rows = [r for r in rows if not r["id"].endswith("-en")]
    for row in rows[len(rows) - unlabelled:]:
        for key in [k for k in row if k.startswith("label_")]:
            del row[key]
    return rows


def _run(path: Path, name: str = "support") -> tuple[str, list[Any]]:
    ds = load_dataset(path)
    done = run_rows(ds.samples, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=name,
                    dataset_digest=ds.content_hash)
    return done.run_id, list(ds.samples)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    return Store()


def test_label_next_proposes_neither_hidden_test_rows_nor_labelled_ones(store, tmp_path) -> None:
    run_id, samples = _run(_write(tmp_path / "support.jsonl", _rows()))
    report = run_report(store, run_id, samples=samples, split=SPLIT, iterations=20)
    test_rows = {r for r, s in current_split(store, store.get_run(run_id).dataset_hash).assignment.items() if s == TEST}
    labelled = {s.id for s in samples if any(k.startswith("label_") for k in s.metadata)}
    proposed = {c.row_id for c in report.label_next}
    assert proposed, "nothing proposed: the test says nothing"
    assert not proposed & test_rows, proposed & test_rows
    assert not proposed & labelled
    info = store.get_run(run_id)
    inspect = {c.row_id for c in label_next_for_run(store, info, samples, store.results(run_id), [s.id for s in samples])}
    assert inspect == proposed  # Inspect's "Label next" and the Trust page agree
    shown = run_report(store, run_id, samples=samples, show_test=True, iterations=20)
    assert not {c.row_id for c in shown.label_next} & (test_rows | labelled)


def test_one_edited_row_keeps_the_split_and_the_test_looks(store, tmp_path) -> None:
    rows = _rows(unlabelled=0)
    first, samples = _run(_write(tmp_path / "support.jsonl", rows))
    run_report(store, first, samples=samples, split=SPLIT, iterations=20)
    for _ in range(2):
        run_report(store, first, samples=samples, show_test=True, iterations=20)
    before = current_split(store, store.get_run(first).dataset_hash)
    assert before is not None and before.test_looks == 2
    rows[5] = dict(rows[5], answer=rows[5]["answer"] + "。")  # a one-character edit in one row
    second, edited = _run(_write(tmp_path / "support.jsonl", rows))
    assert store.get_run(second).dataset_hash != store.get_run(first).dataset_hash
    report = run_report(store, second, samples=edited, iterations=20)
    after = current_split(store, store.get_run(second).dataset_hash)
    assert after is not None and after.assignment == before.assignment
    assert (after.seed, after.fractions, after.test_looks) == (before.seed, before.fractions, 2)
    assert report.split is not None
    run_report(store, second, samples=edited, show_test=True, iterations=20)
    assert current_split(store, store.get_run(second).dataset_hash).test_looks == 3


def test_another_dataset_with_the_same_ids_does_not_take_the_split(store, tmp_path) -> None:
    rows = _rows(unlabelled=0)
    first, samples = _run(_write(tmp_path / "support.jsonl", rows))
    run_report(store, first, samples=samples, split=SPLIT, iterations=20)
    run_report(store, first, samples=samples, show_test=True, iterations=20)
    other = [dict(r, question=r["question"] + "？") for r in rows]
    second, _ = _run(_write(tmp_path / "other.jsonl", other), name="other")
    assert current_split(store, store.get_run(second).dataset_hash, dataset_name="other",
                         row_ids=[r["id"] for r in other]) is None
