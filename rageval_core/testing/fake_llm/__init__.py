"""A local fake LLM server for tests and benchmarks, shipped as httpx ships its mock transport: real HTTP on a free
port, speaking the OpenAI (and Azure OpenAI), Gemini (and Vertex AI) and Anthropic wire formats, so the official SDKs
run end to end with nothing patched, with settable latency, faults, structured-output refusals and prompt caching.

    from rageval_core.testing.fake_llm import FakeLLMServer

    with FakeLLMServer(latency=0.1) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0)

Parts: ``server`` (``FakeLLMServer``: lifecycle, configuration, request log, faults), ``sockets`` (the TCP server and
HTTP handler), ``wire`` (the parsed request, log entries, faults, the default answers), ``formats`` (OpenAI and
Gemini bodies, answers and errors), ``anthropic`` (Messages and Message Batches), ``batch`` (OpenAI and Gemini batch
jobs), ``steps`` (answers to the workbench's own steps), ``prefix_cache`` (cached input tokens as providers report
them). The project's tests and ``bench/`` use it; ``bench/fake_llm_server.py`` serves it from the command line.
"""

from __future__ import annotations

from rageval_core.core.lazy import lazy_attributes

__all__ = [
    "FakeLLMServer", "FakeRequest", "Fault", "LoggedRequest", "PrefixCache", "default_responder", "fake_embedding",
    "prompt_schema", "schema_instance",
    "anthropic", "batch", "formats", "prefix_cache", "server", "sockets", "steps", "wire",
]

__getattr__ = lazy_attributes(__name__, globals(), {
    "server": ("FakeLLMServer",),
    "prefix_cache": ("PrefixCache",),
    "wire": ("FakeRequest", "Fault", "LoggedRequest", "default_responder", "fake_embedding", "prompt_schema",
             "schema_instance"),
})
