"""Phoenix's own code, run by the Phoenix test venv's python (tests/support/phoenix_server.py), never imported by the
project: it imports only the OpenTelemetry SDK, the OTLP/HTTP exporter, the OpenInference OpenAI instrumentor, openai
and Phoenix's own client.

A worker that answers JSON lines on stdin, one JSON line each on stdout, so its imports (~10 s of CPU: importing
``phoenix.client`` loads the whole ``phoenix`` package) happen once, while the server starts:

- ``{"op": "seed", "endpoint", "openai_base_url", "project", "rows": [{"question", "documents"}]}``: one trace a row,
  as an instrumented RAG app sends it: a CHAIN root span ``rag`` (input = the question, output = the answer), a
  RETRIEVER span ``retrieve`` with the documents (id, content, score; a row without documents has none: a plain
  chat), and the LLM span the instrumentor records around the chat completion sent to the project's fake server.
  Answers ``{"trace_ids": [...]}``.
- ``{"op": "annotations", "url", "project"}``: the project's root spans and every annotation on them, read with
  ``phoenix.client.Client`` (``spans.get_spans``, ``spans.get_span_annotations``).

The bearer key comes from PHOENIX_API_KEY in the environment. The first line printed is ``{"ready": true,
"versions": {...}}``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from importlib.metadata import version
from typing import Any

import openai
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from phoenix.client import Client

PACKAGES = ("arize-phoenix", "arize-phoenix-client", "opentelemetry-sdk", "openinference-instrumentation-openai", "openai")


def seed(endpoint: str, openai_base_url: str, project: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    key = os.environ.get("PHOENIX_API_KEY", "")
    headers = {"authorization": f"Bearer {key}"} if key else {}
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": project, "service.name": "rag-app"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, headers=headers, timeout=30)))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer("rag-app")
    client = openai.OpenAI(base_url=openai_base_url, api_key="not-needed", max_retries=0)
    trace_ids = []
    try:
        for row in rows:
            question, documents = row["question"], row.get("documents") or []
            with tracer.start_as_current_span("rag") as root:
                root.set_attribute("openinference.span.kind", "CHAIN")
                root.set_attribute("input.value", question)
                if documents:
                    with tracer.start_as_current_span("retrieve") as retriever:
                        retriever.set_attribute("openinference.span.kind", "RETRIEVER")
                        retriever.set_attribute("input.value", question)
                        for n, text in enumerate(documents):
                            retriever.set_attribute(f"retrieval.documents.{n}.document.id", f"doc-{len(trace_ids)}-{n}")
                            retriever.set_attribute(f"retrieval.documents.{n}.document.content", text)
                            retriever.set_attribute(f"retrieval.documents.{n}.document.score", round(1.0 - n / 10, 2))
                context = "\n".join(f"- {d}" for d in documents)
                reply = client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=[{"role": "system", "content": "Answer from the context."},
                              {"role": "user", "content": f"Question: {question}\nContext:\n{context}"}])
                root.set_attribute("output.value", reply.choices[0].message.content or "")
                trace_ids.append(format(root.get_span_context().trace_id, "032x"))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    return {"trace_ids": trace_ids}


def annotations(url: str, project: str) -> dict[str, Any]:
    client = Client(base_url=url, api_key=os.environ["PHOENIX_API_KEY"])
    roots = [s for s in client.spans.get_spans(project_identifier=project, limit=1000) if not s.get("parent_id")]
    notes = client.spans.get_span_annotations(span_ids=[s["context"]["span_id"] for s in roots],
                                              project_identifier=project)
    return {"roots": {s["context"]["trace_id"]: s["context"]["span_id"] for s in roots},
            "annotations": [{"id": a["id"], "span_id": a["span_id"], "name": a["name"], "kind": a["annotator_kind"],
                             "identifier": a["identifier"], **(a.get("result") or {})} for a in notes]}


def main() -> None:
    print(json.dumps({"ready": True, "versions": {name: version(name) for name in PACKAGES}}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            ask = json.loads(line)
            op = ask.pop("op")
            out = seed(**ask) if op == "seed" else annotations(**ask)
        except Exception:  # noqa: BLE001 - the test shows it
            out = {"error": traceback.format_exc()}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
