"""Dataset loading, validation, saving and table round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rageval_core.data.datasets import (
    DatasetError,
    Issue,
    contexts_to_cell,
    dataframe_to_samples,
    dataset_hash,
    detect_dataset_language,
    dumps_dataset,
    load_dataset,
    parse_contexts_cell,
    samples_to_dataframe,
    save_dataset,
)
from rageval_core.core.types import Sample

SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"

ROWS = [
    {"id": 1, "question": "What is RAG?", "contexts": ["RAG retrieves documents.", "It then generates."],
     "answer": "RAG retrieves then generates.", "ground_truth": "Retrieval plus generation.",
     "category": "correct", "label_faithful": 1},
    {"id": "b", "question": "過学習とは？", "contexts": ["過学習は訓練データへの過度な適合です。"],
     "answer": "過度な適合です。", "category": "partial"},
]


def _bytes(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def test_json_list_loads_with_ids_as_strings_and_metadata() -> None:
    ds = load_dataset(_bytes(ROWS), name="rows.json")
    assert ds.ok and ds.issues == [] and ds.name == "rows" and ds.format == "json"
    first, second = ds.samples
    assert first.id == "1" and second.id == "b"
    assert first.contexts == ("RAG retrieves documents.", "It then generates.")
    assert dict(first.metadata) == {"category": "correct", "label_faithful": 1}
    assert second.ground_truth is None and second.category == "partial"


@pytest.mark.parametrize("key", ["rows", "data", "samples", "Items"])
def test_json_object_wrapping_the_list(key: str) -> None:
    ds = load_dataset(_bytes({"name": "x", key: ROWS}), name="wrapped.json")
    assert [s.id for s in ds.samples] == ["1", "b"] and ds.ok


def test_json_columnar_object() -> None:
    cols = {"question": ["q1", "q2"], "contexts": [["c1"], ["c2a", "c2b"]], "answer": ["a1", "a2"]}
    ds = load_dataset(_bytes(cols), name="cols.json")
    assert [s.contexts for s in ds.samples] == [("c1",), ("c2a", "c2b")]
    assert [s.id for s in ds.samples] == ["row-1", "row-2"]


def test_ragas_column_names_are_accepted() -> None:
    rows = [{"user_input": "q", "retrieved_contexts": ["c"], "response": "a", "reference": "gt"}]
    s = load_dataset(_bytes(rows), name="ragas.json").samples[0]
    assert (s.question, s.contexts, s.answer, s.ground_truth, dict(s.metadata)) == ("q", ("c",), "a", "gt", {})
    out = json.loads(dumps_dataset([s], "json", naming="ragas"))
    assert set(out[0]) == {"id", "user_input", "retrieved_contexts", "response", "reference"}


def test_conflicting_aliases_warn_and_keep_the_other_in_metadata() -> None:
    rows = [{"question": "q", "user_input": "other", "contexts": ["c"], "answer": "a"}]
    ds = load_dataset(_bytes(rows), name="c.json")
    assert ds.samples[0].question == "q" and ds.samples[0].metadata == {"user_input": "other"}
    assert [(i.field, i.severity) for i in ds.issues] == [("question", "warning")]


def test_plain_string_contexts_become_one_element_list_with_warning() -> None:
    rows = [{"id": "p", "question": "q", "contexts": "only one passage", "answer": "a"}]
    ds = load_dataset(_bytes(rows), name="plain.json")
    assert ds.samples[0].contexts == ("only one passage",)
    assert ds.issues == [Issue("plain.json", 1, "contexts", "contexts is a plain string; loaded as a one-element list", "warning")]
    assert ds.ok  # warnings do not make the dataset bad


def test_json_string_holding_a_list_is_parsed_with_warning() -> None:
    rows = [{"question": "q", "contexts": '["a", "b"]', "answer": "x"}]
    ds = load_dataset(_bytes(rows), name="s.json")
    assert ds.samples[0].contexts == ("a", "b") and ds.warnings[0].field == "contexts"


def test_row_without_question_is_an_error_and_other_rows_load() -> None:
    rows = [ROWS[0], {"id": "nq", "contexts": ["c"], "answer": "a"}, {"id": "blank", "question": "  ", "answer": "a"}, ROWS[1]]
    ds = load_dataset(_bytes(rows), name="bad.json")
    assert [s.id for s in ds.samples] == ["1", "b"]
    assert ds.bad_rows == [2, 3] and not ds.ok and ds.total_rows == 4
    err = ds.errors[0]
    assert (err.file, err.row, err.field, err.severity) == ("bad.json", 2, "question", "error")
    assert "bad.json row 2, question: missing question" in str(err)


def test_every_problem_is_reported_not_just_the_first() -> None:
    rows = [
        {"id": 1, "question": "q1", "answer": "a"},                 # no contexts → warning
        {"id": 1, "question": "q2", "contexts": ["c"], "answer": "a"},  # duplicate id → error
        "not an object",                                              # error
        {"id": {"x": 1}, "question": "q4", "contexts": ["c"]},       # bad id + no answer
        {"question": "q5", "contexts": ["c", "", None], "answer": "a", "label_faithful": "yes"},
        {"question": ["q"], "contexts": 5, "answer": "a"},
    ]
    ds = load_dataset(_bytes(rows), name="many.json")
    found = {(i.row, i.field, i.severity) for i in ds.issues}
    assert {(1, "contexts", "warning"), (2, "id", "error"), (3, None, "error"), (4, "id", "error"),
            (5, "contexts", "warning"), (5, "label_faithful", "warning"),
            (6, "question", "error"), (6, "contexts", "error")} <= found
    assert (4, "answer", "warning") not in found  # a skipped row's fix-ups would describe a row that is not loaded
    assert [s.id for s in ds.samples] == ["1", "row-5"]
    assert ds.samples[1].contexts == ("c",)


def test_generated_ids_cannot_collide_silently() -> None:
    rows = [{"id": "row-2", "question": "a", "contexts": ["c"], "answer": "x"}, {"question": "b", "contexts": ["c"], "answer": "y"}]
    ds = load_dataset(_bytes(rows), name="g.json")
    assert [s.id for s in ds.samples] == ["row-2"] and ds.errors[0].row == 2 and "duplicate id" in ds.errors[0].message


def test_float_integral_ids_and_numbers_as_text() -> None:
    ds = load_dataset(_bytes([{"id": 3.0, "question": 42, "contexts": ["c"], "answer": "a"}]), name="n.json")
    assert ds.samples[0].id == "3" and ds.samples[0].question == "42"
    assert ds.warnings[0].field == "question"


def test_jsonl_with_a_broken_line() -> None:
    text = "\n".join([json.dumps(ROWS[0]), "{not json", "", json.dumps(ROWS[1], ensure_ascii=False)]) + "\n"
    ds = load_dataset(text.encode("utf-8"), name="d.jsonl")
    assert [s.id for s in ds.samples] == ["1", "b"] and ds.format == "jsonl"
    assert ds.errors[0].row == 2 and "line 2" in ds.errors[0].message


def test_jsonl_is_sniffed_without_extension() -> None:
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS)
    assert load_dataset(text.encode("utf-8")).format == "jsonl"


def test_utf8_bom_is_accepted_in_every_format(tmp_path: Path) -> None:
    ref = load_dataset(_bytes(ROWS), name="r.json")
    for fmt in ("json", "jsonl", "csv"):
        body = dumps_dataset(ref.samples, fmt)  # type: ignore[arg-type]
        if not body.startswith(b"\xef\xbb\xbf"):
            body = b"\xef\xbb\xbf" + body
        path = tmp_path / f"bom.{fmt}"
        path.write_bytes(body)
        ds = load_dataset(path)
        assert ds.ok and ds.samples[0].id == "1", fmt
        assert ds.content_hash == ref.content_hash, fmt


def test_utf16_and_file_objects(tmp_path: Path) -> None:
    text = "question\tcontexts\tanswer\r\n質問\t文脈\t回答\r\n"
    assert load_dataset(text.encode("utf-16"), name="u.csv").samples[0].question == "質問"
    path = tmp_path / "up.json"
    path.write_bytes(_bytes(ROWS))
    with path.open("rb") as handle:
        ds = load_dataset(handle)
    assert ds.name == "up"
    assert [s.id for s in ds.samples] == ["1", "b"]


def test_shift_jis_csv_loads_with_a_warning() -> None:
    data = "id,question,contexts,answer\n1,質問です,文脈,回答\n".encode("cp932")
    ds = load_dataset(data, name="sjis.csv")
    assert ds.samples[0].question == "質問です" and "Shift_JIS" in ds.warnings[0].message


def test_csv_cells_with_newlines_and_context_formats() -> None:
    text = (
        "id,question,contexts,answer,ground_truth,label_faithful,category\r\n"
        '1,"two\r\nlines?","[""first, with comma"", ""second""]","ans\nwer",,1,correct\r\n'
        '2,q2,"a ||| b |||c",x,gt,0,partial\r\n'
        '3,q3,"line one\nline two",y,,,\r\n'
        "4,q4,single passage,z,,true,\r\n"
        ",,,,,,\r\n"
    )
    ds = load_dataset(text.encode("utf-8"), name="t.csv")
    assert ds.ok, ds.issues
    s1, s2, s3, s4 = ds.samples
    assert s1.question == "two\nlines?" and s1.answer == "ans\nwer" and s1.ground_truth is None
    assert s1.contexts == ("first, with comma", "second")
    assert s2.contexts == ("a", "b", "c") and s2.ground_truth == "gt"
    assert s3.contexts == ("line one", "line two")
    assert s4.contexts == ("single passage",)
    assert s1.metadata == {"label_faithful": 1, "category": "correct"}
    assert s3.metadata == {} and s4.metadata == {"label_faithful": True}


def test_csv_ragged_row_and_missing_question() -> None:
    text = "id,question,contexts,answer\n1,q,c,a\n2,q,c,a,extra\n3,,c,a\n"
    ds = load_dataset(text.encode("utf-8"), name="r.csv")
    assert [s.id for s in ds.samples] == ["1"] and ds.bad_rows == [2, 3]


def test_tab_separated_file() -> None:
    ds = load_dataset(b"question\tcontexts\tanswer\nq\tc1|||c2\ta\n", name="t.csv")
    assert ds.samples[0].contexts == ("c1", "c2")


@pytest.mark.parametrize(
    "data, fragment",
    [(b"", "empty"), (b" \n", "empty"), (b"[]", "no rows"), (b"{bad", "invalid JSON"), (b'{"x": 1}', "no list of rows"),
     (b"\x81\x00\xff\xff", "UTF-8"), (b"42", "expected a list")],
)
def test_file_level_problems_are_issues_not_exceptions(data: bytes, fragment: str) -> None:
    ds = load_dataset(data, name="f.json")
    assert ds.samples == [] and not ds.ok
    assert any(fragment in i.message and i.row is None for i in ds.errors), ds.issues


def test_missing_file_is_an_issue(tmp_path: Path) -> None:
    ds = load_dataset(tmp_path / "nope.json")
    assert not ds.ok and "cannot read" in ds.errors[0].message


@pytest.mark.parametrize("ext", ["json", "jsonl", "csv"])
def test_save_load_round_trip_keeps_samples_and_hash(tmp_path: Path, ext: str) -> None:
    samples = [
        Sample("a", "q\nwith newline", ("ctx, with comma", 'ctx "quoted"\nsecond line'), "ans", "gt",
               {"category": "correct", "label_faithful": 1, "label_relevant": 0.5, "tags": ["x", "y"]}),
        Sample("b", "日本語の質問", (), "", None, {"category_label": "✅ 正確な回答"}),
    ]
    path = save_dataset(samples, tmp_path / f"out.{ext}")
    ds = load_dataset(path)
    assert ds.samples == samples
    assert ds.content_hash == dataset_hash(samples)
    assert load_dataset(path).content_hash == ds.content_hash  # loading never changes it


def test_save_rejects_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="xlsx"):
        save_dataset([], tmp_path / "x.xlsx")


def test_hash_is_stable_and_sensitive() -> None:
    a = load_dataset(_bytes(ROWS), name="a.json")
    # Same data, other key order, other field names, extra whitespace, CRLF: same normalised samples.
    variant = [{"answer": r["answer"] + "  ", "user_input": r["question"], **{k: v for k, v in r.items() if k not in {"answer", "question"}}} for r in ROWS]
    b = load_dataset(_bytes(variant).replace(b"\\n", b"\\r\\n"), name="b.json")
    assert a.content_hash == b.content_hash
    changed = [dict(ROWS[0], answer="different"), ROWS[1]]
    assert load_dataset(_bytes(changed)).content_hash != a.content_hash
    assert load_dataset(_bytes(ROWS[::-1])).content_hash != a.content_hash


def test_language_detection() -> None:
    ja = load_dataset(SAMPLE_DATA / "ml_qa_ja.json")
    en = load_dataset(SAMPLE_DATA / "ml_qa_en.json")
    assert ja.language == "ja" and en.language == "en"
    assert detect_dataset_language([]) == "en"


def test_dataframe_round_trip_and_issues() -> None:
    ds = load_dataset(SAMPLE_DATA / "ml_qa_ja.json")
    df = samples_to_dataframe(ds.samples)
    assert list(df.columns[:5]) == ["id", "question", "contexts", "answer", "ground_truth"]
    back = dataframe_to_samples(df, name="editor")
    assert back.samples == ds.samples and back.content_hash == ds.content_hash and back.ok

    df.loc[2, "question"] = ""                         # edited to blank → error on row 3
    df.loc[0, "contexts"] = "edited one ||| edited two"
    df.loc[len(df)] = [None] * len(df.columns)        # an empty added row is ignored
    edited = dataframe_to_samples(df, name="editor")
    assert edited.bad_rows == [3] and edited.errors[0].file == "editor" and edited.errors[0].field == "question"
    assert edited.samples[0].contexts == ("edited one", "edited two") and len(edited.samples) == 11


def test_dataframe_issue_rows_match_table_positions_across_blank_rows() -> None:
    df = pd.DataFrame({"question": ["q1", None, "", "q4"], "contexts": ["c", None, "", "c"], "answer": ["a", None, "", "a"]})
    df.loc[3, "question"] = " "
    ds = dataframe_to_samples(df)
    assert [s.id for s in ds.samples] == ["row-1"] and ds.bad_rows == [4] and ds.total_rows == 2


def test_dataframe_cells_from_editor_types() -> None:
    df = pd.DataFrame({"id": [None, "x"], "question": ["q1", "q2"], "contexts": [["a", "b"], '["c"]'],
                       "answer": ["a", None], "label_faithful": [1.0, float("nan")]})
    ds = dataframe_to_samples(df)
    assert [s.id for s in ds.samples] == ["row-1", "x"]
    assert ds.samples[0].contexts == ("a", "b") and ds.samples[1].contexts == ("c",)
    assert ds.samples[0].metadata == {"label_faithful": 1} and ds.samples[1].metadata == {}


@pytest.mark.parametrize("contexts", [("a", "b"), ("one\ntwo",), ("x ||| y",), ("[not json",), (), (" padded ",)])
def test_context_cell_round_trip(contexts: tuple[str, ...]) -> None:
    cell = contexts_to_cell(contexts)
    assert tuple(parse_contexts_cell(cell)) == tuple(c.strip() for c in contexts)
