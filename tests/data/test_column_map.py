"""The column map: a file with names the loader does not know, read through ``ColumnMap`` the same way whole,
row by row (streamed) and while a run goes (live); a map that does not fit the file is named, never guessed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core.data.datasets import ColumnMap, load_dataset, parse_column_map
from rageval_core.data.datasets.live import open_live

ROWS = [
    {"prompt": "What is RAG?", "docs": "RAG retrieves documents.\n\nIt then generates.\nOn two lines.", "reply": "It retrieves.",
     "gold": "Retrieval plus generation.", "question": "not this one", "key": "a"},
    {"prompt": "過学習とは？", "docs": "訓練データへの過度な適合。", "reply": "過度な適合です。", "gold": "過学習は過度な適合。",
     "question": "nor this", "key": "b"},
]
MAP = ColumnMap({"id": "key", "question": "prompt", "contexts": "docs", "answer": "reply", "ground_truth": "gold"}, "\n\n")


def _csv(rows: list[dict[str, str]]) -> bytes:
    import csv
    import io

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _check(loaded: object) -> None:
    samples = loaded.samples  # type: ignore[attr-defined]
    assert [s.id for s in samples] == ["a", "b"]
    assert samples[0].question == "What is RAG?" and samples[0].answer == "It retrieves."
    assert samples[0].contexts == ("RAG retrieves documents.", "It then generates.\nOn two lines.")
    assert samples[1].ground_truth == "過学習は過度な適合。"
    assert samples[0].metadata == {"question": "not this one"}  # a known name beside a mapped field stays metadata


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_a_mapped_file_reads_each_field_from_its_column(fmt: str) -> None:
    data = {"json": json.dumps(ROWS).encode(), "jsonl": "\n".join(json.dumps(r) for r in ROWS).encode(), "csv": _csv(ROWS)}[fmt]
    loaded = load_dataset(data, f"mine.{fmt}", column_map=MAP)
    assert loaded.issues == []
    _check(loaded)


def test_streamed_and_live_reads_use_the_map_as_the_whole_read_does(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_bytes(_csv(ROWS))
    whole = load_dataset(path, column_map=MAP)
    streamed = load_dataset(path, column_map=MAP, max_bytes=10)
    assert streamed.content_hash == whole.content_hash and streamed.issues == []
    live = open_live(path, min_bytes=0, column_map=MAP)
    assert live is not None and [s.id for s in live] == ["a", "b"] and live.content_hash == whole.content_hash
    assert live.reopen().column_map == MAP


def test_a_mapped_question_column_missing_from_a_csv_refuses_the_file_naming_the_columns() -> None:
    loaded = load_dataset(_csv(ROWS), "mine.csv", column_map=ColumnMap({"question": "prompts"}))
    (issue,) = loaded.errors
    assert issue.row is None and issue.field == "question" and "'prompts'" in issue.message and "'prompt'" in issue.message


def test_a_mapped_question_missing_from_json_rows_refuses_each_row_and_other_columns_warn_once() -> None:
    loaded = load_dataset(json.dumps(ROWS).encode(), "mine.json", column_map=ColumnMap({"question": "ask", "answer": "rep"}))
    assert loaded.bad_rows == [1, 2]
    assert all("'ask'" in i.message for i in loaded.errors if i.row is not None)
    loaded = load_dataset(json.dumps(ROWS).encode(), "mine.json", column_map=ColumnMap({"question": "prompt", "answer": "rep"}))
    unused = [i for i in loaded.warnings if i.row is None]
    assert len(loaded.samples) == 2 and [(i.field, "'rep'" in i.message) for i in unused] == [("answer", True)]


def test_parse_column_map_reads_the_cli_form_and_names_what_it_cannot_read() -> None:
    cm = parse_column_map(["question=input,answer=actual_output", "contexts=docs"], "pipe")
    assert dict(cm.columns) == {"question": "input", "answer": "actual_output", "contexts": "docs"}
    assert cm.contexts_separator == "|" and parse_column_map([], "\\n").contexts_separator == "\n"
    assert ColumnMap.from_settings(cm.to_settings()) == cm and ColumnMap.from_settings(None) is None
    for bad, said in [("question", "field=column"), ("questio=x", "cannot map questio"), ("question=a,answer=a", "both"),
                      ("question=a,question=b", "mapped twice")]:
        with pytest.raises(ValueError, match=said):
            parse_column_map([bad])


def test_a_deepeval_file_mapped_by_hand_reads_as_the_known_names_do() -> None:
    """Mapping DeepEval's own names gives what the loader gives them unmapped (its "|"-joined contexts included)."""
    external = Path(__file__).resolve().parent / "external" / "deepeval_goldens.csv"
    mapped = ColumnMap({"question": "input", "contexts": "retrieval_context", "answer": "actual_output",
                        "ground_truth": "expected_output"})
    assert load_dataset(external, column_map=mapped).content_hash == load_dataset(external).content_hash
