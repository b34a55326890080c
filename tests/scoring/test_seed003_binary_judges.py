"""Seed 003's one failure: a helpful extra sentence ("…記載されていませんが、電話、Slack、Zoom等により…") passes
the lenient binary judge and fails the strict one.

The question, ground truth and answer are read from the article itself (../shared/seeds/003; skipped with a
reason in a fresh clone). The scripted judge follows whatever rule the rendered prompt states about
information that is not in the reference: it passes the answer when the prompt allows helpful extra
information and fails it when the prompt counts such information as wrong. So the test checks the whole
path: each preset's wording reaches the prompt, the verdict is parsed, and 1 / 0 land as pass / fail.
"""

from __future__ import annotations

import re

from rageval_core.llm.base import LLMRequest
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.core.types import ANSWER_CORRECTNESS, FAITHFULNESS, Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM
from tests.support.skips import needs_shared


def seed_003_case() -> Sample:
    """The article's failing row: question, reference ("規定には記載されていません") and the helpful answer."""
    text = needs_shared("seeds/003_fa71d643d822b34d.txt").read_text(encoding="utf-8")
    quoted = {label: re.search(rf"• {label}: 「(.+?)」\n", text).group(1) for label in ("質問", "正解データ", "RAGの回答")}
    context = "リモートワークの日は、電話、Slack、Zoom等により常に連絡が取れる状態にしておく必要があります。"
    return Sample("seed003-q5", quoted["質問"], (context,), quoted["RAGの回答"], quoted["正解データ"], {})


def rule_following_judge(request: LLMRequest) -> dict:
    """Faithful (the extra sentence is in the context); correct unless the prompt counts extra information as wrong."""
    prompt = request.prompt_text
    extra_is_wrong = "正解にない情報が含まれている" in prompt
    extra_is_fine = "補足情報" in prompt and "許容" in prompt
    assert extra_is_wrong != extra_is_fine, "each preset states exactly one rule about extra information"
    out = {}
    for criterion in request.inputs["criteria"]:
        score = 1
        if criterion["id"] == ANSWER_CORRECTNESS and extra_is_wrong:
            score = 0
        out[f"{criterion['id']}_score"] = score
        out[f"{criterion['id']}_reason"] = "補足情報あり" if criterion["id"] == ANSWER_CORRECTNESS else "文脈どおり"
    return out


def _scores(preset: str, sample: Sample) -> dict[str, float | None]:
    llm = ScriptedLLM(default=rule_following_judge)
    results = JudgeScorer(preset).score(sample, EvalContext(llm=llm, embedder=HashEmbedder()))
    assert llm.calls("judge"), "the judge was asked"
    return {r.metric: r.value for r in results}


def test_the_helpful_extra_answer_passes_the_lenient_judge_and_fails_the_strict_one():
    sample = seed_003_case()
    assert sample.ground_truth == "規定には記載されていません" and "Slack" in sample.answer
    lenient, strict = _scores("binary", sample), _scores("binary-strict", sample)
    assert lenient == {FAITHFULNESS: 1.0, ANSWER_CORRECTNESS: 1.0}
    assert strict == {FAITHFULNESS: 1.0, ANSWER_CORRECTNESS: 0.0}
