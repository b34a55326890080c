"""AppTest: Compare's "their scores vs ours" tab on a ragas results CSV (tests/data/external/ragas_results.csv,
written by ragas 0.4.3) evaluated offline by the CLI: which columns were matched, the agreement figures, and their
score beside ours row by row, labelled with its source, the largest disagreement first."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from rageval_core import cli
from rageval_core.core.stats import cohen_kappa, pearson, spearman
from rageval_core.store.runs import Store
from tests.support.apptest import assert_ok, compare_tab, plain, start_app

RESULTS = Path(__file__).resolve().parents[1] / "data" / "external" / "ragas_results.csv"
pytestmark = pytest.mark.timeout(300)


def _theirs(column: str) -> dict[str, float]:
    """Row id -> ragas's score in ``column`` (ragas keeps no id: the loader numbers rows row-1, row-2, ...)."""
    with RESULTS.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {f"row-{i}": float(r[column]) for i, r in enumerate(rows, 1) if r[column].strip()}


def test_their_ragas_scores_beside_ours(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["evaluate", str(RESULTS), "--provider", "offline", "--metrics",
                     "faithfulness,context_precision,answer_correctness", "--judge", "binary", "--out", "out.json", "--quiet"]) == 0
    run_id = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["run_id"]
    ours = {r.sample_id: r.value for r in Store().results(run_id)
            if r.metric == "faithfulness" and r.method == "decomposed"}

    at = start_app(monkeypatch, tmp_path, check=False, timeout=120)
    at.session_state["selected_run"] = run_id
    at.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(at, "Their scores vs ours")
    assert_ok(at)
    shown = [plain(m.value) for m in at.markdown]
    matched = next(m for m in shown if m.startswith("**Compared**"))
    assert "**ragas** `faithfulness` → Faithfulness (8 of 9 rows scored by ragas)" in matched  # its NaN row unscored
    assert "**ragas** `context_precision` → Context Precision (9 of 9" in matched
    skipped = next(m for m in shown if m.startswith("**Not compared:**"))
    assert "`answer_relevancy`: this run did not compute Answer Relevancy" in skipped
    assert "`answer_correctness`" in matched  # decomposed and the binary judge
    assert any("come from the file" in c.value for c in at.caption)

    stats = next(d.value for d in at.dataframe if "mean_diff" in d.value.columns)
    assert list(zip(stats["column"], stats["method"])) == [
        ("faithfulness", "decomposed"), ("faithfulness", "judge:binary"), ("context_precision", "decomposed"),
        ("answer_correctness", "decomposed"),
        ("answer_correctness", "judge:binary")]
    line = stats[(stats["column"] == "faithfulness") & (stats["method"] == "decomposed")].iloc[0]
    theirs = _theirs("faithfulness")
    both = [sid for sid in theirs if ours.get(sid) is not None]
    x = np.array([theirs[s] for s in both])
    y = np.array([float(ours[s]) for s in both])  # type: ignore[arg-type]
    assert line["source"] == "ragas" and line["n"] == len(both)
    assert line["mean_diff"] == pytest.approx(float(np.mean(y - x)))
    assert line["mad"] == pytest.approx(float(np.mean(np.abs(y - x))))
    assert line["agree"] == pytest.approx(float(np.mean((x >= 0.5) == (y >= 0.5))))
    for name, value in (("pearson", pearson(x, y)), ("spearman", spearman(x, y)), ("kappa", cohen_kappa(x, y, 0.5))):
        assert (math.isnan(line[name]) if value is None else line[name] == pytest.approx(value)), name
    assert line["unscored_theirs"] == 1  # ragas left the last row's faithfulness unscored

    rows = next(d.value for d in at.dataframe if "theirs" in d.value.columns)
    assert rows.iloc[0]["sample_id"] == max(both, key=lambda s: abs(float(ours[s]) - theirs[s]))  # type: ignore[arg-type]
    gaps = rows["abs_diff"].dropna().tolist()
    assert gaps == sorted(gaps, reverse=True) and rows["abs_diff"].isna().sum() == 1
    first = rows.iloc[0]
    assert first["theirs"] == pytest.approx(theirs[first["sample_id"]])
    assert first["diff"] == pytest.approx(float(ours[first["sample_id"]]) - theirs[first["sample_id"]])  # type: ignore[arg-type]
    table = next(d for d in at.dataframe if "theirs" in d.value.columns)
    headings = json.dumps(table.proto.columns, ensure_ascii=False) if hasattr(table.proto, "columns") else str(table.proto)
    assert "ragas: faithfulness (from the file)" in headings and "ours: decomposed" in headings

    at.session_state["compare.theirs.column"] = "ragas:answer_correctness"
    at.run()
    assert at.selectbox(key="compare.theirs.method").options == ["decomposed", "judge:binary"]
    at.session_state["compare.theirs.method"] = "judge:binary"  # the judge's scores beside ragas's instead
    at.run()
    assert_ok(at)
    rows = next(d.value for d in at.dataframe if "theirs" in d.value.columns)
    judged = {r.sample_id: r.value for r in Store().results(run_id)
              if r.metric == "answer_correctness" and r.method == "judge:binary"}
    assert all(math.isnan(v) if judged[s] is None else v == pytest.approx(judged[s]) for s, v in zip(rows["sample_id"], rows["ours"]))


def test_no_tab_for_rows_without_other_tools_scores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    data = RESULTS.parent / "ragas_to_jsonl.jsonl"
    assert cli.main(["evaluate", str(data), "--provider", "offline", "--metrics", "faithfulness", "--out", "o.json",
                     "--quiet"]) == 0
    at = start_app(monkeypatch, tmp_path, "rageval_ui/app_pages/compare.py")
    assert "Their scores vs ours" not in [tab.label for tab in at.tabs]


def test_the_view_in_japanese_has_no_english_ui_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The tab read by the Japanese-UI rule of test_i18n_figures: their column names, tool and metric ids are data."""
    from rageval_ui import i18n
    from tests.support.ui_text import english_texts
    from tests.ui.test_i18n_figures import DATA_COLUMNS, KEPT

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["evaluate", str(RESULTS), "--provider", "offline", "--metrics", "faithfulness,context_precision",
                     "--out", "out.json", "--quiet"]) == 0
    at = start_app(monkeypatch, tmp_path, check=False, timeout=120, locale="ja-JP")
    at.session_state["selected_run"] = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["run_id"]
    at.switch_page("rageval_ui/app_pages/compare.py").run()
    at.sidebar.radio(key=i18n.LANG).set_value("ja").run()
    compare_tab(at, i18n.catalogue("ja")["compare.tab.theirs"])
    assert_ok(at)
    assert any("ファイル" in c.value for c in at.caption)  # the view is on the page, in Japanese
    assert english_texts(at, data_columns=DATA_COLUMNS | {"column", "sample_id"}, kept=KEPT) == []
