"""Large dataset files: JSON Lines and CSV past the whole-read limit are read row by row, with the same rows,
issues and hash as a whole read; other large files are refused unread saying what would load. The limit is
lowered per call (``max_bytes``) so small files exercise the large-file path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import MAX_FILE_BYTES, MAX_STREAM_BYTES, load_dataset

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
ROW = {"question": "What does item 1 do?", "contexts": ["Item 1 stores the data."], "answer": "Item 1 stores the data."}


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_stream_limit_is_above_the_whole_read_limit() -> None:
    assert MAX_STREAM_BYTES >= 10 * MAX_FILE_BYTES  # a 100,000-row JSONL (~98 MB) loads


@pytest.mark.parametrize("path", sorted(p for p in BAD.iterdir() if p.suffix in (".jsonl", ".csv")), ids=lambda p: p.name)
def test_a_streamed_read_matches_the_whole_read_or_refuses_unread(path: Path) -> None:
    whole = load_dataset(path)
    streamed = load_dataset(path, max_bytes=1)  # every file is "large" now
    if streamed.file_errors and "must be UTF-8" in streamed.file_errors[0].message:
        # not plain UTF-8 (Shift_JIS, UTF-16, binary): such a file must be small enough to read whole
        assert "read row by row" in streamed.file_errors[0].message and not streamed.samples
        return
    assert streamed.samples == whole.samples
    assert [str(i) for i in streamed.issues] == [str(i) for i in whole.issues]
    assert (streamed.content_hash, streamed.total_rows) == (whole.content_hash, whole.total_rows)
    assert streamed.format == whole.format or not whole.samples  # an empty file reports "json" when read whole


def test_a_large_jsonl_loads_with_its_bad_row_named_by_file_row_and_field(tmp_path: Path) -> None:
    rows = [{**ROW, "id": f"r{i}"} for i in range(2500)]
    rows[1234] = {"id": "r1234", "question": "q", "contexts": 7, "answer": "a"}  # contexts a number
    rows[2000] = '{"id": "broken", "question": '  # not JSON
    path = _jsonl(tmp_path / "big.jsonl", rows)
    seen: list[int] = []
    ds = load_dataset(path, max_bytes=1000, on_row=seen.append)
    assert len(ds.samples) == 2498 and ds.total_rows == 2500 and seen == [1000, 2000]
    bad = {(i.file, i.row, i.field) for i in ds.errors}
    assert bad == {("big.jsonl", 1235, "contexts"), ("big.jsonl", 2001, None)}
    assert any("line 2001: invalid JSON" in i.message for i in ds.errors)
    assert ds.content_hash == load_dataset(path).content_hash  # the identity does not depend on the read


def test_a_large_csv_streams_quoted_newlines_and_names_the_unterminated_quote(tmp_path: Path) -> None:
    good = tmp_path / "big.csv"
    good.write_text("id,question,contexts,answer\n" + "".join(f'r{i},"q{i}\nline two",ctx,a{i}\n' for i in range(50)), encoding="utf-8")
    ds = load_dataset(good, max_bytes=100)
    assert len(ds.samples) == 50 and ds.samples[3].question == "q3\nline two"
    broken = tmp_path / "broken.csv"
    broken.write_text(good.read_text(encoding="utf-8") + 'r50,"never closed,ctx,a\n' + "r51,q,ctx,a\n", encoding="utf-8")
    ds = load_dataset(broken, max_bytes=100)
    assert not ds.samples and "data row 51, line 102" in ds.file_errors[0].message


def test_large_json_documents_and_non_utf8_files_are_refused_saying_what_loads(tmp_path: Path) -> None:
    doc = tmp_path / "big.json"
    doc.write_text(json.dumps([ROW] * 20), encoding="utf-8")
    message = load_dataset(doc, max_bytes=100).file_errors[0].message
    assert "read whole" in message and "JSON Lines" in message
    late = tmp_path / "late.jsonl"
    long_row = {**ROW, "contexts": ["x" * 70_000]}  # the bad byte lies past the 64 KB head that is checked first
    late.write_bytes(json.dumps(long_row).encode() + b"\n" + json.dumps({**ROW, "answer": "caf\xe9"}, ensure_ascii=False).encode("latin-1") + b"\n")
    ds = load_dataset(late, max_bytes=10)
    assert not ds.samples and "line 2 is not UTF-8 text" in ds.file_errors[0].message
    refused = load_dataset(late, max_bytes=1, max_stream_bytes=2).file_errors[0].message
    assert "MB limit; split it" in refused


def test_the_cli_evaluates_a_jsonl_over_the_whole_read_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    path = _jsonl(tmp_path / "rows.jsonl", [{**ROW, "id": f"r{i}"} for i in range(5)] + [{"id": "nq", "answer": "a"}])
    with path.open("a", encoding="utf-8") as fh:  # a blank line past the 50 MB whole-read limit
        fh.write(" " * MAX_FILE_BYTES + "\n")
    out = tmp_path / "out.json"
    code = cli.main(["evaluate", str(path), "--provider", "offline", "--metrics", "faithfulness", "--out", str(out), "--quiet"])
    assert code == 0
    export = json.loads(out.read_text(encoding="utf-8"))
    assert [r["id"] for r in export["rows"]] == [f"r{i}" for i in range(5)]
    assert "row 6: question: missing question" in capsys.readouterr().err


def _variants() -> list[dict]:
    """Rows of the sample data and each with one thing changed that the careful reader reports or fixes."""
    base = []
    for path in sorted((Path(__file__).resolve().parents[2] / "sample_data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        base += [r for r in (data if isinstance(data, list) else []) if isinstance(r, dict)]
    assert len(base) >= 20
    row = dict(base[0])
    changes = [
        {"id": 7}, {"id": 7.0}, {"id": True}, {"id": "a\nb"}, {"id": None}, {"question": "  padded  "}, {"question": " "},
        {"question": 3}, {"answer": ""}, {"answer": None}, {"ground_truth": ""}, {"ground_truth": ["a", "b"]},
        {"contexts": []}, {"contexts": ["", "x"]}, {"contexts": [["x"]]}, {"contexts": "plain"}, {"contexts": ["a\x00b"]},
        {"question": "bad \ud800"}, {"extra": None}, {"extra": float("nan")}, {"extra": float("inf")}, {"extra": {"k": 1}},
        {"extra": [1, 2]}, {"label_faithfulness": 1}, {"user_input": "other question"}, {" spaced": "x"}, {"answer": "a\r\nb"},
        {"ragas:faithfulness": 0.5}, {"faithfulness": 0.5}, {"retrieval_context": ["x"]}, {"input": "q2"}, {"context": ["y"]},
    ]
    return base + [{**row, **c} for c in changes] + [{k: v for k, v in row.items() if k != "ground_truth"}]


def test_the_fast_row_path_gives_what_the_careful_path_gives_or_steps_aside() -> None:
    from rageval_core.data.datasets.rowkeys import fast_row as _fast_row
    from rageval_core.data.datasets.rows import RowReader

    taken = 0
    for n, record in enumerate(_variants(), 1):
        fast = _fast_row(n, record)
        reader = RowReader("f.json", text_cells=False)
        careful = reader.careful_row(n, record)
        if fast is None:
            continue
        taken += 1
        assert fast == careful and not reader.issues, record
    assert taken >= 20  # the sample data rows are all plain
    assert _fast_row(1, {"question": "q", "contexts": ["c"], "answer": "a", "label_x": 1}) is None
