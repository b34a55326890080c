"""The must-show pipeline: offline judge + a scripted second model in one run, a jury, and the HTML report;
judge-vs-judge agreement and the jury match values computed by hand."""

from __future__ import annotations

import re

import pytest

from rageval_core.data.datasets import load_dataset
from rageval_core.scoring.judges.bound import judge_scorers
from rageval_core.scoring.judges.config import JudgeConfig
from rageval_core.scoring.judges.jury_run import add_jury
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.views.report import report_html, write_report
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM


def two_judge_run(store: Store):
    """The 12 seed rows: decomposed metrics, the offline rubric5 judge, and a scripted 'second model' that
    gives every criterion the mirror of the offline judge's 1-5 score (6 - s), so its normalised value is
    exactly 1 - the offline value on every row."""
    from rageval_core.offline.provider import OfflineLLM

    ds = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
    offline_raw: dict[str, dict[str, float]] = {}
    judge = JudgeScorer("rubric5")
    for s in ds.samples:
        results = judge.score(s, EvalContext(llm=OfflineLLM(), embedder=HashEmbedder()))
        offline_raw[s.question] = {r.metric: r.raw_score for r in results}

    def mirror(request):
        raw = offline_raw[request.inputs["question"]]
        out = {}
        for c in request.inputs["criteria"]:
            out[f"{c['id']}_score"] = 6 - int(raw[c["id"]])
            out[f"{c['id']}_reason"] = f"鏡像の理由 {c['id']}"
        return out

    judges = [JudgeConfig("heuristic", provider="offline"),
              JudgeConfig("mirror", provider="openai-compatible", model="mirror-1")]
    scorers = [*build_scorers(["faithfulness", "answer_correctness"]),
               *judge_scorers(judges, ProviderConfig(), llms={"mirror": ScriptedLLM(default=mirror)})]
    result = run_rows(ds.samples, scorers, config=ProviderConfig(), store=store, dataset_name=ds.name,
                 dataset_digest=ds.content_hash, settings={"data": str(ROOT / "sample_data" / "ml_qa_ja.json")})
    add_jury(store, result.run_id, "mean")
    return ds, result


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("report") / "db.sqlite")
    ds, result = two_judge_run(store)
    return store, ds, result


def _values(store, run_id, judge):
    return {(r.sample_id, r.metric): r.value for r in store.results(run_id) if r.details.get("judge") == judge}


def test_two_judges_and_the_jury_match_hand_computed_values(built):
    from rageval_core.analysis.compare import results_frame
    from rageval_core.analysis.judge_agreement import pairwise

    store, ds, result = built
    heur, mirror = _values(store, result.run_id, "heuristic"), _values(store, result.run_id, "mirror")
    assert heur.keys() == mirror.keys() and len(heur) == 12 * 4
    assert all(mirror[k] == pytest.approx(1 - heur[k]) for k in heur)
    jury = {(r.sample_id, r.metric): r.value for r in store.results(result.run_id) if r.method == "jury:mean"}
    assert all(v == pytest.approx(0.5) for v in jury.values())  # (v + (1 - v)) / 2 on every row
    pairs = pairwise(results_frame(store.results(result.run_id)), ["judge:rubric5@heuristic", "judge:rubric5@mirror"],
                     iterations=200).set_index("criterion")
    faith = [heur[(s.id, "faithfulness")] for s in ds.samples]
    assert len(set(faith)) > 1
    assert pairs.loc["faithfulness", "spearman"] == pytest.approx(-1.0)  # a mirrored ranking
    # Kappa at 0.5 by hand: heuristic passes v >= 0.5, the mirror 1 - v >= 0.5; they agree only where v == 0.5.
    n = len(faith)
    a = [v >= 0.5 for v in faith]
    b = [1 - v >= 0.5 for v in faith]
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    assert pairs.loc["faithfulness", "kappa"] == pytest.approx((po - pe) / (1 - pe))


def test_report_is_self_contained_with_every_section(built, tmp_path):
    store, ds, result = built
    path = write_report(store, [result.run_id], tmp_path / "report.html", iterations=200, sample_ids=["1", "4"])
    html = path.read_text(encoding="utf-8")
    assert "<script" not in html and not re.search(r"(src|href)=\"https?:", html) and "@import" not in html
    for section in ("Dataset", "Per category (the source article", "Decomposed vs single-prompt judge", "Judge vs judge",
                    "Agreement with human labels", "Cost", "Chosen rows (2)"):
        assert section in html, section
    assert "✅ 正確な回答" in html and "Hiragino Sans" in html and "Noto Sans CJK JP" in html
    assert html.count('<rect class="bar"') > 20 and "<svg" in html
    assert "-1.000 [" in html  # Spearman heuristic vs mirror with its interval
    assert '<mark class="ok"' in html and '<mark class="bad"' in html  # row 1 supported, row 4 (hallucination) not
    assert "鏡像の理由" in html  # the second judge's reasons
    assert "jury:mean" in html and "judge:rubric5@mirror" in html


