"""``trust RUN_A --against RUN_B``: the comparison block (judge-only, labels-only, corrected, each with
value / low / high), paired by row id, each run with its own labels."""

import json

import pytest

from rageval_core import cli
from rageval_core.analysis.trust.compare_run import compare_runs
from rageval_core.store.runs import Store
from tests.support.trust_cli import MINI, run_id_of as _run_id



def test_against_writes_the_comparison_block(home, capsys):
    rows = [json.loads(line) for line in MINI.read_text(encoding="utf-8").splitlines() if line.strip()]
    longer = home / "longer.jsonl"  # version B: every answer followed by its first context (longer, same labels)
    with longer.open("w", encoding="utf-8") as f:
        for i, row in enumerate(rows):
            b = dict(row, answer=row["answer"] + row["contexts"][0])
            if i < 3:
                b["label_faithful"] = 1 - int(row["label_faithful"])
            f.write(json.dumps(b, ensure_ascii=False) + "\n")
    args = ["--metrics", "faithfulness", "--iterations", "20", "--quiet"]
    assert cli.main(["trust", str(longer), *args]) == 0
    run_b = _run_id(capsys.readouterr().out)
    # a prefix of B's id (the whole date-time part would name A too when both start in the same second)
    assert cli.main(["trust", str(MINI), *args, "--against", run_b[:-1], "--out", "f.json"]) == 0
    out = capsys.readouterr().out
    run_a = _run_id(out)
    assert f"run B {run_b} − run A {run_a}, paired by row (positive: B scores higher" in out
    block = json.loads((home / "f.json").read_text(encoding="utf-8"))["comparison"]
    assert (block["run_a"], block["run_b"], block["metric"], block["method"]) == (run_a, run_b, "faithfulness", "decomposed")
    assert block["difference"] == "B - A"
    for kind in ("judge_only", "labels_only", "corrected"):
        assert {"value", "low", "high"} <= set(block[kind]) and block[kind]["low"] <= block[kind]["value"] <= block[kind]["high"]
    assert block["n_shared"] == block["n_labelled"] == 16
    # rows 1-3 flipped in B: labels-only = (#B pass A fail - #B fail A pass) / 16
    flipped = [int(r["label_faithful"]) for r in rows[:3]]
    assert block["labels_only"]["value"] == pytest.approx(((3 - sum(flipped)) - sum(flipped)) / 16)
    # every row labelled in both: the corrected difference is the labels' own, and the note says so
    assert block["corrected"]["value"] == pytest.approx(block["labels_only"]["value"])
    assert any("every row is labelled" in n for n in block["by_method"][0]["notes"])
    again = compare_runs(Store(), run_a, run_b).to_dict()
    assert again["judge_only"] == block["judge_only"] and again["by_method"] == block["by_method"]


def test_an_unknown_run_b_is_bad_input_before_any_evaluation(home, capsys):
    assert cli.main(["trust", str(MINI), "--against", "no-such-run", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "no-such-run" in captured.err and "evaluated" not in captured.err


class _Renamed:
    """The offline judge answering as another provider and model: a run B judged by someone else."""

    def __init__(self, inner, provider: str, model: str) -> None:
        self.inner, self.provider, self.model = inner, provider, model

    def complete(self, request):
        from rageval_core.llm.base import Completion

        done = self.inner.complete(request)
        return Completion(texts=done.texts, provider=self.provider, model=self.model, usage=done.usage,
                          latency_s=done.latency_s, cached=done.cached, cost_usd=done.cost_usd)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _stored(rows, scorers, llm=None, name="mini"):
    from rageval_core.providers.config import ProviderConfig
    from tests.support.runs import run_rows

    return run_rows(rows, scorers, llm, config=None if llm is not None else ProviderConfig(),
                    dataset_name=name, dataset_digest=f"hash-{name}").run_id


def test_against_compares_every_shared_metric_and_method_naming_each_judge(home, capsys):
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.providers.registry import build_llm
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers

    rows = load_dataset(MINI).samples[:8]
    a = _stored(rows, [*build_scorers(["faithfulness"]), JudgeScorer("rubric5")], name="a")
    other = _Renamed(build_llm(ProviderConfig()), "openai", "gpt-4o-mini")
    b = _stored(rows, [*build_scorers(["faithfulness", "answer_relevancy"]), JudgeScorer("rubric5")], other, name="b")
    capsys.readouterr()
    assert cli.main(["trust", a, "--against", b, "--iterations", "20", "--out", "f.json"]) == 0
    out = capsys.readouterr().out
    block = json.loads((home / "f.json").read_text(encoding="utf-8"))["comparison"]
    compared = {(c["metric"], c["method"]) for c in block["by_method"]}
    assert compared == {("faithfulness", "decomposed"), ("faithfulness", "judge:rubric5"),
                        ("answer_relevancy", "judge:rubric5"), ("context_precision", "judge:rubric5"),
                        ("answer_correctness", "judge:rubric5")}
    judged = {c["method"]: (c["judge_a"], c["judge_b"]) for c in block["by_method"]}
    assert judged["judge:rubric5"][0].startswith("offline/") and judged["judge:rubric5"][1] == "openai/gpt-4o-mini"
    assert "A: offline/" in out and "B: openai/gpt-4o-mini" in out
    assert "judge:rubric5 was judged by offline/" in out and "compares the judges as much as the answers" in out
    assert "scored in one run only, not compared: A -; B answer_relevancy (decomposed)" in out


def test_against_says_when_the_runs_share_no_metric_or_no_row(home, capsys):
    from rageval_core.core.types import Sample
    from rageval_core.data.datasets import load_dataset
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers

    rows = load_dataset(MINI).samples[:6]
    a = _stored(rows, build_scorers(["faithfulness"]), name="a")
    b = _stored(rows, [JudgeScorer("binary")], name="b")
    renamed = [Sample(f"x-{s.id}", s.question, s.contexts, s.answer, s.ground_truth, dict(s.metadata)) for s in rows]
    c = _stored(renamed, build_scorers(["faithfulness"]), name="c")
    capsys.readouterr()
    assert cli.main(["trust", a, "--against", b, "--iterations", "20"]) == 0
    out = capsys.readouterr().out
    assert "the runs share no metric × method, so nothing is compared: A scored faithfulness (decomposed); " \
           "B scored faithfulness (judge:binary), answer_correctness (judge:binary)" in out
    assert "agree" not in out.split("paired by row", 1)[1]
    assert cli.main(["trust", a, "--against", c, "--iterations", "20"]) == 0
    out = capsys.readouterr().out
    assert "the runs share no row (A has 6, B has 6): different datasets? Nothing is compared" in out
    assert "agree" not in out.split("paired by row", 1)[1]


def test_trust_help_says_the_sign_once() -> None:
    from rageval_core.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    text = " ".join(sub.choices["trust"].format_help().split())
    assert "run B − run A (positive: B scores higher)" in text and "A − B" not in text
