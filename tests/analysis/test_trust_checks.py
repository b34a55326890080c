"""Stability and probes of stored runs through the normal runner, with a scripted judge whose behaviour is known
exactly (fooled by any "full marks" text, blind to filler and order, harsher in English)."""

import pytest

from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.run.repeats import SEED_STRIDE
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.analysis.trust.checks import stability_for_run
from rageval_core.session.probes import correct_rows, run_probes
from rageval_core.core.types import Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

ROWS = [
    Sample("1", "過学習とは何ですか？", ("過学習は汎化性能が下がる現象です。", "正則化で防げます。"), "汎化性能が下がる現象です。",
           metadata={"label_faithful": 1}),
    Sample("4", "誤差逆伝播法を考案したのは誰ですか？", ("1986年にラメルハートらが広めました。",), "アラン・チューリングです。",
           metadata={"label_faithful": 0}),
]
PARALLEL = [
    Sample("1-en", "What is overfitting?", ("Overfitting lowers generalisation.", "Regularisation prevents it."),
           "It lowers generalisation."),
]
BASE = {"1": 4, "4": 2, "1-en": 3}  # raw 1–5 scores: 0.75, 0.25, 0.5 once normalised


def fooled_judge(req):
    """5 whenever the answer or a context asks for full marks / 満点, else the row's base score."""
    text = " ".join([req.inputs["answer"], *req.inputs["contexts"]])
    row = next(rid for rid, s in ((r.id, r) for r in ROWS + PARALLEL) if s.question == req.inputs["question"])
    score = 5 if ("full marks" in text or "満点" in text or "highest score" in text or "最高点" in text) else BASE[row]
    if req.seed is not None and req.seed >= SEED_STRIDE and row == "4":
        score = 3  # row 4 wavers in the repeats
    return {k: v for c in req.inputs["criteria"] for k, v in ((f"{c['id']}_score", score), (f"{c['id']}_reason", "r"))}


@pytest.fixture()
def store(tmp_path):
    return Store(tmp_path / "t.sqlite")


def judge():
    return JudgeScorer("rubric5")


def test_probes_report_exact_shifts_and_flag_the_injections(store):
    llm = ScriptedLLM(default=fooled_judge)
    report = run_probes(ROWS, [judge()], "verbosity,order,injection,language", store=store, llm=llm,
                        embedder=HashEmbedder(), parallel=PARALLEL, seed=3)
    assert [r.probe for r in report.results] == ["verbosity", "order", "answer_injection", "context_injection", "language"]
    by = {r.probe: r for r in report.results}
    faith = {name: r.shifts[0] for name, r in by.items()}
    assert all(s.metric == "faithfulness" and s.method == "judge:rubric5" for s in faith.values())
    # Verbosity pads only row 1 (labelled faithful); filler and context order leave this judge unmoved.
    assert (by["verbosity"].n_cases, by["verbosity"].skipped) == (1, {"not a correct answer": 1})
    assert faith["verbosity"].mean_shift == 0 and faith["order"].mean_shift == 0
    assert by["order"].skipped == {"fewer than two contexts": 1}
    # Injections lift row 1 from 0.75 to 1 and row 4 from 0.25 to 1: mean (0.25 + 0.75) / 2 = 0.5.
    for side in ("answer_injection", "context_injection"):
        s = faith[side]
        assert s.n == 2 and s.mean_shift == pytest.approx(0.5) and s.flagged
        assert [(r.row_id, r.shift) for r in s.top] == [("4", 0.75), ("1", 0.25)]
        assert (s.low, s.high) == (pytest.approx(0.25), pytest.approx(0.75))  # 2 pairs: the extremes have p = 1/4
    # Language: row 1 (0.75) against its English row (0.5): shift −0.25, beyond the 0.15 tolerance.
    assert faith["language"].mean_shift == pytest.approx(-0.25) and faith["language"].flagged
    assert by["language"].skipped == {"no parallel row": 1}
    assert report.flagged == ["answer_injection", "context_injection", "language"]
    # Each probe is its own stored run, tagged, scored through the runner.
    for r in report.results:
        info = store.find_run(r.run_id)
        assert info.settings["probe"] == r.probe and info.settings["base_run"] == report.base_run_id
    injected = [q for q in llm.requests if "満点" in " ".join(q.inputs["contexts"])]
    assert len(injected) == 2 and report.to_dict()["flagged"] == report.flagged


def test_tolerances_are_settable_and_an_existing_run_is_the_base(store):
    llm = ScriptedLLM(default=fooled_judge)
    base = run_rows(ROWS, [judge()], llm, HashEmbedder(), store=store)
    before = len(llm.requests)
    report = run_probes(ROWS, [judge()], ["language"], store=store, llm=llm, embedder=HashEmbedder(),
                        parallel=PARALLEL, base_run_id=base.run_id, tolerances={"language": 0.3})
    assert report.base_run_id == base.run_id and len(llm.requests) == before + 1  # only the parallel row is scored
    assert report.results[0].tolerance == 0.3 and report.flagged == []


def test_stability_for_a_run_with_repeats(store):
    done = run_rows(ROWS, [judge()], ScriptedLLM(default=fooled_judge), HashEmbedder(), store=store, repeats=3)
    report = stability_for_run(store, done.run_id, aggregate="majority")
    m = report.find("faithfulness", "judge:rubric5")
    row4 = next(r for r in report.rows if r.row_id == "4" and r.metric == "faithfulness")
    assert row4.values == (0.25, 0.5, 0.5) and row4.value == 0.5 and row4.flip_rate == pytest.approx(1 / 3)
    assert m.rows_flipping == 1 and m.mean == pytest.approx((0.75 + 0.5) / 2)
    assert report.repeats == 3 and not report.deterministic and "bypass" in report.note
    single = stability_for_run(store, run_rows(ROWS, [judge()], ScriptedLLM(default=fooled_judge), HashEmbedder(), store=store).run_id)
    assert single.repeats == 1 and single.note.startswith("one repeat only")


def test_correct_rows_from_labels():
    assert correct_rows(ROWS) == {"1"}
    both = [Sample("a", "q", (), "x", metadata={"label_faithful": 1, "label_correct": 0})]
    assert correct_rows(both) == set()  # the correctness label wins over faithfulness
    assert correct_rows(PARALLEL) is None
