"""Writes the trace fixtures that the OpenTelemetry SDK and the instrumentors write (never by hand): one small RAG
app (a vector-store retriever over four documents, a prompt, an OpenAI chat model) run through LangChain and
LlamaIndex, traced by OpenInference's and OpenLLMetry's (traceloop) instrumentors, its LLM calls answered by the
project's fake OpenAI server (rageval_core/testing/fake_llm/). Each run asks two questions (English, then Japanese
with OpenInference's ``using_attributes(session_id="sess-42", user_id="u-7")``) and one whose LLM call fails (a 500
from the server), so an errored trace is in every file.

Run in a test-only environment outside the repository (never a project dependency)::

    python -m venv /work/venvs/otel
    /work/venvs/otel/bin/pip install "opentelemetry-sdk==1.45.*" opentelemetry-exporter-otlp-proto-common \\
        opentelemetry-exporter-otlp-proto-http openinference-instrumentation-langchain \\
        openinference-instrumentation-llama-index opentelemetry-instrumentation-langchain langchain-core \\
        langchain-openai llama-index-core llama-index-llms-openai llama-index-embeddings-openai
    /work/venvs/otel/bin/python tests/data/traces/make_otel.py            # writes tests/data/traces/sdk/
    /work/venvs/otel/bin/python tests/data/traces/make_otel.py --case openinference_langchain --otlp-endpoint URL

Per case (``CASES``) it writes, from the same finished spans:

- ``<case>.otlp.json``: ``MessageToJson(encode_spans(spans))``, protobuf's JSON mapping of an OTLP export request
  (what the SDK's exporters encode; base64 ids, ``intValue`` as strings);
- ``<case>.sdk.jsonl``: ``ReadableSpan.to_json(indent=None)``, one span a line (``0x`` ids, nested status);
- ``<case>.console.txt`` (``CONSOLE_CASE`` only): what ``ConsoleSpanExporter`` prints (the same JSON, pretty, one
  object after another).

With ``--otlp-endpoint`` the spans also go to that OTLP/HTTP endpoint (make_phoenix.py points it at a Phoenix
server). Library versions go to ``sdk/versions.json``. Each case runs in its own process (the instrumentors
patch LangChain globally).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

CASES = ("openinference_langchain", "openinference_langchain_responses", "openinference_openai_responses",
         "openinference_llamaindex", "openllmetry_langchain")
CONSOLE_CASE = "openinference_langchain"  # the one case also written as ConsoleSpanExporter prints it
PACKAGES = ("opentelemetry-sdk", "opentelemetry-api", "opentelemetry-exporter-otlp-proto-common", "opentelemetry-proto",
            "protobuf", "openinference-instrumentation-langchain", "openinference-instrumentation-llama-index",
            "openinference-semantic-conventions", "opentelemetry-instrumentation-langchain", "langchain-core",
            "langchain-openai", "llama-index-core", "llama-index-llms-openai", "llama-index-embeddings-openai", "openai",
            "openinference-instrumentation-openai")
DOCS = [
    ("kb-ml-001", "Overfitting is when a model fits the training data too closely and generalises poorly to new data."),
    ("kb-ml-002", "Regularisation, dropout and early stopping reduce overfitting."),
    ("kb-ja-017", "ドロップアウト率は一般に0.2から0.5の間で設定される。"),
    ("kb-ja-018", "ドロップアウトは学習中に一部のニューロンの出力を0にする正則化手法である。"),
]
QUESTIONS = {
    "What is overfitting?": "Overfitting is when a model fits its training data too closely and does worse on new data.",
    "ドロップアウト率は通常どの範囲に設定されますか？": "通常は0.2から0.5の間に設定されます。",
}
FAILING = "Why does the model server fail?"


def responder(request: Any) -> str:
    """The fake server's answer: the canned answer of the question found in the prompt."""
    prompt = request.prompt
    return next((a for q, a in QUESTIONS.items() if q in prompt), "I do not know.")


def tracer(otlp_endpoint: str | None) -> tuple[Any, Any]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "rag-fixture"}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=otlp_endpoint)))
    return provider, memory


