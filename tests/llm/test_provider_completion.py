"""``Completion.parsed``: the protocol hands back parsed JSON next to the raw text, for every provider."""

from __future__ import annotations

from rageval_core.llm.base import Completion, LLMRequest, Message
from rageval_core.llm.gemini_provider import GeminiLLM
from rageval_core.llm.openai_provider import OpenAILLM
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer


def test_parsed_tolerates_fences_and_prose_and_is_none_for_plain_text():
    done = Completion(texts=['Here:\n```json\n{"claims": ["a"]}\n```', "no json here", '{"claims": []}'], provider="p", model="m")
    assert done.parsed == {"claims": ["a"]}
    assert done.parsed_choices == [{"claims": ["a"]}, None, {"claims": []}]
    assert Completion(texts=[], provider="p", model="m").parsed is None


def test_real_sdks_return_parsed_structured_output():
    request = LLMRequest(task=EXTRACT_CLAIMS, messages=(Message("user", "Paris is in France."),), schema=schema_for(EXTRACT_CLAIMS))
    with FakeLLMServer(responder=lambda req: {"claims": ["Paris is in France."]}) as server:
        openai_llm = OpenAILLM(api_key="sk-parsed-test-00000000", model="m", base_url=server.openai_base_url)
        gemini_llm = GeminiLLM(api_key="AIzaParsedTest0000000000000000000", model="m", base_url=server.gemini_base_url)
        for llm in (openai_llm, gemini_llm):
            assert llm.complete(request).parsed == {"claims": ["Paris is in France."]}
