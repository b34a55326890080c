"""AppTest: two annotators on the Trust page (people's kappa with its interval beside each judge's, the sentence,
the disagreements to settle, the queue and its progress) and Inspect asking the annotator's name once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.analysis.trust.labels import FILE, dataset_labels
from rageval_core.analysis.trust.run_report import read_label_rows
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from tests.support.runs import run_rows
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store import annotations
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT, assert_ok, plain, start_app

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"
TWO = ROOT / "sample_data" / "trust_two_annotators.jsonl"
pytestmark = pytest.mark.timeout(600)  # an offline run and bootstrap intervals on a loaded machine: a deadline, not a timing


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An offline run of the 24 Japanese labelled rows (decomposed faithfulness, the binary judge), with the two
    annotators' labels imported into the store as a labels file would be on the Trust page."""
    root = tmp_path_factory.mktemp("ui-annotators")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(LABELLED)
        rows = [s for s in ds.samples if not s.id.endswith("-en")]
        result = run_rows(rows, [*build_scorers(["faithfulness"]), JudgeScorer("binary")], config=ProviderConfig(),
                     dataset_name=ds.name, dataset_digest=ds.content_hash)
        named = [(lab.row_id, lab.criterion, lab.annotator, lab.value) for lab in dataset_labels(read_label_rows(TWO), source=FILE)]
        annotations.import_labels(Store(), ds.content_hash, named)
        yield {"home": str(root), "run": result.run_id, "hash": ds.content_hash}


def _page(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], page: str) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False, timeout=240)
    at.session_state["selected_run"] = home["run"]
    at.switch_page(page).run()
    assert_ok(at)
    return at


def test_trust_page_shows_people_beside_the_judges(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = _page(monkeypatch, home, "rageval_ui/app_pages/trust.py")
    assert "People against each other, beside the judges" in [e.label for e in at.expander]
    table = next(d.value for d in at.dataframe if "judge is" in d.value.columns)
    people = table[table["who"] == "people (kappa)"].set_index("criterion")
    assert people.loc["Faithfulness", "agreement"].startswith("0.750 [") and people.loc["Faithfulness", "rows"] == 24
    judges = set(table["who"]) - {"people (kappa)"}
    assert {"decomposed", "judge:binary"} <= judges
    sentences = [plain(m.value) for m in at.markdown if "the people's range" in plain(m.value) or "too few rows" in plain(m.value)]
    assert any(s.startswith("- faithfulness, judge:binary: ") for s in sentences)
    settle = next(d.value for d in at.dataframe if list(d.value.columns) == ["row", "criterion", "labels"])
    assert set(settle["row"]) == {"t05", "t12", "t13", "t17", "t23"}


def test_settling_and_the_queue(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = _page(monkeypatch, home, "rageval_ui/app_pages/trust.py")
    at.selectbox(key="annotators.settle").set_value("t12|faithfulness").run()
    next(b for b in at.button if b.label == "Settle as 👎").click().run()
    assert_ok(at)
    settle = next(d.value for d in at.dataframe if list(d.value.columns) == ["row", "criterion", "labels"])
    assert "t12" not in set(settle["row"])
    at.text_input(key="annotators.queue_people").set_value("aiko, ben, chika").run()
    at.selectbox(key="annotators.mode").set_value("random").run()
    at.number_input(key="annotators.n").set_value(6).run()
    next(b for b in at.button if b.label == "Hand out").click().run()
    assert_ok(at)
    progress = next(d.value for d in at.dataframe if "next row" in d.value.columns).set_index("annotator")
    assert list(progress.index) == ["aiko", "ben", "chika"]
    assert sum(int(v.split(" / ")[1]) for v in progress["done"]) == 12  # 6 rows, two people each


def test_inspect_asks_the_name_once_and_keeps_labels_as_theirs(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = _page(monkeypatch, home, "rageval_ui/app_pages/inspect_sample.py")
    at.text_input(key="annotator.name_input").set_value("chika").run()
    assert_ok(at)
    assert any("Labelling as **chika**" in plain(c.value) for c in at.caption)
    assert not [w for w in at.text_input if w.key == "annotator.name_input"]  # asked once: now a caption
    at.switch_page("rageval_ui/app_pages/trust.py").run()
    at.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    assert any("Labelling as **chika**" in plain(c.value) for c in at.caption)  # kept across pages