def test_report_rows_are_the_user_choice_or_the_most_disagreeing(built):
    from rageval_core.analysis.compare import results_frame
    from rageval_core.analysis.report.build import choose_rows

    store, _ds, result = built
    frame = results_frame(store.results(result.run_id))
    ranked = choose_rows(frame, None, 3)
    spreads = frame.dropna(subset=["value"]).groupby(["sample_id", "metric"])["value"].agg(lambda v: v.max() - v.min())
    assert [s for _, s in ranked] == sorted(spreads.groupby(level=0).max(), reverse=True)[:3]
    html = report_html(store, [result.run_id], sample_ids=["4"], iterations=50)
    assert "Chosen rows (1)" in html and "<h3>#4 " in html


def test_report_rows_rank_by_spread_with_ties_in_dataset_order() -> None:
    """Hand-computed: spreads b 0.5, a 0.5, c 0.9, d 0 (one method only); dataset order b, a, c, d."""
    from rageval_core.analysis.compare import results_frame
    from rageval_core.analysis.report.build import choose_rows
    from rageval_core.core.types import MetricResult

    def r(sid: str, method: str, value: float | None) -> MetricResult:
        return MetricResult(sid, "faithfulness", method, value, unscored_reason=None if value is not None else "error")

    frame = results_frame([r("b", "decomposed", 1.0), r("b", "judge:x", 0.5), r("a", "decomposed", 0.25),
                           r("a", "judge:x", 0.75), r("c", "decomposed", 0.05), r("c", "judge:x", 0.95),
                           r("d", "decomposed", 0.5), r("d", "judge:x", None)])
    assert choose_rows(frame, None, 4) == [("c", pytest.approx(0.9)), ("b", 0.5), ("a", 0.5), ("d", 0.0)]
    assert [sid for sid, _ in choose_rows(frame, None, 2)] == ["c", "b"]
    assert choose_rows(frame, ["a", "zz"], 1) == [("a", 0.5), ("zz", 0.0)]  # the user's choice, as given
    assert choose_rows(frame.iloc[:0], None, 3) == []


def test_cli_report_writes_the_file_and_says_its_size(built, tmp_path, capsys, monkeypatch):
    from rageval_core import cli

    store, _ds, result = built
    assert cli.main(["--db", store.path, "report", result.run_id, "--out", str(tmp_path / "r.html"), "--top", "2"]) == 0
    assert re.search(r"→ .*r\.html \([\d,]+ bytes\)", capsys.readouterr().out)
    written = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "選んだ行（2 行）" in written and '<html lang="ja">' in written  # --lang auto: the data's language (ja)
    assert cli.main(["--db", store.path, "report", result.run_id, "--out", str(tmp_path / "e.html"), "--top", "2",
                     "--lang", "en"]) == 0
    assert "Chosen rows (2)" in (tmp_path / "e.html").read_text(encoding="utf-8")
    assert cli.main(["--db", store.path, "report", result.run_id, "--out", str(tmp_path / "r.txt")]) == 2
    assert cli.main(["--db", store.path, "report", "nope", "--out", str(tmp_path / "r.html")]) == 2


def test_report_sets_another_tools_scores_beside_ours_escaped(tmp_path, monkeypatch) -> None:
    """A ragas results CSV's scores (and a hostile column name) in the report's "Their scores vs ours" section."""
    import dataclasses

    from rageval_core.analysis.report.build import build_run

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    ds = load_dataset(ROOT / "tests" / "data" / "external" / "ragas_results.csv")
    rows = [dataclasses.replace(s, external_scores={**s.external_scores, "ragas:<img src=x>": 0.5}) for s in ds.samples]
    run = run_rows(rows, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name,
                   dataset_digest=ds.content_hash)
    rep = build_run(Store(), run.run_id, iterations=10)
    assert rep.theirs is not None and [c.column for c in rep.theirs.matched] == ["faithfulness"]
    html = report_html(Store(), [run.run_id])
    section = html[html.index("<h3>Their scores vs ours</h3>"):html.index("<h3>Judge vs judge</h3>")]
    assert "compared: ragas <code>faithfulness</code> → Faithfulness (8 of 9 rows scored by ragas)" in section
    assert "not compared: ragas <code>answer_relevancy</code> (this run did not compute Answer Relevancy)" in section
    assert "<code>&lt;img src=x&gt;</code> (no metric of ours measures it)" in section and "<img src" not in section
    line = rep.theirs.agreement.iloc[0]
    assert f"<td class=\"num\">{line['mad']:.3f}</td><td class=\"num\">{line['mean_diff']:.3f}</td>" in section
    first = rep.theirs.rows(rep.theirs.matched[0], "decomposed").iloc[0]
    assert f"<td>{first['sample_id']}</td><td class=\"num\">1.000</td>" in section
