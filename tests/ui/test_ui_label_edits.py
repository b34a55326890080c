"""Issue 36, item 4 in the app: a label taken back on Inspect goes for the person it belongs to (it no longer comes
back when the name is typed), and the Trust page's labels-file import refuses a value that is not a label, naming
the row, or skips it when asked, naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rageval_core.analysis.trust.label_edits import save_label
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT, assert_ok, plain, start_app
from tests.support.runs import run_rows

pytestmark = pytest.mark.timeout(600)
INSPECT, TRUST = "rageval_ui/app_pages/inspect_sample.py", "rageval_ui/app_pages/trust.py"
IDS = ("t01", "t02", "t03", "t04")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
    done = run_rows([s for s in ds.samples if s.id in IDS], build_scorers(["faithfulness"]), config=ProviderConfig(),
                    dataset_name=ds.name, dataset_digest=ds.content_hash)
    return {"home": tmp_path, "run": done.run_id, "hash": ds.content_hash}


def _inspect(monkeypatch: pytest.MonkeyPatch, home: dict[str, Any], row: str, name: str = "") -> Any:
    at = start_app(monkeypatch, home["home"], check=False, timeout=240)
    at.session_state["selected_run"] = home["run"]
    at.session_state["inspect_sample"] = row
    if name:
        at.session_state["annotator.name"] = name
    at.switch_page(INSPECT).run()
    assert_ok(at)
    return at


def _thumb(at: Any, criterion: str = "faithfulness") -> Any:
    return next(f for f in at.feedback if f.key.split(".")[3] == criterion)


def test_a_label_taken_back_in_a_tab_with_no_name_goes_for_the_annotator_it_came_from(monkeypatch, home) -> None:
    at = _inspect(monkeypatch, home, "t02", name="chika")
    _thumb(at).set_value(1).run()
    assert Store().annotator_labels(home["hash"])["t02"]["faithfulness"] == {"chika": 1.0}
    at = _inspect(monkeypatch, home, "t02")  # another tab: nobody typed a name
    assert _thumb(at).value == 1
    _thumb(at).set_value(None).run()
    assert_ok(at)
    assert Store().labels(home["hash"]).get("t02", {}).get("faithfulness") is None
    assert Store().annotator_labels(home["hash"]).get("t02", {}).get("faithfulness") is None
    at = _inspect(monkeypatch, home, "t02", name="chika")  # the name typed again: nothing comes back
    assert _thumb(at).value is None


def test_taking_back_keeps_the_other_peoples_labels_and_their_word(home) -> None:
    store, digest = Store(), home["hash"]
    for name, value in (("aiko", 1.0), ("ben", 1.0), ("chika", 0.0)):
        save_label(store, digest, "t01", "faithfulness", value, annotator=name)
    assert store.labels(digest)["t01"]["faithfulness"] == 0.0  # the latest word
    change = save_label(store, digest, "t01", "faithfulness", None, annotator="chika")
    assert change.removed_for == ("chika",) and change.team == 1.0  # aiko and ben both say 1
    assert store.labels(digest)["t01"]["faithfulness"] == 1.0
    assert store.annotator_labels(digest)["t01"]["faithfulness"] == {"aiko": 1.0, "ben": 1.0}
    change = save_label(store, digest, "t01", "faithfulness", None)  # unnamed: the team's word only
    assert change.kept_by == ("aiko", "ben") and change.removed_for == ()
    assert "t01" not in store.labels(digest)
    assert store.annotator_labels(digest)["t01"]["faithfulness"] == {"aiko": 1.0, "ben": 1.0}
    save_label(store, digest, "t03", "faithfulness", 1.0, annotator="aiko")
    save_label(store, digest, "t03", "faithfulness", 0.0, annotator="ben")
    save_label(store, digest, "t03", "faithfulness", None, annotator="aiko")
    assert store.labels(digest)["t03"]["faithfulness"] == 0.0  # ben's, the only one left


def test_the_trust_page_import_names_values_that_are_not_labels(monkeypatch, home, tmp_path) -> None:
    records = [{"id": "t01", "annotator": "aiko", "label_faithful": 1},
               {"id": "t02", "annotator": "aiko", "label_faithful": "maybe"},
               {"id": "t03", "annotator": "aiko", "label_faithful": 0},
               {"id": "zz", "annotator": "aiko", "label_faithful": 1}]
    payload = "".join(json.dumps(r) + "\n" for r in records).encode()
    for name, value in (("aiko", 1.0), ("ben", 0.0)):  # two people on one row: the annotators block shows
        save_label(Store(), home["hash"], "t04", "faithfulness", value, annotator=name)
    at = start_app(monkeypatch, home["home"], check=False, timeout=240)
    at.session_state["selected_run"] = home["run"]
    at.switch_page(TRUST).run()
    uploader = next(u for u in at.get("file_uploader") if u.proto.label.startswith("A labels file naming its annotators"))
    uploader.upload("labels.jsonl", payload, "application/json")
    at.run()
    errors = [plain(e.value) for e in at.error]
    assert any("row t02 (record 2): label_faithful = 'maybe' is not a label" in e for e in errors), errors
    assert "t01" not in Store().annotator_labels(home["hash"])
    next(c for c in at.checkbox if c.key == "annotators.skip_bad").check().run()
    warnings = [plain(w.value) for w in at.warning]
    assert any("row t02 (record 2)" in w for w in warnings), warnings
    assert any("1 labelled row id(s) are not rows of run" in w and "zz" in w for w in warnings), warnings
    stored = Store().annotator_labels(home["hash"])
    assert stored["t01"]["faithfulness"] == {"aiko": 1.0} and stored["t03"]["faithfulness"] == {"aiko": 0.0}
    assert "t02" not in stored
