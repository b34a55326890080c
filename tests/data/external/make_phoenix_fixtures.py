"""Write Phoenix's helper frames with Phoenix itself (run inside a virtual environment with arize-phoenix, never the
project's; see docs/datasets.md "Files from other tools"):

    python -m venv /work/venvs/phoenix
    /work/venvs/phoenix/bin/pip install arize-phoenix==20.26.1
    /work/venvs/phoenix/bin/python tests/data/external/make_phoenix_fixtures.py

The script starts ``phoenix serve`` on 127.0.0.1 (free ports, a temporary working directory), sends one trace per
row of rows.py through the OpenTelemetry SDK's OTLP exporter with OpenInference attributes (a CHAIN root span with
input.value / output.value, a RETRIEVER child with retrieval.documents.N.document.content in rank order), then calls
``phoenix.client.helpers.spans.get_input_output_context`` and writes its frame as a user would save it:

- phoenix_input_output_context.csv     frame.to_csv()  (index context.span_id; context = passages joined by "\n\n")
- phoenix_input_output_context.jsonl   frame.reset_index().to_json(orient="records", lines=True, force_ascii=False)

Rows come back in the order Phoenix returns them; trace and span ids are random per run. Versions go to
versions.json under "phoenix".
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from rows import record_versions, source_rows  # noqa: E402

PROJECT = "rageval-fixtures"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"phoenix serve exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"phoenix did not answer {url} within {timeout:.0f} s")


def send_traces(endpoint: str) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"openinference.project.name": PROJECT}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    tracer = provider.get_tracer("rageval-fixtures")
    for row in source_rows():
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("input.value", row["question"])
            with tracer.start_as_current_span("retrieve") as retriever:
                retriever.set_attribute("openinference.span.kind", "RETRIEVER")
                retriever.set_attribute("input.value", row["question"])
                for i, text in enumerate(row["contexts"]):
                    retriever.set_attribute(f"retrieval.documents.{i}.document.content", text)
            root.set_attribute("output.value", row["answer"])
        time.sleep(0.01)  # distinct start times
    provider.shutdown()


def main() -> None:
    from phoenix.client import Client
    from phoenix.client.helpers.spans import get_input_output_context

    port, grpc = free_port(), free_port()
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "PHOENIX_WORKING_DIR": work, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc),
               "PHOENIX_HOST": "127.0.0.1", "PHOENIX_TELEMETRY_ENABLED": "false"}
        proc = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_up(base + "/healthz", proc)
            send_traces(base + "/v1/traces")
            client = Client(base_url=base)
            frame = None
            for _ in range(60):  # spans are written asynchronously after the export returns
                frame = get_input_output_context(client, project_name=PROJECT, timeout=30)
                if frame is not None and len(frame) == len(source_rows()):
                    break
                time.sleep(0.5)
            if frame is None or len(frame) != len(source_rows()):
                raise RuntimeError(f"Phoenix gave {0 if frame is None else len(frame)} rows, expected {len(source_rows())}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    frame.to_csv(HERE / "phoenix_input_output_context.csv")
    frame.reset_index().to_json(HERE / "phoenix_input_output_context.jsonl", orient="records", lines=True, force_ascii=False)
    record_versions("phoenix", {name: version(name) for name in
                                ("arize-phoenix", "arize-phoenix-client", "opentelemetry-sdk", "pandas")}
                    | {"python": sys.version.split()[0]})


if __name__ == "__main__":
    main()
