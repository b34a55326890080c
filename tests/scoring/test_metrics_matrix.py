"""Every decomposed metric through the same pipeline cases (issue 3 "Must show"): malformed JSON,
an empty answer, a single context, ten contexts, Japanese data → Japanese templates.

A scripted LLM answers each task correctly from its structured inputs (``valid``), except the step a
test breaks on purpose, so each case checks the metric's own handling and not the script.
"""

from __future__ import annotations

import pytest

from rageval_core.llm.base import LLMRequest
from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.scoring.prompts import load_template
from rageval_core.core.text import split_sentences
from rageval_core.core.types import METRIC_IDS, Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM
from tests.support.samples import DROPOUT_JA as JA


def valid(request: LLMRequest) -> dict:
    """A correct, schema-shaped answer for every decomposed task, computed from the request's inputs."""
    i, lang = request.inputs, request.language
    if request.task == "extract_claims":
        return {"claims": split_sentences(i["answer"], lang)}
    if request.task in ("verify_claims", "verify_claims_with_reference"):
        last = len(i["contexts"]) - 1  # the last context: a ten-context row must keep index 9
        verdicts = [
            {"claim_index": k, "verdict": 1, "reason": "stated", "context_index": last, "supporting_sentence": i["contexts"][last]}
            for k in range(len(i["claims"]))
        ]
        if request.task == "verify_claims":
            return {"verdicts": verdicts}
        return {"verdicts": [{**v, "reference_verdict": 1} for v in verdicts], "missing_reference_claims": []}
    if request.task == "generate_questions":
        return {"questions": [{"question": f"What does the answer say ({k})?", "noncommittal": 0} for k in range(i["n"])]}
    if request.task == "context_verdicts":
        return {"verdicts": [{"context_index": k, "useful": int(k % 2 == 0), "reason": "r"} for k in range(len(i["contexts"]))]}
    if request.task == "attribute_reference":
        return {"attributions": [{"sentence_index": k, "attributed": 1, "reason": "r"} for k in range(len(i["reference_sentences"]))]}
    if request.task == "extract_relevant_sentences":
        return {"sentences": [split_sentences(i["contexts"][0], lang)[0]]}
    if request.task == "classify_correctness":
        return {"TP": [{"statement": c, "reason": "r"} for c in i["answer_claims"]], "FP": [], "FN": []}
    raise AssertionError(f"unexpected task {request.task}")


def sample(n_contexts: int = 2, *, answer: str = "Dropout disables random units. It reduces overfitting.",
           ground_truth: str | None = "Dropout disables units at random. It curbs overfitting.") -> Sample:
    contexts = tuple(f"Fact number {k} about dropout and training." for k in range(n_contexts))
    return Sample(f"row-{n_contexts}", "What is dropout?", contexts, answer, ground_truth)


def score(metric: str, row: Sample, llm: ScriptedLLM, **options):
    [scorer] = build_scorers([metric], {k: v for k, v in options.items() if k != "templates"})
    [result] = scorer.score(row, EvalContext(llm, HashEmbedder(), options=options))
    return result


# the step each metric sends first (faithfulness and correctness also break at a later step below)
FIRST_TASK = {
    "faithfulness": "extract_claims",
    "answer_relevancy": "generate_questions",
    "context_precision": "context_verdicts",
    "context_recall": "attribute_reference",
    "context_relevance": "extract_relevant_sentences",
    "answer_correctness": "extract_claims",
}
BROKEN = [(m, t) for m, t in FIRST_TASK.items()] + [
    ("faithfulness", "verify_claims"),
    ("answer_correctness", "classify_correctness"),
]
MALFORMED = 'Sure! Here is the JSON: {"verdicts": [{"claim_index": 0, "verdict": 1,'


@pytest.mark.parametrize(("metric", "task"), BROKEN)
def test_malformed_json_is_parse_error_with_the_raw_text_kept(metric, task):
    llm = ScriptedLLM(default=valid).script(task, MALFORMED)
    r = score(metric, sample(), llm)
    assert r.value is None and r.unscored_reason == "parse_error"
    assert r.details["raw_response"] == MALFORMED  # what the model said, for the inspector
    assert any(c["task"] == task and c["response"] == MALFORMED for c in r.details["calls"])


# what an empty answer means per metric: no call where the answer is needed; the others still score
EMPTY_ANSWER = {
    "faithfulness": "empty_answer",
    "answer_relevancy": "empty_answer",
    "answer_correctness": "empty_answer",
    "context_precision": None,  # judged against the ground truth
    "context_recall": None,  # ground truth vs contexts: the answer plays no part
    "context_relevance": None,  # the paper's version asks about the question only
}


@pytest.mark.parametrize("metric", METRIC_IDS)
def test_empty_answer(metric):
    llm = ScriptedLLM(default=valid)
    r = score(metric, sample(answer="   "), llm)
    if EMPTY_ANSWER[metric]:
        assert (r.value, r.unscored_reason, r.calls, llm.requests) == (None, "empty_answer", 0, [])
    else:
        assert r.value is not None and r.calls == len(llm.requests) >= 1
    if metric == "context_precision":
        no_reference = score(metric, sample(answer="", ground_truth=None), ScriptedLLM())
        assert no_reference.unscored_reason == "empty_answer" and no_reference.calls == 0


