"""``import-traces``: rows written, skips counted with reasons on stderr, exit 2 when nothing imports."""

from __future__ import annotations

import json
from pathlib import Path

from rageval_core import cli

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def test_import_traces_writes_the_rows_and_says_what_was_skipped(tmp_path: Path, capsys) -> None:
    out = tmp_path / "rows.jsonl"
    assert cli.main(["import-traces", str(TRACES / "sdk" / "openllmetry_langchain.otlp.json"), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["question"] for r in rows] == ["What is overfitting?", "ドロップアウト率は通常どの範囲に設定されますか？"]
    assert "2 row(s) from 3 trace(s), 26 span(s) (otel); skipped 1 error_status" in captured.err
    assert "skipped 1 trace(s): the trace ended in an error" in captured.err
    assert captured.out.strip() == f"2 row(s) → {out}"


def test_import_traces_with_a_map_and_format(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "map.json"
    spec.write_text(json.dumps({"metadata": {"model": "LLM:llm.model_name"}}), encoding="utf-8")
    out = tmp_path / "rows.csv"
    assert cli.main(["import-traces", str(TRACES / "sdk" / "openinference_langchain.otlp.json"), "--format", "otel", "--map", str(spec),
                     "--out", str(out)]) == 0
    from rageval_core.data.datasets import load_dataset

    ds = load_dataset(out)
    assert [s.metadata["model"] for s in ds.samples] == ["gpt-4o-mini", "gpt-4o-mini"]


def test_nothing_to_import_exits_2_naming_the_problem(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"resourceSpans": []}\n{oops\n', encoding="utf-8")
    assert cli.main(["import-traces", str(bad), "--out", str(tmp_path / "o.json")]) == 2
    assert f"{bad}: no span could be read as otel (first problem: line 2: not JSON" in capsys.readouterr().err
    assert cli.main(["import-traces", str(TRACES / "sdk" / "openinference_langchain.otlp.json"), "--format", "langfuse",
                     "--out", str(tmp_path / "o.json")]) == 2
    assert "not a Langfuse trace or observation" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()
