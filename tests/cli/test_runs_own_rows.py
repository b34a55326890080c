"""A run keeps the rows it scored (question, contexts, answer, ground truth, metadata) through the store's texts:
its exports, report and ``trust RUN`` read them from the run, also after the dataset file was edited and moved.
Before, ``runs export RUN --out x.csv`` gave the 12 seed rows with empty question and answer. Texts are stored once
per content: a second run on the same data adds no text to the store. A run stored before runs kept their rows
still opens through the hash hunt, and a resume on the same data gives it its rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.analysis.report.build import find_samples
from rageval_core.analysis.trust.run_report import samples_of_run
from rageval_core.data.datasets import load_dataset
from rageval_core.store import db
from rageval_core.store.runs import Store

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_data" / "ml_qa_ja.json"


def _evaluate(data: Path, out: Path, *extra: str) -> str:
    assert cli.main(["evaluate", str(data), "--provider", "offline", "--metrics", "faithfulness", "--judge", "rubric5",
                     "--out", str(out), "--quiet", *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))["run_id"]


def _texts(store: Store) -> int:
    return int(db.connect(store.path).execute("SELECT COUNT(*) FROM texts").fetchone()[0])


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_exports_carry_the_rows_as_scored_after_the_file_was_edited_and_moved(home: Path,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    seed = load_dataset(SEED).samples
    data = home / "data.json"
    data.write_bytes(SEED.read_bytes())
    run_id = _evaluate(data, home / "first.json")
    edited = json.loads(data.read_text(encoding="utf-8"))
    for row in edited:
        row["question"], row["answer"] = "edited", "edited"
    (home / "moved").mkdir()
    (home / "moved" / "data.json").write_text(json.dumps(edited, ensure_ascii=False), encoding="utf-8")
    data.unlink()

    assert cli.main(["runs", "export", run_id, "--out", str(home / "x.csv")]) == 0
    with open(home / "x.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["id"], r["question"], r["answer"]) for r in rows] == [(s.id, s.question, s.answer) for s in seed]

    assert cli.main(["runs", "export", run_id, "--out", str(home / "x.json")]) == 0
    exported = json.loads((home / "x.json").read_text(encoding="utf-8"))["rows"]
    assert [(r["question"], r["contexts"], r["answer"], r["ground_truth"], r["metadata"]) for r in exported] == [
        (s.question, list(s.contexts), s.answer, s.ground_truth, dict(s.metadata)) for s in seed]

    store = Store()
    texts, source = find_samples(store, store.find_run(run_id))  # the report
    assert source == "the run" and [texts[s.id] for s in seed] == seed
    assert samples_of_run(store, store.find_run(run_id)) == seed  # trust RUN, annotate, the comparison
    capsys.readouterr()
    assert cli.main(["trust", run_id, "--iterations", "50"]) == 0
    assert "dataset file is missing" not in capsys.readouterr().err


def test_a_second_run_on_the_same_rows_stores_no_text_again(home: Path) -> None:
    data = home / "data.json"
    data.write_bytes(SEED.read_bytes())
    _evaluate(data, home / "first.json")
    store = Store()
    before = _texts(store)
    second = _evaluate(data, home / "second.json")
    assert _texts(store) == before  # rows, prompts and responses: each content once, however many runs hold it
    assert len(store.samples(second)) == 12


def test_a_run_stored_before_runs_kept_their_rows_is_found_by_hash_and_a_resume_gives_it_its_rows(home: Path) -> None:
    data = home / "data.json"
    data.write_bytes(SEED.read_bytes())
    run_id = _evaluate(data, home / "first.json")
    store = Store()
    db.connect(store.path).execute("UPDATE run_rows SET sample = NULL WHERE run_id = ?", (run_id,))  # as stored before
    assert not store.keeps_samples(run_id) and store.samples(run_id) == {}
    texts, source = find_samples(store, store.find_run(run_id))
    assert source == "data.json (found by hash)" and len(texts) == 12
    assert cli.main(["runs", "export", run_id, "--out", str(home / "old.csv")]) == 0  # as before: no texts in it
    with open(home / "old.csv", encoding="utf-8", newline="") as fh:
        assert {(r["question"], r["answer"]) for r in csv.DictReader(fh)} == {("", "")}

    _evaluate(data, home / "resumed.json", "--resume", run_id)
    assert store.keeps_samples(run_id) and list(store.samples(run_id).values()) == load_dataset(SEED).samples


def test_every_field_of_a_sample_comes_back_as_it_was(tmp_path: Path) -> None:
    from rageval_core.core.types import Sample
    from rageval_core.store.runs import RowInfo

    odd = [
        Sample("a", "", ("", "two\n\nparagraphs\n", "<context>tag-like</context>"), "ends with a newline\n", None,
               {"category": "x", "nested": {"k": [1, 2.5, None]}}, {"ragas:faithfulness": 0.8, "ragas:context_recall": None}),
        Sample("b", "日本語の質問？", (), "回答", "正解", {}, {}),
    ]
    store = Store(tmp_path / "s.sqlite")
    run_id = store.create_run(scorers=["faithfulness"], rows=[RowInfo(s.id, i, s.category, True, None, s)
                                                              for i, s in enumerate(odd)])
    assert list(store.samples(run_id).values()) == odd
