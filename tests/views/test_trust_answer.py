"""The Trust page's one-screen answer (``rageval_core.views.trust_answer``) from a small labelled run whose figures are
worked out by hand below, and the verdict rules on hand-written report entries; its words in both languages."""

from __future__ import annotations

import json
import math

import pytest

from rageval_core.analysis.trust.labels import dataset_labels, merge_labels
from rageval_core.analysis.trust.report import build_report
from rageval_core.core.types import MetricResult
from rageval_core.views import trust_answer as ta
from rageval_core.views.trust_answer_text import html, texts

# Ten labelled rows (4 pass, 6 fail) and four unlabelled ones, one method.
SCORES = {"r1": 0.9, "r2": 0.8, "r3": 0.7, "r4": 0.6, "r5": 0.55, "r6": 0.4, "r7": 0.3, "r8": 0.2, "r9": 0.65,
          "r10": 0.1, "r11": 0.95, "r12": 0.45, "r13": 0.52, "r14": 0.05}
LABELS = {"r1": 1, "r2": 1, "r3": 1, "r4": 0, "r5": 1, "r6": 0, "r7": 0, "r8": 0, "r9": 0, "r10": 0}


@pytest.fixture(scope="module")
def report() -> dict:
    results = [MetricResult(r, "faithfulness", "decomposed", v, None) for r, v in SCORES.items()]
    rows = [(r, {"label_faithful": y}) for r, y in LABELS.items()]
    rep = build_report(results, merge_labels(dataset_labels(rows), rows=rows), run_id="small", iterations=200, seed=0)
    return json.loads(json.dumps(rep.to_dict()))  # the JSON form, as saved beside a run


def test_the_answer_of_a_small_labelled_run_matches_the_hand_computed_figures(report: dict) -> None:
    answer = ta.trust_answer(report)
    assert answer.run_id == "small" and answer.n_rows == 14 and len(answer.lines) == 1
    line = answer.lines[0]
    assert (line.metric, line.method, line.n_labelled, line.n_positive, line.rows, line.unlabelled) == (
        "faithfulness", "decomposed", 10, 4, 14, 4)
    # AUROC: of the 4 × 6 (pass, fail) pairs, the passes .9, .8 and .7 beat all six fails; .55 beats .4, .3, .2, .1.
    assert line.ranking.value == pytest.approx(22 / 24)
    # At 0.5 the verdict passes r1-r5 and r9: sensitivity 4/4, specificity 4/6 (r6, r7, r8, r10 fail).
    assert line.pass_fail.value == pytest.approx((1 + 4 / 6) / 2)
    # Ten labels are few: both intervals reach below 0.7 (Newcombe; the mean of two Wilson intervals).
    assert line.ranking.low < ta.BAR < line.ranking.high and line.ranking_state == ta.OPEN
    assert line.pass_fail.low < ta.BAR <= line.pass_fail.high and line.pass_fail_state == ta.OPEN
    assert (line.verdict, line.deciding) == (ta.NOT_YET, "ranking")
    # more labels: n · ((value − low) / (value − bar))² − n for the ranking figure, rounded up.
    a = report["agreement"][0]["auroc"]
    assert line.ranking.low == pytest.approx(a["low"])
    expected = math.ceil(10 * ((22 / 24 - a["low"]) / (22 / 24 - 0.7)) ** 2) - 10
    assert line.more_labels == expected and expected > 4  # more than the 4 unlabelled rows left
    # Rogan–Gladen: the verdict passes 8 of 14 rows (r1-r5, r9, r11, r13): (8/14 + 4/6 − 1) / (1 + 4/6 − 1) = 15/42.
    assert line.share_kind == ta.SHARE_CORRECTED and line.apparent == pytest.approx(8 / 14)
    assert line.share.value == pytest.approx(15 / 42) and line.share.low <= 15 / 42 <= line.share.high
    assert line.labels_share.value == pytest.approx(0.4)
    # Label next, nearest the threshold first: r13 (.52), r12 (.45), then r11 (.95) before r14 (.05) by input order.
    assert line.next_rows == ["r13", "r12", "r11"]


def test_the_answer_in_words_carries_the_figures(report: dict) -> None:
    line = ta.trust_answer(report).lines[0]
    en, ja = texts(line, "en"), texts(line, "ja")
    n = line.more_labels
    assert en.verdict == f"not yet known: label {n} more rows" and ja.verdict == f"まだ分からない：あと {n} 行ラベル付け"
    assert f"AUROC {22 / 24:.3f} [{line.ranking.low:.3f}, {line.ranking.high:.3f}]" in en.ranks
    assert en.pass_fail.startswith("Not clear yet: balanced accuracy 0.833 [") and en.pass_fail.endswith("at 0.5 (default).")
    assert en.share.startswith("36% [") and "corrected for the verdict's errors (the score passes 57%)" in en.share
    assert en.settle == f"Label {n} more rows: more than the 4 unlabelled rows here, so evaluate more rows too (next: #r13, #r12, #r11)."
    assert "AUROC 0.917 [" in ja.ranks and "しきい値 0.5（既定）でのバランス精度 0.833 [" in ja.pass_fail
    assert "未ラベルの 4 行" in ja.settle
    page = html(ta.trust_answer(report), "ja", metric_label=lambda m: "忠実性")
    assert "このスコアは信頼できるか" in page and "忠実性 · decomposed" in page and ja.verdict in page


