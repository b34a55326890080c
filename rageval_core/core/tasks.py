"""The catalogue of evaluation steps: each task's name, structured inputs and output JSON schema.

A metric renders a task's template (``rageval_core.scoring.prompts``) into messages, sends an ``LLMRequest``
with the schema below and parses the answer. API providers send the schema as structured output; the
offline provider computes the same task from ``LLMRequest.inputs``. Keeping names, inputs and schemas
in one place is what lets the three agree.

Inputs per task (keys of ``LLMRequest.inputs``; a metric may add context keys such as ``question`` that
the offline provider reads and API providers never see):

- extract_claims: question, answer                       -> {"claims": [str]}
- verify_claims: contexts [str], claims [str], question  -> {"verdicts": [{claim_index, verdict 0|1, reason,
                                                              context_index int|null, supporting_sentence str|null}]}
- verify_claims_with_reference: contexts, reference, claims, reference_claims
                                                         -> verify_claims' verdicts, each with reference_verdict 0|1,
                                                            plus {"missing_reference_claims": [int]} (economy mode)
- generate_questions: answer, contexts, n                -> {"questions": [{question, noncommittal 0|1}]}
- context_verdicts: question, contexts [str], reference, reference_kind ("ground_truth"|"answer")
                                                         -> {"verdicts": [{context_index, useful 0|1, reason}]}
- attribute_reference: question, contexts, reference_sentences [str]
                                                         -> {"attributions": [{sentence_index, attributed 0|1, reason}]}
- extract_relevant_sentences: question, contexts, answer -> {"sentences": [str]}
- classify_correctness: question, answer_claims, reference_claims
                                                         -> {"TP": [{statement, reason}], "FP": [...], "FN": [...]}
- judge: question, contexts, answer, ground_truth, criteria [{id, name, min, max}]
                                                         -> flat {"<id>_score": int, "<id>_reason": str} per criterion
  The offline provider adds ``"_unsupported": [ids]`` (custom criteria it cannot judge → offline_unsupported)
  and ``"_unscored": {id: reason}`` (rows its heuristic cannot score, e.g. uncheckable) to the judge output.
- The offline provider also adds ``"support"`` (a number in [0, 1], >= 0.5 exactly when verdict is 1) to each
  verify_claims / verify_claims_with_reference verdict: its graded claim support, which faithfulness uses
  when every verdict has one. API providers are not asked for it (their schema is unchanged);
  ``offline_schema_for`` is the schema with that extension, which the offline provider's answers match.
- synth_qa: title, heading, text, n                      -> {"pairs": [{question, answer}]}  (question type "fact")
- synth_reasoning: title, heading, text, n               -> {"pairs": [{question, answer}]}  (one step beyond a lookup)
- synth_multi_chunk: title, heading_a, text_a, heading_b, text_b, n
                                                         -> {"pairs": [{question, answer}]}  (needs both chunks)
- synth_out_of_scope: title, heading, text, n, not_found -> {"pairs": [{question, answer}]}  (answer: not_found)
  The generator adds ``document_text`` (every chunk of the document) for the offline provider, which asks
  only about aspects that text never mentions; API providers never see it.
- rag_answer: question, contexts                         -> {"answer": str}
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

EXTRACT_CLAIMS = "extract_claims"
VERIFY_CLAIMS = "verify_claims"
VERIFY_CLAIMS_WITH_REFERENCE = "verify_claims_with_reference"
GENERATE_QUESTIONS = "generate_questions"
CONTEXT_VERDICTS = "context_verdicts"
ATTRIBUTE_REFERENCE = "attribute_reference"
EXTRACT_RELEVANT_SENTENCES = "extract_relevant_sentences"
CLASSIFY_CORRECTNESS = "classify_correctness"
JUDGE = "judge"
SYNTH_QA = "synth_qa"
SYNTH_REASONING = "synth_reasoning"
SYNTH_MULTI_CHUNK = "synth_multi_chunk"
SYNTH_OUT_OF_SCOPE = "synth_out_of_scope"
RAG_ANSWER = "rag_answer"


def _obj(properties: Mapping[str, Any]) -> dict[str, Any]:
    """A closed object with every property required (what OpenAI strict mode demands)."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }


