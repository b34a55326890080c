"""Writing datasets back in ragas's and DeepEval's names: every naming and format loads back with our loader to the
same rows, hash and external scores, and CSV list cells are written as the tools write them (the cell ragas's own
``to_csv`` wrote, byte for byte). The real libraries reading these files: tests/e2e/test_external_libraries.py."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from rageval_core.data.datasets import DatasetError, dumps_dataset, load_dataset, save_dataset

EXTERNAL = Path(__file__).resolve().parent / "external"
SOURCES = ("ragas_results.csv", "deepeval_goldens.json", "phoenix_input_output_context.csv")


def _cells(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("naming", ["seed", "ragas", "deepeval"])
@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_every_naming_and_format_loads_back_to_the_same_rows(source: str, naming: str, fmt: str) -> None:
    loaded = load_dataset(EXTERNAL / source)
    samples = loaded.samples if (naming, fmt) != ("deepeval", "csv") else loaded.samples[:-1]  # the "|" row: refused below
    back = load_dataset(dumps_dataset(samples, fmt, naming=naming), f"out.{fmt}")  # type: ignore[arg-type]
    assert back.issues == []
    assert back.samples == samples  # ids, texts, contexts, metadata and external scores
    if len(samples) == len(loaded.samples):
        assert back.content_hash == loaded.content_hash


def test_ragas_csv_list_cells_are_the_cells_ragas_writes() -> None:
    ours = _cells(dumps_dataset(load_dataset(EXTERNAL / "ragas_to_csv.csv").samples, "csv", naming="ragas"))
    theirs = _cells((EXTERNAL / "ragas_to_csv.csv").read_bytes())
    assert [r["retrieved_contexts"] for r in ours] == [r["retrieved_contexts"] for r in theirs]
    assert [r["user_input"] for r in ours] == [r["user_input"] for r in theirs]


def test_deepeval_csv_context_cells_are_the_cells_deepeval_writes_and_a_pipe_inside_one_is_refused() -> None:
    samples = load_dataset(EXTERNAL / "deepeval_goldens.json").samples
    ours = _cells(dumps_dataset(samples[:-1], "csv", naming="deepeval"))
    theirs = _cells((EXTERNAL / "deepeval_goldens.csv").read_bytes())[:-1]
    for column in ("input", "actual_output", "expected_output", "retrieval_context", "context"):
        assert [r[column] for r in ours] == [r[column] for r in theirs], column
    assert json.loads(ours[0]["additional_metadata"]) == {"id": "1-en", "category": "correct"}
    with pytest.raises(DatasetError, match=r"row 9, retrieval_context 2 holds a '\|'.*JSON or JSONL"):
        dumps_dataset(samples, "csv", naming="deepeval")


def test_ragas_named_rows_carry_ragas_scores_under_ragas_names_and_seed_rows_under_labelled_keys() -> None:
    samples = load_dataset(EXTERNAL / "ragas_results.csv").samples
    ragas_row = json.loads(dumps_dataset(samples, "jsonl", naming="ragas").splitlines()[0])
    assert {"user_input", "retrieved_contexts", "response", "reference", "faithfulness", "id"} <= set(ragas_row)
    seed_row = json.loads(dumps_dataset(samples, "jsonl").splitlines()[0])
    assert seed_row["ragas:faithfulness"] == 1.0 and "faithfulness" not in seed_row
    deepeval_row = json.loads(dumps_dataset(samples, "jsonl", naming="deepeval").splitlines()[0])
    assert set(deepeval_row) == {"input", "actual_output", "expected_output", "retrieval_context", "additional_metadata"}
    assert deepeval_row["additional_metadata"]["ragas:faithfulness"] == 1.0


def test_save_dataset_names_the_file_and_refuses_an_unknown_naming(tmp_path: Path) -> None:
    samples = load_dataset(EXTERNAL / "deepeval_goldens.json").samples
    with pytest.raises(DatasetError, match="row 9"):
        save_dataset(samples, tmp_path / "out.csv", naming="deepeval")
    assert not (tmp_path / "out.csv").exists()  # nothing half-written
    with pytest.raises(DatasetError, match="unknown naming"):
        dumps_dataset(samples, "json", naming="langfuse")  # type: ignore[arg-type]