def _entry(auroc: tuple, bacc: tuple, *, n: int = 40, source: str = "default") -> dict:
    stat = lambda v: {"value": v[0], "low": v[1], "high": v[2]}  # noqa: E731
    return {"metric": "faithfulness", "method": "judge:x", "n_labelled": n, "n_positive": n // 2, "threshold": 0.5,
            "threshold_source": source, "auroc": stat(auroc), "balanced_accuracy": stat(bacc),
            "best_threshold": stat((0.62, 0.5, 0.7))}


@pytest.mark.parametrize(("auroc", "bacc", "source", "verdict", "word"), [
    ((0.9, 0.8, 0.97), (0.85, 0.75, 0.93), "default", ta.USABLE, "usable as is"),
    ((0.9, 0.8, 0.97), (0.6, 0.5, 0.68), "default", ta.CALIBRATE, "ranks well, threshold needs calibration"),
    ((0.55, 0.4, 0.68), (0.55, 0.45, 0.65), "default", ta.NOT_USABLE, "does not rank answers as people do"),
    ((0.8, 0.65, 0.92), (0.7, 0.6, 0.8), "default", ta.NOT_YET, "not yet known: label 50 more rows"),
    ((0.9, 0.8, 0.97), (0.76, 0.68, 0.84), "default", ta.NOT_YET, "not yet known: label 32 more rows"),
])
def test_the_verdict_follows_the_intervals(auroc: tuple, bacc: tuple, source: str, verdict: str, word: str) -> None:
    line = ta.answer_line(_entry(auroc, bacc, source=source), None, {"rows": 100, "labelled": 40})
    # Not yet: ranking open, so ranking decides: 40 · (0.15 / 0.1)² − 40 = 50; ranking good, pass / fail open, so
    # pass / fail decides: 40 · (0.08 / 0.06)² = 71.1 -> 72, 32 more.
    assert line.verdict == verdict and texts(line, "en").verdict == word


def test_more_labels_by_hand() -> None:
    # above the bar: 40 · (0.15 / 0.1)² = 90 labels in all, 50 more
    assert ta.more_labels(ta.Figure(0.8, 0.65, 0.92), 40) == 50
    # below it: the upper side faces the bar: 20 · (0.12 / 0.1)² = 28.8 -> 29, 9 more
    assert ta.more_labels(ta.Figure(0.6, 0.5, 0.72), 20) == 9
    assert ta.more_labels(ta.Figure(0.7, 0.6, 0.8), 40) is None  # on the bar: labels alone cannot say
    assert ta.more_labels(ta.Figure(None), 40) is None and ta.more_labels(ta.Figure(0.8, 0.7, 0.9), 0) is None
    assert ta.more_labels(ta.Figure(0.9, 0.71, 0.95), 40) == 1  # already clear: at least one


def test_states_and_shares_of_edge_entries() -> None:
    assert ta.Figure(0.7, 0.7, 0.9).state() == ta.GOOD and ta.Figure(0.69, 0.5, 0.69).state() == ta.WEAK
    assert ta.Figure(None).state() == ta.UNKNOWN and ta.Figure(0.8).state() == ta.GOOD  # no interval: the value
    one_class = {**_entry((None, None, None), (1.0, 0.8, 1.0)), "n_positive": 40}
    line = ta.answer_line(one_class, None, None)
    assert (line.verdict, line.ranking_state) == (ta.USABLE, ta.UNKNOWN)  # pass / fail clears the bar on its own
    text = texts(ta.answer_line({**one_class, "balanced_accuracy": {"value": None}}, None, None), "en")
    assert text.ranks == "Unknown: people passed all 40 labelled rows, so there is nothing to rank."
    assert text.verdict == "not yet known: label more rows"
    undefined = {"n_labelled": 10, "n_judged": 20, "labels_only": {"value": 0.5, "low": 0.2, "high": 0.8},
                 "rogan_gladen": {"value": None, "apparent": 0.6, "note": "undefined"}}
    line = ta.answer_line(_entry((0.6, 0.4, 0.8), (0.6, 0.4, 0.8)), undefined, {"rows": 20, "labelled": 10})
    assert line.share_kind == ta.SHARE_UNDEFINED and "People pass 50% [20%, 80%]" in texts(line, "en").share
    assert ta.trust_answer({"agreement": [], "n_rows": 3}).lines == []
    assert "no scored row has a human label" in html(ta.trust_answer({}), "en")
