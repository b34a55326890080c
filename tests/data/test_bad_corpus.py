"""The hostile-input corpus (tests/data/bad, outcomes in manifest.json): every file through ``load_dataset``
and through ``python -m rageval_core evaluate`` (in process): no traceback, the documented exit code, the
documented rows, bad rows, warnings and messages, and no control character from the data on the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import MAX_FILE_BYTES, load_dataset

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
MANIFEST = json.loads((BAD / "manifest.json").read_text(encoding="utf-8"))["files"]
RAW_CONTROLS = ("\x1b", "\x07", "\u202e", "\x00")


def _evaluate(path: Path | str, out: Path) -> int:
    return cli.main(["evaluate", str(path), "--provider", "offline", "--metrics", "faithfulness", "--out", str(out), "--quiet"])


def test_manifest_covers_every_file_and_at_least_40() -> None:
    on_disk = {p.name for p in BAD.iterdir() if p.is_file()} - {"README.md", "manifest.json"}  # judges/, documents/: their own
    assert on_disk == {e["file"] for e in MANIFEST}
    assert len(MANIFEST) >= 40
    assert {"loaded", "rejected"} == {e["outcome"] for e in MANIFEST}


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_loader_outcome_is_as_documented(entry: dict) -> None:
    ds = load_dataset(BAD / entry["file"])
    assert [s.id for s in ds.samples] == entry["ids"]
    assert ds.bad_rows == entry["bad_rows"]
    assert len(ds.warnings) == entry["warnings"], [str(i) for i in ds.warnings]
    messages = [i.message for i in ds.issues]
    for expected in entry["messages"]:
        assert any(expected in m for m in messages), (expected, messages)
    assert all(i.file == entry["file"] for i in ds.issues)  # every issue names the file
    assert (entry["outcome"] == "rejected") == (not ds.samples) == bool(ds.file_errors)
    # the invariant behind honest counts: a row with an error is never loaded
    loaded_rows = set(range(1, ds.total_rows + 1)) - set(ds.bad_rows)
    assert len(ds.samples) <= len(loaded_rows)
    if "first" in entry:
        s, want = ds.samples[0], entry["first"]
        assert (s.id, s.question, list(s.contexts), s.answer, s.ground_truth, dict(s.metadata)) == (
            want["id"], want["question"], want["contexts"], want["answer"], want["ground_truth"], want["metadata"])


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_cli_outcome_is_as_documented(entry: dict, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = home / "out.json"
    code = _evaluate(BAD / entry["file"], out)
    captured = capsys.readouterr()
    terminal = captured.out + captured.err
    assert code == entry["exit"], terminal
    assert "Traceback" not in terminal
    assert not [c for c in RAW_CONTROLS if c in terminal]
    for expected in entry["messages"]:
        assert expected in captured.err, (expected, captured.err)
    if entry["bad_rows"]:
        assert f"{len(entry['bad_rows'])} bad row(s) skipped" in captured.err
    if entry["warnings"]:
        assert f"{entry['warnings']} warning(s)" in captured.err
    if entry["outcome"] == "rejected":
        assert "no valid rows to evaluate" in captured.err and not out.exists()
        return
    export = json.loads(out.read_text(encoding="utf-8"))
    row_ids = [r["id"] for r in export["rows"]]
    assert row_ids == entry["ids"]
    assert len(export["invalid_rows"]) == len(entry["bad_rows"])
    assert not set(row_ids) & {r["id"] for r in export["invalid_rows"]}
    issues = export["settings"]["dataset_issues"]
    assert sum(i["severity"] == "warning" for i in issues) == entry["warnings"]
    assert sorted({i["row"] for i in issues if i["severity"] == "error" and i["row"]}) == entry["bad_rows"]


def test_a_file_over_the_size_limit_is_refused_unread(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = home / "big.json"
    with big.open("wb") as fh:  # sparse: nothing big is written to disk
        fh.truncate(MAX_FILE_BYTES + 1)
    ds = load_dataset(big)
    assert not ds.samples and "over the 50 MB limit" in ds.file_errors[0].message
    assert _evaluate(big, home / "o.json") == 2
    assert "over the 50 MB limit" in capsys.readouterr().err
    small = load_dataset(b'[{"question": "q", "contexts": ["c"], "answer": "a"}]', name="x.json", max_bytes=10)
    assert "over the" in small.file_errors[0].message


def test_more_than_20_problems_are_listed_then_counted(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": "good", "question": "What does item 1 do?", "contexts": ["Item 1 stores the data."], "answer": "Item 1 stores the data."}]
    rows += [{"id": f"bad{i}", "answer": "x"} for i in range(30)]
    data = home / "many.json"
    data.write_text(json.dumps(rows), encoding="utf-8")
    assert _evaluate(data, home / "o.json") == 0
    err = capsys.readouterr().err
    assert "30 bad row(s) skipped, 1 evaluated (of 31 rows)" in err
    assert "row 21: question" in err and "row 22: question" not in err and "… and 10 more" in err
    assert len(json.loads((home / "o.json").read_text())["settings"]["dataset_issues"]) == 30


def test_an_internal_error_exits_3_with_one_line_naming_the_log(home: Path, capsys, monkeypatch) -> None:
    import rageval_core.cli.evaluate as evaluate_cmd

    def broken(_args):
        raise RuntimeError("planted bug sk-abcdefghijklmnopqrstuvwx")

    monkeypatch.setattr(evaluate_cmd, "scorers_from_args", broken)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-secret-value-123456")
    assert _evaluate(BAD / "utf8_bom.json", home / "o.json") == 3
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "RuntimeError" in lines[0] and "Traceback" not in err and "planted" not in err
    logs = list((home / "home" / "logs").glob("internal-error-*.log"))
    assert len(logs) == 1 and str(logs[0]) in lines[0]
    text = logs[0].read_text(encoding="utf-8")
    assert "Traceback" in text and "planted bug" in text and "sk-abcdefghijklmnopqrstuvwx" not in text
