"""AppTest: the Trust page on an offline run of the shipped labelled set (sample_data/trust_labelled.jsonl),
and Inspect's "next row to label"."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from tests.support.runs import run_rows
from tests.support.apptest import ROOT, assert_ok, plain, start_app

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"
pytestmark = pytest.mark.timeout(600)  # the module's offline runs and probes; a deadline, not a timing assertion


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One offline run of every labelled row: decomposed faithfulness and the binary judge (faithfulness,
    answer correctness), the cheapest set that still has two methods on one criterion."""
    root = tmp_path_factory.mktemp("ui-trust")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(LABELLED)
        scorers = [*build_scorers(["faithfulness"]), JudgeScorer("binary")]
        result = run_rows(ds.samples, scorers, config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash)
        # A small run with two repeats: a faithful row, its wrong-number twin (contexts reversed) and their -en rows.
        few = [s for s in ds.samples if s.id in ("t02", "t03", "t02-en", "t03-en")]
        repeated = run_rows(few, scorers, config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash, repeats=2)
        yield {"home": str(root), "run": result.run_id, "repeated": repeated.run_id}


def _trust(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], run_id: str | None = None) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False, timeout=240)  # bootstrap intervals on a loaded machine
    at.session_state["selected_run"] = run_id or home["run"]
    at.switch_page("rageval_ui/app_pages/trust.py").run()
    assert_ok(at)
    return at


