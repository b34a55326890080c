"""The shared contracts: result invariants, request keys and tolerant JSON extraction."""

import pytest

from rageval_core.core.jsonparse import ParseError, parse_json_object
from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.core.tasks import SCHEMAS, judge_schema, schema_for
from rageval_core.core.types import MetricResult, Usage


def test_result_without_value_needs_reason():
    with pytest.raises(ValueError, match="unscored_reason"):
        MetricResult("1", "faithfulness", "decomposed", None)
    assert not MetricResult("1", "faithfulness", "decomposed", None, unscored_reason="no_claims").scored


def test_result_value_must_be_in_unit_interval():
    with pytest.raises(ValueError, match="outside"):
        MetricResult("1", "faithfulness", "decomposed", 1.5)


def test_result_round_trips_through_dict():
    r = MetricResult("1", "faithfulness", "decomposed", 0.5, usage=Usage(10, 2), details={"claims": ["a"]})
    assert MetricResult.from_dict(r.to_dict()) == r


def test_request_key_ignores_task_and_inputs_but_not_prompt():
    a = LLMRequest("judge", (Message("user", "x"),), inputs={"q": 1})
    b = LLMRequest("other", (Message("user", "x"),), inputs={"q": 2})
    c = LLMRequest("judge", (Message("user", "y"),))
    assert a.key() == b.key() != c.key()


def test_parse_json_tolerates_fences_and_prose():
    assert parse_json_object('Sure!\n```json\n{"a": 1}\n```\nDone') == {"a": 1}
    assert parse_json_object('結果: {"a": {"b": 2}} 以上') == {"a": {"b": 2}}


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2]", '{"a": '])
def test_parse_json_rejects_what_it_cannot_read(text):
    with pytest.raises(ParseError) as info:
        parse_json_object(text)
    assert info.value.raw == text


def test_schemas_are_closed_objects():
    for task in SCHEMAS:
        schema = schema_for(task)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
    flat = judge_schema(["faithfulness", "polite"], min_score=1, max_score=5)
    assert set(flat["required"]) == {"faithfulness_score", "faithfulness_reason", "polite_score", "polite_reason"}


def test_provider_error_maps_to_unscored_reason():
    assert ProviderError("t", kind="timeout").unscored_reason == "timeout"
    assert ProviderError("m", kind="replay_miss").unscored_reason == "replay_miss"
    assert ProviderError("x", kind="server", status=500).unscored_reason == "provider_error"


def test_usage_to_dict_has_every_field() -> None:
    import dataclasses

    from rageval_core.core.types import Usage

    usage = Usage(*range(3, 3 + len(dataclasses.fields(Usage))))  # every field set: every field written
    assert usage.to_dict() == dataclasses.asdict(usage)
    plain = Usage(input_tokens=3, output_tokens=5, cached_input_tokens=7)  # one completion: the three token counts
    assert plain.to_dict() == {"input_tokens": 3, "output_tokens": 5, "cached_input_tokens": 7}