def _arr(items: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": dict(items)}


_STR = {"type": "string"}
_INT = {"type": "integer"}
_BIT = {"type": "integer", "enum": [0, 1]}
_NULLABLE_INT = {"type": ["integer", "null"]}
_NULLABLE_STR = {"type": ["string", "null"]}

_VERDICT = {
    "claim_index": _INT,
    "verdict": _BIT,
    "reason": _STR,
    "context_index": _NULLABLE_INT,
    "supporting_sentence": _NULLABLE_STR,
}
_STATEMENTS = _arr(_obj({"statement": _STR, "reason": _STR}))

SCHEMAS: dict[str, dict[str, Any]] = {
    EXTRACT_CLAIMS: _obj({"claims": _arr(_STR)}),
    VERIFY_CLAIMS: _obj({"verdicts": _arr(_obj(_VERDICT))}),
    VERIFY_CLAIMS_WITH_REFERENCE: _obj(
        {
            "verdicts": _arr(_obj({**_VERDICT, "reference_verdict": _BIT})),
            "missing_reference_claims": _arr(_INT),
        }
    ),
    GENERATE_QUESTIONS: _obj({"questions": _arr(_obj({"question": _STR, "noncommittal": _BIT}))}),
    CONTEXT_VERDICTS: _obj({"verdicts": _arr(_obj({"context_index": _INT, "useful": _BIT, "reason": _STR}))}),
    ATTRIBUTE_REFERENCE: _obj(
        {"attributions": _arr(_obj({"sentence_index": _INT, "attributed": _BIT, "reason": _STR}))}
    ),
    EXTRACT_RELEVANT_SENTENCES: _obj({"sentences": _arr(_STR)}),
    CLASSIFY_CORRECTNESS: _obj({"TP": _STATEMENTS, "FP": _STATEMENTS, "FN": _STATEMENTS}),
    **{task: _obj({"pairs": _arr(_obj({"question": _STR, "answer": _STR}))})
       for task in (SYNTH_QA, SYNTH_REASONING, SYNTH_MULTI_CHUNK, SYNTH_OUT_OF_SCOPE)},
    RAG_ANSWER: _obj({"answer": _STR}),
}


def judge_schema(criterion_ids: Iterable[str], *, min_score: int | None = None, max_score: int | None = None) -> dict[str, Any]:
    """Schema of the one-call judge's flat output (the RAGAS-vs-judge article's shape: ``<id>_score`` and ``<id>_reason``)."""
    score: dict[str, Any] = {"type": "integer"}
    if min_score is not None:
        score["minimum"] = min_score
    if max_score is not None:
        score["maximum"] = max_score
    properties: dict[str, Any] = {}
    for cid in criterion_ids:
        properties[f"{cid}_score"] = dict(score)
        properties[f"{cid}_reason"] = _STR
    return _obj(properties)


OFFLINE_VERDICT_EXTRAS: dict[str, Any] = {"support": {"type": "number", "minimum": 0, "maximum": 1}}


def offline_schema_for(task: str) -> dict[str, Any]:
    """``schema_for(task)`` with the offline provider's documented extras (graded ``support`` per verdict),
    optional so that an API model's answer also matches."""
    schema = schema_for(task)
    if task not in (VERIFY_CLAIMS, VERIFY_CLAIMS_WITH_REFERENCE):
        return schema
    items = schema["properties"]["verdicts"]["items"]
    extended = {**items, "properties": {**items["properties"], **OFFLINE_VERDICT_EXTRAS}}
    verdicts = {**schema["properties"]["verdicts"], "items": extended}
    return {**schema, "properties": {**schema["properties"], "verdicts": verdicts}}


def schema_for(task: str) -> dict[str, Any]:
    """The output schema of a fixed-shape task (the judge's schema depends on its rubric: ``judge_schema``)."""
    try:
        return SCHEMAS[task]
    except KeyError:
        raise KeyError(f"unknown task {task!r}; known: {', '.join(sorted(SCHEMAS))}") from None
