"""AppTest: store faults in the UI (issue 36 item 6). A read-only store (a 0400 file) is read: Compare, Inspect,
Trust and History show the run with a note that the store is read-only, and a label that cannot be saved says so;
a corrupted store, or a RAGEVAL_HOME that is a file, is one clear message naming the file and what to do on every
page, never a traceback. The file's bytes and mode are left as they were."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from tests.support.apptest import ROOT, assert_ok, button, plain, start_app
from tests.support.runs import run_rows

PAGES = {"compare": "rageval_ui/app_pages/compare.py", "inspect": "rageval_ui/app_pages/inspect_sample.py",
         "trust": "rageval_ui/app_pages/trust.py", "history": "rageval_ui/app_pages/history.py",
         "evaluate": "rageval_ui/app_pages/evaluate.py", "dataset": "rageval_ui/app_pages/dataset.py"}
STORE = "rageval.sqlite"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store with one offline rubric5 run on two rows of the English sample, its WAL folded in."""
    home = tmp_path_factory.mktemp("made")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
        done = run_rows(ds.samples[:2], [JudgeScorer("rubric5")], config=ProviderConfig(), dataset_name=ds.name,
                        dataset_digest=ds.content_hash)
    conn = sqlite3.connect(home / STORE)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"store": str(home / STORE), "run": done.run_id}


def _copy(made: dict[str, str], tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    shutil.copyfile(made["store"], home / STORE)
    os.chmod(home / STORE, 0o600)
    return home


def _open(monkeypatch: pytest.MonkeyPatch, home: Path, page: str, run_id: str | None = None) -> AppTest:
    at = start_app(monkeypatch, home, check=False, timeout=240)
    if run_id is not None:
        at.session_state["selected_run"] = run_id
    at.switch_page(PAGES[page]).run()
    return at


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("page", ["compare", "inspect", "trust", "history"])
def test_a_read_only_store_shows_its_runs_with_a_note(monkeypatch: pytest.MonkeyPatch, made: dict[str, str],
                                                      tmp_path: Path, page: str) -> None:
    home = _copy(made, tmp_path)
    os.chmod(home / STORE, 0o400)
    before = _sha(home / STORE)
    at = _open(monkeypatch, home, page, made["run"])
    assert_ok(at, any_error=True)
    notes = [plain(i.value) for i in at.info if "read-only" in plain(i.value)]
    assert notes == [f"the store {home / STORE} is read-only (the file is not writable): runs and labels are shown, "
                     "nothing can be saved"]
    shown = " ".join(str(e.value) for e in [*at.selectbox, *at.dataframe, *at.markdown, *at.caption])
    assert made["run"] in shown or page == "history" and at.dataframe, page  # the run's data is on the page
    assert stat.S_IMODE((home / STORE).stat().st_mode) == 0o400 and _sha(home / STORE) == before
    assert sorted(p.name for p in home.iterdir()) == [STORE]  # no -wal / -shm left beside it


def test_labels_on_a_read_only_store_are_shown_and_say_they_cannot_be_saved(
        monkeypatch: pytest.MonkeyPatch, made: dict[str, str], tmp_path: Path) -> None:
    home = _copy(made, tmp_path)
    os.chmod(home / STORE, 0o400)
    before = _sha(home / STORE)
    at = _open(monkeypatch, home, "inspect", made["run"])
    assert_ok(at, any_error=True)
    assert "The store is read-only: labels are shown and cannot be saved (see the note at the top)." in [
        plain(c.value) for c in at.caption]
    whole_row = button(at, "👍 Whole row")
    assert whole_row.disabled and button(at, "👎 Whole row").disabled
    assert _sha(home / STORE) == before


def test_a_save_the_store_refuses_is_said_where_the_labels_are(monkeypatch: pytest.MonkeyPatch, made: dict[str, str],
                                                              tmp_path: Path) -> None:
    """A store made read-only after the page was drawn (the buttons still enabled): the store's refusal is shown."""
    from rageval_core.store import engine

    home = _copy(made, tmp_path)
    at = _open(monkeypatch, home, "inspect", made["run"])
    assert_ok(at, any_error=True)

    def refused(*_a: object, **_k: object) -> None:
        raise engine.StoreReadOnly(str(engine.read_only(home / STORE, "save label")))

    monkeypatch.setattr("rageval_ui.labels.save_label", refused)
    button(at, "👍 Whole row").click().run()
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1 and f"the store {home / STORE} is read-only" in errors[0], errors
    assert "so this could not be saved (save label)" in errors[0]


def _damaged(path: Path) -> None:
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    data[size: 2 * size] = b"\xff" * size
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("corruption", ["text", "damaged page"])
@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_corrupted_store_is_one_clear_message_naming_the_file(monkeypatch: pytest.MonkeyPatch, made: dict[str, str],
                                                                tmp_path: Path, page: str, corruption: str) -> None:
    home = _copy(made, tmp_path)
    path = home / STORE
    if corruption == "text":
        path.write_text("not a database\n", encoding="utf-8")
    else:
        _damaged(path)
    before = _sha(path)
    at = _open(monkeypatch, home, page, made["run"])
    assert not at.exception, [e.value for e in at.exception]
    errors = [plain(e.value) for e in at.error]
    if corruption == "damaged page" and page in ("evaluate", "dataset"):
        assert errors == []  # the schema reads, and these pages read no run: the damage is met where a page reads it
    else:
        assert len(errors) == 1, errors
        assert f"the store {path} is not a readable SQLite database" in errors[0]
        assert "Move it aside or restore it from a backup" in errors[0]
        assert "unexpected" not in errors[0] and "Traceback" not in errors[0]
    assert _sha(path) == before


def test_rageval_home_that_is_a_file_is_said_on_every_page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("x", encoding="utf-8")
    for page in PAGES:
        at = _open(monkeypatch, home, page)
        assert not at.exception
        errors = [plain(e.value) for e in at.error]
        assert len(errors) == 1 and f"the state folder {home} (RAGEVAL_HOME, or ./.rageval when it is unset) is a file, " \
            "not a folder" in errors[0], (page, errors)


def test_the_messages_show_in_japanese(monkeypatch: pytest.MonkeyPatch, made: dict[str, str], tmp_path: Path) -> None:
    home = _copy(made, tmp_path)
    os.chmod(home / STORE, 0o400)
    at = start_app(monkeypatch, home, PAGES["history"], locale="ja", timeout=240)
    notes = [plain(i.value) for i in at.info if "読み取り専用" in plain(i.value)]
    assert notes == [f"ストア {home / STORE} は読み取り専用です（ファイルに書き込めません）。実行結果とラベルは表示できますが、"
                     "何も保存できません"]