def make_retriever(base_url: str) -> Any:
    """LangChain's in-memory vector store over ``DOCS`` (OpenAI embeddings from the fake server), top 2."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_openai import OpenAIEmbeddings

    embeddings = OpenAIEmbeddings(base_url=base_url, api_key="x", model="text-embedding-3-small", check_embedding_ctx_length=False)
    store = InMemoryVectorStore(embeddings)
    store.add_documents([Document(id=i, page_content=t, metadata={"source": i}) for i, t in DOCS])
    return store.as_retriever(search_kwargs={"k": 2})


def langchain_app(base_url: str, responses_api: bool = False) -> Any:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough
    from langchain_openai import ChatOpenAI

    retriever = make_retriever(base_url)
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer from the context only.\n\nContext:\n{context}"), ("human", "{question}")])
    llm = ChatOpenAI(base_url=base_url, api_key="x", model="gpt-4o-mini", max_retries=0, temperature=0,
                     use_responses_api=responses_api)

    def joined(docs: list[Any]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    return {"context": retriever | joined, "question": RunnablePassthrough()} | prompt | llm | StrOutputParser()


def openai_responses_app(base_url: str) -> Any:
    """The retriever of ``langchain_app``, then the OpenAI client's Responses API called in a step of the chain: the
    chain's output is the ``Response`` object itself (the answer in Responses format)."""
    import openai
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
    retriever = make_retriever(base_url)

    def answer(inputs: dict[str, Any]) -> Any:
        context = "\n\n".join(d.page_content for d in inputs["context"])
        return client.responses.create(model="gpt-4o-mini", instructions=f"Answer from the context only.\n\nContext:\n{context}",
                                       input=inputs["question"])

    return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(answer)


def llamaindex_app(base_url: str) -> Any:
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.embeddings.openai import OpenAIEmbedding
    from llama_index.llms.openai import OpenAI

    Settings.llm = OpenAI(api_base=base_url, api_key="x", model="gpt-4o-mini", max_retries=0, temperature=0)
    Settings.embed_model = OpenAIEmbedding(api_base=base_url, api_key="x", model="text-embedding-3-small")
    index = VectorStoreIndex.from_documents([Document(text=t, id_=i, metadata={"source": i}) for i, t in DOCS])
    engine = index.as_query_engine(similarity_top_k=2)

    class App:
        def invoke(self, question: str) -> str:
            return str(engine.query(question))

    return App()


def instrument(case: str, provider: Any) -> None:
    if case.startswith("openinference_langchain") or case == "openinference_openai_responses":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)
        if case == "openinference_openai_responses":
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=provider)
    elif case == "openinference_llamaindex":
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    elif case == "openllmetry_langchain":
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=provider)
    else:
        raise SystemExit(f"unknown case {case}")


def run_case(case: str, out: Path, otlp_endpoint: str | None) -> None:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    from rageval_core.testing.fake_llm import FakeLLMServer

    provider, memory = tracer(otlp_endpoint)
    instrument(case, provider)
    with FakeLLMServer(responder=responder) as server:
        base_url = server.openai_base_url
        if case == "openinference_llamaindex":
            app = llamaindex_app(base_url)
        elif case == "openinference_openai_responses":
            app = openai_responses_app(base_url)
        else:
            app = langchain_app(base_url, case.endswith("_responses"))
        for n, question in enumerate(QUESTIONS):
            if n == 1 and case.startswith("openinference"):  # the second question carries a session and a user
                from openinference.instrumentation import using_attributes

                with using_attributes(session_id="sess-42", user_id="u-7"):
                    app.invoke(question)
            else:
                app.invoke(question)
        server.fault("server_error", times=3, path="/responses" if case.endswith("_responses") else "/chat/completions")
        try:
            app.invoke(FAILING)
        except Exception as exc:  # noqa: BLE001 - the failure is the point: its trace ends in ERROR
            print(f"{case}: the failing question raised {type(exc).__name__}", file=sys.stderr)
    provider.force_flush()
    spans = memory.get_finished_spans()
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{case}.otlp.json").write_text(MessageToJson(encode_spans(spans)) + "\n", encoding="utf-8")
    (out / f"{case}.sdk.jsonl").write_text("".join(s.to_json(indent=None) + "\n" for s in spans), encoding="utf-8")
    if case == CONSOLE_CASE:
        console = io.StringIO()
        ConsoleSpanExporter(out=console).export(spans)
        (out / f"{case}.console.txt").write_text(console.getvalue(), encoding="utf-8")
    provider.shutdown()
    print(f"{case}: {len(spans)} spans → {out}", file=sys.stderr)


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, help="one case, in this process (default: each in its own)")
    parser.add_argument("--out", type=Path, default=HERE / "sdk")
    parser.add_argument("--otlp-endpoint", help="also send the spans to this OTLP/HTTP traces endpoint")
    args = parser.parse_args(argv)
    if args.case:
        run_case(args.case, args.out, args.otlp_endpoint)
        return 0
    for case in CASES:
        extra = ["--otlp-endpoint", args.otlp_endpoint] if args.otlp_endpoint else []
        subprocess.run([sys.executable, __file__, "--case", case, "--out", str(args.out), *extra], check=True)
    (args.out / "versions.json").write_text(json.dumps({"script": "tests/data/traces/make_otel.py", **versions()},
                                                       indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