def _frame(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_trust_page_shows_every_panel_on_the_labelled_set(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    at = _trust(monkeypatch, home)
    assert at.subheader[0].value == "The answer"  # the one-screen answer first, every section below it folded
    sections = {e.label: e for e in at.expander}
    for expected in ("Labels coverage", "Agreement with people", "Confusion matrices", "Corrected estimate",
                     "Repeat stability", "Probes", "Label next", "Label split: train · dev · test"):
        assert expected in sections and not sections[expected].proto.expanded
    coverage = _frame(at, "labelled")
    faith = coverage[coverage["criterion"] == "Faithfulness"].iloc[0]
    assert faith["labelled"] == "48 / 48" and faith["pass"] == 22 and faith["sources"] == "dataset 48"
    agreement = _frame(at, "AUROC")
    assert {"decomposed", "judge:binary"} <= set(agreement["method"])
    row = agreement[(agreement["criterion"] == "Faithfulness") & (agreement["method"] == "decomposed")].iloc[0]
    assert row["n"] == 48 and row["AUROC"].count("[") == 1  # a value with its interval
    estimates = _frame(at, "corrected")
    assert "n=48" in estimates.iloc[0]["labels only"]
    # Every row is labelled: nothing to label next, and the page says how to try it. One repeat, no probes
    # yet: each panel says how to get its figures.
    infos = " ".join(i.value for i in at.info)
    assert "Use the label columns of only some rows" in infos
    assert "--repeats 3" in infos and "--probes all" in infos
    assert any(b.label == "Set 3 repeats on Evaluate" for b in at.button)
    assert any(b.label == "Run probes" for b in at.button)
    assert len(at.get("vega_lite_chart")) == 1
    from rageval_core.offline.limits import limits_text  # offline run: the sealed suite's frozen figures

    assert any(plain(c.value) == limits_text("en") and "sealed suite" in c.value for c in at.caption)


def _answer(at: AppTest) -> dict[str, list[str]]:
    """The one-screen answer as shown: per "criterion · method", its verdict word and its four sentences (each
    sentence a ``:small[…]`` markdown after the line's name and verdict)."""
    out: dict[str, list[str]] = {}
    texts = [plain(m.value) for m in at.main.markdown]
    for i, text in enumerate(texts):
        sentences = texts[i + 1:i + 5]
        if " · " in text and len(sentences) == 4 and all(x.startswith(":small[") for x in sentences):
            name, _, verdict = text.replace("**", "").partition("\n")
            out[name.strip()] = [verdict, *(x.removeprefix(":small[").removesuffix("]") for x in sentences)]
    return out


def test_the_answer_opens_the_page_with_the_reports_figures(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    """The answer's figures are the agreement and estimate tables' own (every row labelled, then 16 of 48)."""
    at = _trust(monkeypatch, home)
    answer = _answer(at)
    agreement = _frame(at, "AUROC")
    assert set(answer) == {f"{r['criterion']} · {r['method']}" for _, r in agreement.iterrows()}
    for _, row in agreement.iterrows():
        verdict, ranks, pass_fail, share, settle = answer[f"{row['criterion']} · {row['method']}"]
        assert f"AUROC {row['AUROC']}" in ranks and f"balanced accuracy {row['balanced accuracy']}" in pass_fail
        assert "every row labelled" in share  # 48 of 48: people's own share, not a correction of it
    faith = answer["Faithfulness · decomposed"]
    # The offline judge's faithfulness on the labelled set: AUROC 0.914 [0.829, 0.975], balanced accuracy 0.825
    # [0.708, 0.922] at the shipped per-language thresholds, 22 of 48 passed by people.
    assert "usable as is" in faith[0] and faith[1] == "Yes: AUROC 0.914 [0.829, 0.975]."
    assert faith[2].startswith("Yes: balanced accuracy 0.825 [0.708, 0.922] at 0.780 (en) / 0.720 (ja)")
    assert faith[3].startswith("46% [33%, 60%] by people's labels, every row labelled")
    assert faith[4] == "Settled by these 48 labels; more only narrow the intervals."
    next(x for x in at.toggle if x.key != "runs.show_side").set_value(True).run()  # 16 rows keep their labels
    assert_ok(at)
    estimates = _frame(at, "Rogan–Gladen")
    answer = _answer(at)
    for _, row in estimates.iterrows():
        share = answer[f"{row['criterion']} · {row['method']}"][3]
        table_figures = [float(x) for x in re.findall(r"\d\.\d+", row["Rogan–Gladen"])]
        shown = re.search(r"^(\d+)% \[(\d+)%, (\d+)%\], corrected for the verdict's errors", share)
        assert shown is not None and len(table_figures) == 3, share
        # the table's three decimals, in whole percent (each side rounded once from the same figure)
        assert all(abs(int(p) / 100 - f) <= 0.0051 for p, f in zip(shown.groups(), table_figures))
    assert any("not yet known: label " in v[0] for v in answer.values()), answer


def test_stability_and_probes_of_a_run_with_repeats(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    from rageval_core.store import trust_reports as trust_report
    from rageval_core.store.runs import Store

    at = _trust(monkeypatch, home, home["repeated"])
    stability = _frame(at, "flip rate")
    assert set(stability["method"]) == {"decomposed", "judge:binary"} and (stability["rows"] == 4).all()
    assert any("deterministic" in c.value for c in at.caption)  # offline: repeats are identical, and it says so
    next(b for b in at.button if b.label == "Run probes").click().run()
    job = at.session_state["trust.probe_job"]
    assert job.wait(300), "the probes did not finish"
    assert job.error is None, job.error
    at.run()
    assert_ok(at)
    probes = _frame(at, "mean shift [95% CI]")
    assert {"verbosity", "order", "answer_injection", "context_injection", "language"} <= set(probes["probe"])
    order = probes[(probes["probe"] == "order") & (probes["method"] == "decomposed")].iloc[0]
    assert order["pairs"] == 4 and order["flag"] in ("ok", "⚠️ flagged")
    # Saved beside the run, so its export carries the probes.
    monkeypatch.setenv("RAGEVAL_HOME", home["home"])
    saved = trust_report.saved_report(Store(), home["repeated"])
    assert saved is not None and saved["sections"]["probes"]["base_run_id"] == home["repeated"]


def test_fewer_labels_fill_label_next_and_confusion_cells_open_inspect(monkeypatch: pytest.MonkeyPatch,
                                                                       home: dict[str, str]) -> None:
    at = _trust(monkeypatch, home)
    next(x for x in at.toggle if x.key != "runs.show_side").set_value(True).run()  # "only k rows labelled"
    assert_ok(at)
    coverage = _frame(at, "labelled")
    assert coverage[coverage["criterion"] == "Faithfulness"].iloc[0]["labelled"] == "16 / 48"
    estimates = _frame(at, "corrected")
    assert all("n=16" in cell for cell in estimates["labels only"])
    assert estimates["as tight as k labels"].iloc[0] != "-"
    ranking = _frame(at, "priority")
    assert len(ranking) == 10 and ranking["priority"].is_monotonic_decreasing
    top = ranking.iloc[0]["row"]
    assert plain(next(b for b in at.button if b.key == "trust.label_top").label).startswith(f"Label row #{top} in Inspect")
    # A confusion cell lists its rows; each opens Inspect on that row.
    cell = next(b for b in at.button if b.label.startswith("Inspect #"))
    row_id = cell.label.removeprefix("Inspect #")
    cell.click().run()
    assert_ok(at)
    assert at.session_state["inspect_sample"] == row_id
    assert any(s.value == "Human labels" for s in at.subheader)
    # Inspect's "next row to label" opens the top row of the same ranking (AppTest reruns the page it
    # switched to itself, so switch to Inspect explicitly after the click).
    at.session_state["inspect_sample"] = top
    at.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    next(b for b in at.button if b.label == "Next row to label").click().run()
    assert_ok(at)
    second = ranking.iloc[1]["row"] if ranking.iloc[1]["row"] != top else ranking.iloc[2]["row"]
    assert at.session_state["inspect_sample"] == second
    assert any("Suggested for labelling" in i.value for i in at.info)
