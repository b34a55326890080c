"""The CLI's closing tables folded from the store (``run_tables``): the same figures as ``compare``'s frame of
every result, memory that does not grow with the results, and a closing phase that never imports pandas."""

from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pandas as pd

from rageval_core.analysis.compare import agreement, category_table, heuristic_only, judge_methods, methods_in, results_frame
from rageval_core.analysis.run_tables import closing_tables
from rageval_core.run.readback import analysis_frame
from rageval_core.store.runs import Store
from rageval_core.core.types import DECOMPOSED
from bench.big_run import clone_run
from tests.run.test_runner_readback import _offline_run  # decomposed + two judge configurations, a blank row, a bad row

ROOT = Path(__file__).resolve().parents[2]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def test_the_folded_tables_give_the_figures_of_the_frame_of_every_result(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    result, samples = _offline_run(store)
    labels = {s.id: (s.metadata.get("category_label") or s.category) for s in samples}  # as the CLI passes them
    position = {sid: i for i, sid in enumerate(labels)}
    frame = results_frame(store.results(result.run_id), labels)
    frame = frame.iloc[frame["sample_id"].map(position).fillna(len(position)).argsort(kind="stable")]
    got = closing_tables(store, result.run_id, labels)

    assert got.methods == methods_in(frame)  # judges in the order their first result was stored
    assert got.methods[0] == "decomposed" and set(got.methods) == {"decomposed", "judge:rubric5@a", "judge:rubric5@b"}
    assert [t.method for t in got.categories] == got.methods
    for table in got.categories:
        want = category_table(frame, table.method)
        assert table.metrics == list(want.columns) and [c for c, _ in table.rows] == list(want.index)
        assert len(want.index) >= 3 and "(none)" not in want.index
        for (_, cells), expected in zip(table.rows, want.to_numpy().tolist()):
            assert all(_same(a, b) for a, b in zip(cells, expected)), (table.method, cells, expected)
    assert [a.judge for a in got.agreements] == judge_methods(frame)
    for folded in got.agreements:
        want = agreement(frame, DECOMPOSED, folded.judge)
        assert folded.heuristic_only == heuristic_only(frame, DECOMPOSED, folded.judge) is True
        assert [line["criterion"] for line in folded.lines] == list(want["criterion"]) == ["faithfulness", "answer_relevancy"]
        for line, row in zip(folded.lines, want.to_dict("records")):
            assert line["n"] == row["n"] and line["note"] == (row["note"] if isinstance(row["note"], str) else None)
            assert all(_same(line[k], row[k]) for k in ("pearson", "spearman", "mad", "kappa")), (line, row)


def test_rows_missing_from_the_row_table_and_unlabelled_rows_still_count(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    result, samples = _offline_run(store)
    labels = {s.id: None for s in samples[1:]}  # the first row's results become orphans, the others unlabelled
    store._write(lambda c: c.execute("DELETE FROM run_rows WHERE run_id = ? AND sample_id = ?", (result.run_id, samples[0].id)), "t")
    frame = results_frame(store.results(result.run_id), labels)
    position = {sid: i for i, sid in enumerate(labels)}
    frame = frame.iloc[frame["sample_id"].map(position).fillna(len(position)).argsort(kind="stable")]
    got = closing_tables(store, result.run_id, labels)
    table = got.categories[0]
    want = category_table(frame, DECOMPOSED)
    assert [c for c, _ in table.rows] == list(want.index) == ["(none)"]
    assert all(_same(a, b) for a, b in zip(table.rows[0][1], want.to_numpy().tolist()[0]))
    line = got.agreements[0].lines[0]
    assert line["n"] == agreement(frame, DECOMPOSED, got.agreements[0].judge)["n"].iloc[0] == len(samples) - 1


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_tables_hold_a_few_floats_a_row_not_a_frame_of_every_result(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    result, samples = _offline_run(store)
    small, big = (clone_run(store, result.run_id, n) for n in (10, 110))
    labels = {rid: {f"{s.id}~{k}": s.category for k in range(n) for s in samples} for rid, n in ((small, 10), (big, 110))}
    results_added = 100 * len(store.results(result.run_id))  # 7,000
    closing_tables(store, small, labels[small])  # imports and first-use caches out of the way
    grown = _peak(lambda: closing_tables(store, big, labels[big])) - _peak(lambda: closing_tables(store, small, labels[small]))
    # Two floats a row for each of the 2 judges × 2 shared criteria: 64 bytes a row, about 9 a result (plus the
    # arrays' over-allocation). The frame of every result these tables were built from before grew by ~300.
    frame_grown = (_peak(lambda: analysis_frame(store, big, labels[big]))
                   - _peak(lambda: analysis_frame(store, small, labels[small])))
    assert grown < 32 * results_added < frame_grown


def test_the_closing_phase_of_evaluate_never_imports_pandas(tmp_path) -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['rageval_core', 'evaluate', 'sample_data/ml_qa_ja.json', '--provider', 'offline', '--metrics',"
        " 'faithfulness,answer_relevancy', '--judge', 'rubric5', '--out', sys.argv[1], '--quiet']\n"
        "try:\n    runpy.run_module('rageval_core', run_name='__main__')\n"
        "except SystemExit as exc:\n    print('exit', exc.code)\n"
        "print('pandas loaded:', 'pandas' in sys.modules)\n"
    )
    for out in ("o.json", "o.csv"):
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path / out)], cwd=ROOT, capture_output=True, text=True,
                              timeout=300, env={"RAGEVAL_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin",
                                                "PYTHONPATH": str(ROOT)})
        assert "exit 0" in done.stdout, done.stderr[-2000:]
        assert "per category, decomposed" in done.stdout and "agreement, decomposed vs judge:rubric5" in done.stdout
        assert "pandas loaded: False" in done.stdout
    assert pd.read_csv(tmp_path / "o.csv").shape[0] == 12