@pytest.mark.parametrize("metric", METRIC_IDS)
def test_single_context(metric):
    llm = ScriptedLLM(default=valid)
    r = score(metric, sample(1), llm)
    assert r.value is not None, r.reason
    for request in llm.requests:
        if "contexts" in request.inputs:
            assert request.inputs["contexts"] == ["Fact number 0 about dropout and training."]
    if metric == "faithfulness":
        assert {c["context_index"] for c in r.details["claims"]} == {0} and r.value == 1.0
    if metric == "context_precision":
        assert r.value == 1.0 and len(r.details["verdicts"]) == 1
    if metric == "context_relevance":
        assert r.value == 1.0 and r.details["context_sentence_count"] == 1
    per_chunk = score("context_precision", sample(1), ScriptedLLM(default=valid), context_precision_calls="per_chunk")
    assert per_chunk.calls == 1 and per_chunk.value == 1.0


@pytest.mark.parametrize("metric", METRIC_IDS)
def test_ten_contexts(metric):
    llm = ScriptedLLM(default=valid)
    r = score(metric, sample(10), llm)
    assert r.value is not None, r.reason
    for request in llm.requests:
        if "contexts" in load_template(request.task, "en").variables:  # generate_questions reads the answer only
            assert len(request.inputs["contexts"]) == 10
            assert request.prompt_text.count("<context index=") == 10 and '<context index="9">' in request.prompt_text
    if metric == "faithfulness":
        assert {c["context_index"] for c in r.details["claims"]} == {9}
    if metric == "context_precision":
        bits = [1, 0] * 5
        assert [v["useful"] for v in r.details["verdicts"]] == bits
        assert r.value == pytest.approx(scoring.average_precision(bits)) and r.calls == 1
        per_chunk = score(metric, sample(10), ScriptedLLM(default=valid), context_precision_calls="per_chunk")
        assert per_chunk.calls == 10 and [v["context_index"] for v in per_chunk.details["verdicts"]] == list(range(10))
    if metric == "context_relevance":
        assert r.details["context_sentence_count"] == 10 and r.value == pytest.approx(0.1)


@pytest.mark.parametrize("metric", METRIC_IDS)
@pytest.mark.parametrize(("row", "lang", "marker", "foreign"), [
    (JA, "ja", "JSON のみで回答してください", "Reply with JSON only"),
    (sample(), "en", "Reply with JSON only", "JSON のみで回答してください"),
])
def test_the_data_language_picks_the_templates(metric, row, lang, marker, foreign):
    llm = ScriptedLLM(default=valid)
    r = score(metric, row, llm)
    assert r.value is not None and r.details["language"] == lang and llm.requests
    for request in llm.requests:
        system = request.messages[0].content
        assert request.language == lang and marker in system and foreign not in system
        assert system == load_template(request.task, lang).to_messages(**_dummy(request.task, lang))[0].content
    if lang == "ja":
        assert any("\u3040" <= ch <= "\u30ff" for ch in r.reason)  # the readable summary follows the data too


def _dummy(task: str, lang: str) -> dict:
    """Values for a template's variables: only the system part is compared, which holds none but n / kind."""
    template = load_template(task, lang)
    values = {v: "x" for v in template.variables}
    values.update({"n": 3, "reference_kind": "ground_truth"} if task in ("generate_questions", "context_verdicts") else {})
    return {k: values[k] for k in template.variables}


def test_more_questions_than_asked_are_cut_to_n_and_kept():
    five = {"questions": [{"question": f"What is dropout {k}?", "noncommittal": 0} for k in range(5)]}
    r = score("answer_relevancy", sample(), ScriptedLLM().script("generate_questions", five))
    assert len(r.details["questions"]) == 3 and len(r.details["extra_questions"]) == 2
    assert "first 3" in r.details["count_note"] and r.value is not None


def test_claims_wrapped_in_objects_are_read_and_other_shapes_are_parse_errors():
    """Models without structured output often answer {"claims": [{"claim": ...}]}: read it, don't drop the row."""
    wrapped = {"claims": [{"claim": "Dropout disables random units."}, {"statement": "It reduces overfitting."}]}
    llm = ScriptedLLM(default=valid).script("extract_claims", wrapped)
    r = score("faithfulness", sample(), llm)
    assert r.value == 1.0 and [c["claim"] for c in r.details["claims"]] == ["Dropout disables random units.", "It reduces overfitting."]
    bad = ScriptedLLM(default=valid).script("extract_claims", {"claims": [{"score": 1}]})
    assert score("faithfulness", sample(), bad).unscored_reason == "parse_error"


ENGLISH_DOCS = tuple(
    "Dropout is a regularization technique that randomly sets a fraction of units to zero during training. " * 3
    for _ in range(2)
)


@pytest.mark.parametrize(("row", "lang"), [
    # Japanese users over English documents: questions must come back in Japanese (RAGAS's complaint)
    (Sample("mix-ja", "ドロップアウトとは何ですか？", ENGLISH_DOCS, "ドロップアウトはユニットを無効化します。", "過学習を防ぐ手法。"), "ja"),
    (Sample("mix-en", "What is dropout?", JA.contexts, "Dropout disables random units.", None), "en"),
    (Sample("meta", "What is dropout?", ENGLISH_DOCS, "Dropout disables units.", None, {"language": "ja"}), "ja"),
])
def test_language_follows_the_question_and_answer_not_the_documents(row, lang):
    llm = ScriptedLLM(default=valid)
    r = score("answer_relevancy", row, llm)
    assert r.details["language"] == lang and [q.language for q in llm.requests] == [lang]
    marker = "必ず日本語で" if lang == "ja" else "in the same language as the answer"
    assert marker in llm.requests[0].messages[0].content
