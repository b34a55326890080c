"""Compare, Inspect and Trust read a run's rows from the run; a run stored before runs kept their rows opens
through the hash hunt, and the page says its rows were found by hash (English and Japanese); History says its wide
CSV's texts come from a dataset found by hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.store import db
from rageval_core.store.runs import Store
from tests.support.apptest import assert_ok, plain, start_app
from rageval_ui import i18n, runs

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "rageval_ui" / "locales"


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    data = tmp_path / "data.json"
    data.write_bytes((ROOT / "sample_data" / "ml_qa_en.json").read_bytes())  # a shipped file: found by its hash
    assert cli.main(["evaluate", str(data), "--provider", "offline", "--metrics", "faithfulness", "--out",
                     str(tmp_path / "r.json"), "--quiet"]) == 0
    return json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["run_id"]


def _captions(at) -> str:
    return " ".join(plain(c.value) for c in at.caption)


def test_a_run_that_keeps_its_rows_reads_them_and_says_nothing_of_hashes(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = _run(tmp_path, monkeypatch)
    (tmp_path / "data.json").unlink()  # the file is gone: the run has its rows
    view = runs.load(run_id, None, Store())
    assert view is not None and view.samples_source == runs.RUN_ROWS and len(view.samples) == 12
    assert runs.rows_note(view.samples_source) is None
    at = start_app(monkeypatch, tmp_path / "home", check=False, timeout=240)
    at.session_state["selected_run"] = run_id
    at.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    assert_ok(at)
    assert "found by hash" not in _captions(at)


def test_a_run_stored_before_says_its_rows_were_found_by_hash_in_both_languages(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = _run(tmp_path, monkeypatch)
    db.connect(tmp_path / "home" / "rageval.sqlite").execute("UPDATE run_rows SET sample = NULL")  # as stored before
    (tmp_path / "data.json").unlink()  # its own file gone: the shipped sample file with its hash is found
    view = runs.load(run_id, None, Store())
    assert view is not None and view.samples_source == "sample:sample_data/ml_qa_en.json" and len(view.samples) == 12
    en = json.loads((LOCALES / "en.json").read_text(encoding="utf-8"))
    ja = json.loads((LOCALES / "ja.json").read_text(encoding="utf-8"))
    note = en["runs.rows_by_hash.sample"].format(name="sample_data/ml_qa_en.json")
    # The session on the Japanese sample: the run's English rows are not the loaded dataset's.
    at = start_app(monkeypatch, tmp_path / "home", check=False, timeout=240, sample="ml_qa_ja.json")
    at.session_state["selected_run"] = run_id
    for page in ("rageval_ui/app_pages/compare.py", "rageval_ui/app_pages/inspect_sample.py"):
        at.switch_page(page).run()
        assert_ok(at)
        assert note in _captions(at), page
    at.sidebar.radio(key=i18n.LANG).set_value("ja").run()
    assert ja["runs.rows_by_hash.sample"].format(name="sample_data/ml_qa_en.json") in _captions(at)
    at.switch_page("rageval_ui/app_pages/history.py").run()
    assert_ok(at)
    assert ja["runs.rows_by_hash.history"] in _captions(at)
