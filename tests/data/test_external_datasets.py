"""Files written by ragas, DeepEval and Phoenix themselves (tests/data/external, each by a script beside it that
records the library versions) read right, or their rows are refused naming file, row and field."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from rageval_core.data.datasets import load_dataset
from tests.data.external.rows import source_rows

EXTERNAL = Path(__file__).resolve().parent / "external"
SOURCE = source_rows()
PIPE_ROW = len(SOURCE)  # the last row: one of its contexts holds a "|"
RAGAS_METRICS = ("faithfulness", "answer_relevancy", "context_precision", "answer_correctness")


def _deepeval_split(contexts: list[str]) -> tuple[str, ...]:
    """The contexts as DeepEval's own CSV / JSONL loaders give them back: joined with "|" and split on it."""
    return tuple(part.strip() for part in "|".join(contexts).split("|"))


# file → (ids kept, ground truth kept, contexts as that tool's own loader gives them back)
FILES: dict[str, tuple[bool, bool, bool]] = {
    "ragas_to_jsonl.jsonl": (False, True, False),
    "ragas_to_list.json": (False, True, False),
    "ragas_to_csv.csv": (False, True, False),
    "ragas_to_pandas.csv": (False, True, False),
    "ragas_results.csv": (False, True, False),
    "deepeval_goldens.json": (True, True, False),
    "deepeval_goldens.jsonl": (True, True, True),
    "deepeval_goldens.csv": (True, True, True),
    "phoenix_input_output_context.csv": (False, False, False),
    "phoenix_input_output_context.jsonl": (False, False, False),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_tools_own_file_reads_every_row_right_with_no_issue(name: str) -> None:
    ids, reference, deepeval_joined = FILES[name]
    loaded = load_dataset(EXTERNAL / name)
    assert loaded.issues == [] and len(loaded.samples) == len(SOURCE)
    for n, (sample, row) in enumerate(zip(loaded.samples, SOURCE), 1):
        assert sample.question == row["question"] and sample.answer == row["answer"]
        expected = _deepeval_split(row["contexts"]) if deepeval_joined else tuple(row["contexts"])
        assert sample.contexts == expected, (name, n)
        assert sample.ground_truth == (row["ground_truth"] if reference else None)
        assert sample.id == (row["id"] if ids else f"row-{n}")
        assert not any(c.startswith("[") for c in sample.contexts)  # never one context holding a repr
    assert loaded.samples[4].question.startswith("機械学習における過学習")  # Japanese survives every writer


def test_deepeval_splits_a_pipe_inside_a_context_as_deepeval_does() -> None:
    """The one known loss: DeepEval joins contexts with "|" in CSV and JSONL and splits them there; its JSON keeps lists."""
    assert len(load_dataset(EXTERNAL / "deepeval_goldens.csv").samples[-1].contexts) == 4
    assert len(load_dataset(EXTERNAL / "deepeval_goldens.json").samples[-1].contexts) == 3


def test_ragas_csv_gives_each_row_the_contexts_and_the_hash_of_its_jsonl() -> None:
    jsonl = load_dataset(EXTERNAL / "ragas_to_jsonl.jsonl")
    for name in ("ragas_to_csv.csv", "ragas_to_pandas.csv", "ragas_results.csv", "ragas_to_list.json"):
        other = load_dataset(EXTERNAL / name)
        assert [s.contexts for s in other.samples] == [s.contexts for s in jsonl.samples], name
        assert other.content_hash == jsonl.content_hash, name  # external scores are not part of the hash
    assert sum(len(s.contexts) for s in jsonl.samples) == 19


def test_a_ragas_results_csv_keeps_its_metric_columns_as_ragas_scores_never_as_metadata() -> None:
    loaded = load_dataset(EXTERNAL / "ragas_results.csv")
    with (EXTERNAL / "ragas_results.csv").open(encoding="utf-8", newline="") as fh:
        cells = list(csv.DictReader(fh))
    for sample, row in zip(loaded.samples, cells):
        assert set(sample.external_scores) == {f"ragas:{m}" for m in RAGAS_METRICS}
        for metric in RAGAS_METRICS:
            want = None if row[metric] == "" else float(row[metric])
            assert sample.external_scores[f"ragas:{metric}"] == want
        assert not set(sample.metadata) & set(RAGAS_METRICS) and "" not in sample.metadata
    assert loaded.samples[-1].external_scores["ragas:faithfulness"] is None  # ragas's NaN: unscored by ragas


def test_deepeval_keeps_its_ideal_context_and_additional_metadata_beside_the_row() -> None:
    for name in ("deepeval_goldens.json", "deepeval_goldens.jsonl", "deepeval_goldens.csv"):
        first = load_dataset(EXTERNAL / name).samples[0]
        assert first.metadata["context"] == [SOURCE[0]["ground_truth"]]  # DeepEval's context is not what was retrieved
        assert first.metadata["category"] == SOURCE[0]["category"] and "additional_metadata" not in first.metadata


def test_phoenix_frames_keep_the_trace_and_span_ids() -> None:
    for name in ("phoenix_input_output_context.csv", "phoenix_input_output_context.jsonl"):
        meta = load_dataset(EXTERNAL / name).samples[0].metadata
        assert re.fullmatch(r"[0-9a-f]{32}", meta["trace_id"]) and re.fullmatch(r"[0-9a-f]{16}", meta["span_id"])


def test_versions_json_names_the_writers() -> None:
    versions = json.loads((EXTERNAL / "versions.json").read_text(encoding="utf-8"))
    assert versions["ragas"]["ragas"] == "0.4.3" and versions["deepeval"]["deepeval"] == "4.3.1"
    assert versions["phoenix"]["arize-phoenix"] == "20.26.1"


def _ragas_csv(cells: list[str]) -> bytes:
    """The ragas CSV fixture with its first data row's retrieved_contexts cell replaced by each of ``cells``."""
    rows = list(csv.reader(io.StringIO((EXTERNAL / "ragas_to_csv.csv").read_text(encoding="utf-8"), newline="")))
    header, first = rows[0], rows[1]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for cell in cells:
        writer.writerow([cell if h == "retrieved_contexts" else v for h, v in zip(header, first)])
    return out.getvalue().encode("utf-8")


@pytest.mark.parametrize("cell, problem", [
    ("['The first passage.', 'The second passage is cut off by a spreadsheet", "not a valid list"),
    ("['a passage', __import__('os').system('touch /tmp/rageval-pwned')]", "item 2 is not a quoted string"),
    ("['a passage', 3]", "item 2 is not a quoted string"),
    ("['a', {'b': 1}]", "item 2 is not a quoted string"),
])
def test_a_list_cell_that_cannot_be_read_refuses_its_row_naming_file_row_and_field(cell: str, problem: str) -> None:
    loaded = load_dataset(_ragas_csv(["['fine one', \"it's fine\"]", cell]), "edited.csv")
    assert [s.contexts for s in loaded.samples] == [("fine one", "it's fine")]
    (issue,) = loaded.issues
    assert (issue.file, issue.row, issue.field, issue.severity) == ("edited.csv", 2, "contexts", "error")
    assert problem in issue.message and "row skipped" in issue.message
    assert not Path("/tmp/rageval-pwned").exists()  # parsed, never evaluated


def test_a_python_list_in_a_json_string_is_read_as_a_list_with_a_warning() -> None:
    row = {"question": "q", "contexts": "['a', \"b's\"]", "answer": "x"}
    loaded = load_dataset(json.dumps([row]).encode(), "rows.json")
    assert loaded.samples[0].contexts == ("a", "b's")
    assert [(i.field, i.severity) for i in loaded.issues] == [("contexts", "warning")]


def test_pandas_index_column_is_dropped_without_a_warning_but_other_unnamed_cells_still_warn() -> None:
    text = ",question,contexts,answer\n0,q,c,a\n1,q2,c2,a2\n"
    assert load_dataset(text.encode(), "x.csv").issues == []
    warned = load_dataset("question,,answer\nq,stray,a\n".encode(), "y.csv")
    assert [i.field for i in warned.warnings if "no header name" in i.message] == [None]


def _first(name: str) -> dict[str, Any]:
    return json.loads((EXTERNAL / name).read_text(encoding="utf-8").splitlines()[0])


def test_deepeval_without_retrieval_context_says_how_to_use_its_context() -> None:
    row = {"input": "q", "actual_output": "a", "retrieval_context": None, "context": ["the ideal passage"]}
    loaded = load_dataset(json.dumps([row]).encode(), "goldens.json")
    assert loaded.samples[0].contexts == () and loaded.samples[0].metadata["context"] == ["the ideal passage"]
    assert any("contexts=context" in i.message for i in loaded.warnings)
    assert _first("deepeval_goldens.jsonl")["retrieval_context"].count("|") == 1  # what DeepEval's JSONL holds


def test_python_list_cells_read_exactly_what_repr_wrote_holding_one_item_at_a_time() -> None:
    from rageval_core.data.datasets.values import AST_MAX_CHARS, python_list

    tricky = ["it's", 'say "hi"', "both ' and \"", "tab\there\nnewline", "back\\slash", "日本語 ", "\x00\u202e", "[not a list]"]
    assert python_list(repr(tricky)) == (tricky, None)
    assert python_list(repr(tuple(tricky))) == (tricky, None)
    big = ["passage %d" % i for i in range(200_000)]  # 2.6 MB: scanned, never parsed to a syntax tree
    assert python_list(repr(big)) == (big, None)
    nested = repr([["a"] * 20_000])  # over AST_MAX_CHARS and not a flat list: refused rather than parsed whole
    assert len(nested) > AST_MAX_CHARS and python_list(nested) == (None, "not a list of quoted strings")
    assert python_list("[['a'], 'b']") == ([["a"], "b"], None)  # a small nested one is parsed (and flattened later)
