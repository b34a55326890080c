"""The decomposed metrics through the real openai SDK against the local fake server.

Every decomposed task's request must carry a ``response_format`` json_schema that OpenAI's strict mode
accepts (root object, every property required, ``additionalProperties: false`` on every object, only
keywords strict mode supports), and the JSON a model returns in that shape must score the row.
The fake server answers from the rendered prompt alone (item counts in the delimiter tags), as a
real model must: the structured ``inputs`` never leave the process.
"""

from __future__ import annotations

import re

import pytest

from rageval_core.embeddings.openai_embed import OpenAIEmbedder
from rageval_core.llm.openai_provider import OpenAILLM
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.core.tasks import SCHEMAS
from rageval_core.core.types import METRIC_IDS, Sample
from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest
from rageval_core.testing.fake_llm.steps import step_answer
from tests.support.samples import DROPOUT_JA as JA

KEY = "sk-test-metrics-0123456789abcdef"
DECOMPOSED_TASKS = {
    "extract_claims", "verify_claims", "verify_claims_with_reference", "generate_questions",
    "context_verdicts", "attribute_reference", "extract_relevant_sentences", "classify_correctness",
}
# what OpenAI's strict structured outputs accept (platform docs, "Supported schemas")
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description",
    "$ref", "$defs", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "pattern",
    "format", "minItems", "maxItems", "title",
}

EN = Sample(
    "en-1",
    "What is dropout?",
    ("Dropout randomly disables units during training.", "Paris is the capital of France."),
    "Dropout disables random units. It reduces overfitting.",
    "Dropout randomly disables units during training. It reduces overfitting.",
)


def strict_problems(schema: object, path: str = "$") -> list[str]:
    """Why OpenAI strict mode would refuse ``schema`` (empty when it would accept it)."""
    if not isinstance(schema, dict):
        return [f"{path}: not an object"]
    problems = [f"{path}: keyword {k!r} not supported in strict mode" for k in schema if k not in STRICT_KEYWORDS]
    types = schema.get("type")
    types = set(types) if isinstance(types, list) else {types}
    if "object" in types or "properties" in schema:
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
        if set(schema.get("required") or []) != set(props) or len(schema.get("required") or []) != len(props):
            problems.append(f"{path}: every property must be required")
        for name, sub in props.items():
            problems += strict_problems(sub, f"{path}.{name}")
    if "array" in types:
        problems += strict_problems(schema.get("items"), f"{path}[]")
    return problems


def answer(request: FakeRequest) -> dict:
    """What a compliant model would return for each decomposed task, read from the prompt only (the fake
    server's own step answers, ``rageval_core/testing/fake_llm/steps.py``); any other request fails the test."""
    found = step_answer(request.prompt, request.schema)
    if found is None:
        raise AssertionError(f"unexpected task {request.body['response_format']['json_schema']['name']}")
    return found


@pytest.fixture(scope="module")
def server():
    with FakeLLMServer() as srv:
        srv.responder = answer
        yield srv


def test_every_decomposed_schema_is_accepted_by_openai_strict_mode():
    for task in DECOMPOSED_TASKS:
        assert SCHEMAS[task]["type"] == "object"
        assert strict_problems(SCHEMAS[task]) == [], task
    assert strict_problems({"type": "object", "properties": {"a": {"type": "string"}}, "required": []})  # the check bites


@pytest.mark.parametrize("row", [EN, JA], ids=["en", "ja"])
@pytest.mark.parametrize("economy", [False, True], ids=["default", "economy"])
def test_all_six_metrics_through_the_openai_sdk(server, row, economy):
    server.reset_log()
    llm = OpenAILLM(api_key=KEY, model="gpt-4o-mini", base_url=server.openai_base_url)
    embedder = OpenAIEmbedder(api_key=KEY, base_url=server.openai_base_url)
    ctx = EvalContext(llm, embedder)
    results = [r for s in build_scorers(METRIC_IDS, {"economy": economy}) for r in s.score(row, ctx)]
    assert [(r.metric, r.unscored_reason) for r in results] == [(m, None) for m in METRIC_IDS]
    assert all(r.provider == "openai" and r.model == "gpt-4o-mini" for r in results)
    chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
    sent = {}
    for logged in chat:
        fmt = logged.body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        name = fmt["json_schema"]["name"]
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name)
        assert fmt["json_schema"]["schema"] == SCHEMAS[name] and strict_problems(SCHEMAS[name]) == []
        assert KEY not in str(logged.body)  # the key travels in the header only
        sent[name] = logged.body["messages"]
    expected = {"extract_claims", "generate_questions", "context_verdicts", "attribute_reference", "extract_relevant_sentences"}
    expected |= {"verify_claims_with_reference"} if economy else {"verify_claims", "classify_correctness"}
    assert set(sent) == expected
    # the answer's claims are extracted once and shared: in economy mode the ground truth needs no extraction
    assert sum(1 for r in chat if r.body["response_format"]["json_schema"]["name"] == "extract_claims") == (1 if economy else 2)
    for messages in sent.values():
        assert [m["role"] for m in messages] == ["system", "user"]
        assert ("JSON のみで回答してください" in messages[0]["content"]) == (row is JA)


def test_per_question_and_per_chunk_options_through_the_openai_sdk(server):
    server.reset_log()
    ctx = EvalContext(OpenAILLM(api_key=KEY, model="gpt-4o-mini", base_url=server.openai_base_url),
                      OpenAIEmbedder(api_key=KEY, base_url=server.openai_base_url))
    options = {"answer_relevancy_calls": "per_question", "context_precision_calls": "per_chunk"}
    results = [r for s in build_scorers(["answer_relevancy", "context_precision"], options) for r in s.score(JA, ctx)]
    assert [r.unscored_reason for r in results] == [None, None]
    assert [len(results[0].details["questions"]), len(results[1].details["verdicts"])] == [3, 2]
    chat = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    questions = [b for b in chat if b["response_format"]["json_schema"]["name"] == "generate_questions"]
    assert sorted(b.get("seed") for b in questions) == [0, 1, 2]  # distinct samples, cached apart
    assert all(b.get("temperature") == 0.7 and b.get("n", 1) == 1 for b in questions)
    chunks = [b for b in chat if b["response_format"]["json_schema"]["name"] == "context_verdicts"]
    assert len(chunks) == 2 and all(b["messages"][-1]["content"].count("<context index=") == 1 for b in chunks)
