"""Hostile trace exports (issue 36): each is made here, small, and must end in a message naming the span or line
(the span skipped, its trace counted as malformed_span) or in one refusal of the file — exit 2, never 3 — and
the Dataset page must show the same words, never a Python exception name. A file over the size limit is refused
before it is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.traces import TraceFormatError, import_trace_file, import_traces
from rageval_core.data.traces.limits import MAX_BYTES
from bench.hostile_traces import DEEP, FILE_ATTACKS, ROOT_LABEL, SPAN_ATTACKS, T, attrs, kv, rag, text  # noqa: F401

@pytest.mark.parametrize("name", sorted(SPAN_ATTACKS))
def test_a_hostile_span_is_named_and_its_trace_skipped(name: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data, where, message = SPAN_ATTACKS[name]
    got = import_traces(data.encode("utf-8", "surrogatepass"), "t.json")
    assert [str(i) for i in got.issues] == [f"t.json, {where}: {message}"]
    assert got.rows == [] and got.skip_counts() == {"malformed_span": 1}
    path = tmp_path / "t.json"
    path.write_bytes(data.encode("utf-8", "surrogatepass"))
    assert cli.main(["import-traces", str(path), "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err and not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("name", sorted(FILE_ATTACKS))
def test_a_hostile_file_is_refused_with_one_message(name: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data, message = FILE_ATTACKS[name]
    with pytest.raises(TraceFormatError) as exc:
        import_traces(data.encode(), "t.json")
    assert str(exc.value).startswith(message)
    path = tmp_path / "t.json"
    path.write_text(data, encoding="utf-8")
    assert cli.main(["import-traces", str(path), "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and message.removeprefix("t.json") in err and "internal error" not in err


def test_a_deep_line_of_json_lines_is_named_and_the_other_lines_read() -> None:
    good = text(rag())
    data = f"{good}\n{'[' * DEEP}{']' * DEEP}\n{{\"context\": {{\"trace_id\": \"{'[' * DEEP}\"}}}}\n".encode()
    got = import_traces(data, "t.jsonl")
    assert [str(i) for i in got.issues] == ["t.jsonl, line 2, item 1: nested more than 64 levels deep",
                                            "t.jsonl, line 3: not an OTLP trace export (no resourceSpans)"]
    assert [r["question"] for r in got.rows] == ["What is X?"]


def test_a_good_trace_beside_a_bad_one_still_imports() -> None:
    bad = rag(status={"code": [2]})
    for span in bad["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["traceId"] = "0" * 31 + "1"
    doc = rag()
    doc["resourceSpans"] += bad["resourceSpans"]
    got = import_traces(json.dumps(doc).encode(), "t.json")
    assert [r["id"] for r in got.rows] == [T] and got.skip_counts() == {"malformed_span": 1}
    assert got.rows[0]["context_scores"] == [0.5] and got.rows[0]["latency_ms"] == 2.0


def test_a_bad_value_nobody_reads_costs_nothing() -> None:
    doc = rag(attributes=[*attrs("What is X?"), kv("llm.token_count.total", {"arrayValue": [1]}),
                          kv("custom.score", {"doubleValue": "NaN"})])
    got = import_traces(json.dumps(doc).encode(), "t.json")
    assert got.issues == [] and [r["question"] for r in got.rows] == ["What is X?"]


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:  # sparse: 60 MB by stat, nothing on disk
        handle.truncate(MAX_BYTES + 10 * 1024 * 1024)

    def no_read(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("the file was read")

    monkeypatch.setattr(Path, "read_bytes", no_read)
    monkeypatch.setattr(Path, "open", no_read)
    with pytest.raises(TraceFormatError, match=r"big.json: 62,914,560 bytes, over the 52,428,800-byte limit"):
        import_trace_file(big)


def test_the_dataset_page_shows_the_same_messages_without_python_names() -> None:
    from rageval_ui.data import TraceUploadRefused, load_trace_upload

    class Upload:  # what Streamlit hands the page: a size, then the bytes on read()
        def __init__(self, data: bytes, size: int | None = None) -> None:
            self.data, self.size, self.reads = data, len(data) if size is None else size, 0

        def seek(self, pos: int) -> None:
            pass

        def read(self, n: int = -1) -> bytes:
            self.reads += 1
            return self.data[:n] if n >= 0 else self.data

    for name, (data, message) in FILE_ATTACKS.items():
        with pytest.raises(TraceUploadRefused) as exc:
            load_trace_upload("t.json", Upload(data.encode()))
        assert str(exc.value).startswith(message), name
    for data, _, _ in SPAN_ATTACKS.values():
        with pytest.raises(TraceUploadRefused, match="0 row\\(s\\) from 1 trace\\(s\\)"):
            load_trace_upload("t.json", Upload(data.encode("utf-8", "surrogatepass")))
    big = Upload(b"", size=MAX_BYTES + 1)
    with pytest.raises(TraceUploadRefused, match="over the 52,428,800-byte limit"):
        load_trace_upload("big.json", big)
    assert big.reads == 0
    good = rag()
    good["resourceSpans"] += rag(status={"code": [2]}, traceId="0" * 31 + "1")["resourceSpans"]
    ws = load_trace_upload("t.json", Upload(json.dumps(good).encode()))
    assert [i.message for i in ws.load_issues][:1] == ["status.code must be 0, 1, 2 or a STATUS_CODE_* name, got a list"]


def test_a_bad_number_deep_in_a_langfuse_input_names_the_observation() -> None:
    download = json.loads((Path(__file__).parent / "traces" / "langfuse" / "google-vertex-tools-langchain-2025-09-19.json")
                          .read_text(encoding="utf-8"))
    download["observations"][0]["input"] = [{"role": "user", "content": {"parameters": "@"}}]
    data = json.dumps(download).replace('"@"', "NaN").encode()
    got = import_traces(data, "lf.json")
    assert [i.message for i in got.issues] == ["NaN is not a number JSON allows"]
    assert got.issues[0].where.startswith("observations[0], observation ") and got.skip_counts() == {"malformed_span": 1}


def test_past_a_thousand_problems_the_rest_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    good = text(rag())
    path = tmp_path / "t.jsonl"
    path.write_text(good + "\n" + "{oops\n" * 5000, encoding="utf-8")
    got = import_trace_file(path)
    assert (len(got.issues), got.n_issues, len(got.rows)) == (1000, 5000, 1)
    assert cli.main(["import-traces", str(path), "--out", str(tmp_path / "o.jsonl")]) == 0
    assert "… and 4,980 more problem(s)" in capsys.readouterr().err


def _paths(value: object, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*path, key))
    elif isinstance(value, list):
        for n, child in enumerate(value[:20]):
            out += _paths(child, (*path, n))
    return out


def test_the_tools_files_with_values_swapped_for_hostile_ones_never_crash() -> None:
    """80 seeded mutations of the real fixtures (a value replaced by a wrong type, a non-finite or overlong
    number, deep nesting or a lone surrogate): each file imports with its problems named, or is refused."""
    import random

    from rageval_core.data.traces import build_map

    here = Path(__file__).parent / "traces"
    files = sorted(p for p in here.glob("*/*.json") if p.name != "versions.json")
    weird = [None, [], {}, "", 0, -1, 1.5, True, [1, 2], {"a": 1}, "0x", "\ud800", 10**30, {"stringValue": None},
             {"arrayValue": [1]}, {"kvlistValue": "x"}, [[[[[]]]]]]
    raw = ["NaN", "Infinity", "1e400", "1" * 5000, "[" * 3000 + "]" * 3000]
    rng = random.Random(36)
    maps = (None, build_map({"contexts": "any:output.value", "answer": "any:input.value"}))
    outcomes = {"rows": 0, "named": 0, "refused": 0}
    for _ in range(80):
        doc = json.loads(rng.choice(files).read_text(encoding="utf-8"))
        for _ in range(rng.randint(1, 3)):
            where = rng.choice(_paths(doc)[1:])
            parent = doc
            for step in where[:-1]:
                parent = parent[step]
            parent[where[-1]] = "@@RAW@@" if rng.random() < 0.3 else rng.choice(weird)
        data = json.dumps(doc).replace('"@@RAW@@"', rng.choice(raw)).encode("utf-8", "surrogatepass")
        for trace_map in maps:
            try:
                got = import_traces(data, "f.json", trace_map=trace_map)
            except TraceFormatError as exc:
                str(exc).encode("utf-8")
                outcomes["refused"] += 1
                continue
            for row in got.rows:
                json.dumps(row, allow_nan=False).encode("utf-8")  # no NaN, no lone surrogate in a row
            for issue in got.issues:
                str(issue).encode("utf-8")
            outcomes["rows" if got.rows else "named"] += 1
    assert sum(outcomes.values()) == 160 and outcomes["rows"] and outcomes["named"], outcomes
