"""Writes the Phoenix fixtures that a real Phoenix server gives back (never by hand): starts ``phoenix serve``
(arize-phoenix 20.26.1) on 127.0.0.1 with a throw-away working folder, sends it the spans of make_otel.py's
OpenInference LangChain and LlamaIndex apps over OTLP/HTTP, then reads them back five ways:

- ``rest_spans.json``: ``GET /v1/projects/default/spans`` (the REST page, ``{"data": [...], "next_cursor"}``);
- ``rest_otlpv1.json``: ``GET /v1/projects/default/spans/otlpv1`` (the span search in OTLP shape, snake_case);
- ``client_spans.json``: ``Client().spans.get_spans(project_identifier="default")``, the list as JSON;
- ``dataframe_records.json``: ``Client().spans.get_spans_dataframe(...).to_json(orient="records")`` (epoch ms);
- ``dataframe_iso.json``: the same with ``date_format="iso"``.

Run in a test-only environment (never a project dependency; make_otel.py's environment sends the spans)::

    python -m venv /work/venvs/phoenix && /work/venvs/phoenix/bin/pip install arize-phoenix==20.26.1
    /work/venvs/phoenix/bin/python tests/data/traces/make_phoenix.py [--otel-python /work/venvs/otel/bin/python]

Library versions go to ``phoenix/versions.json``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = ("openinference_langchain", "openinference_llamaindex")
SPANS = 49 + 26  # what make_otel.py's two cases send


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - 127.0.0.1 only
        return json.loads(response.read())


def wait_up(url: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            get(url)
            return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"Phoenix did not answer at {url} within {seconds:.0f} s")


def dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--otel-python", default="/work/venvs/otel/bin/python", help="make_otel.py's environment")
    parser.add_argument("--out", type=Path, default=HERE / "phoenix")
    args = parser.parse_args(argv)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "PHOENIX_WORKING_DIR": work, "PHOENIX_PORT": str(port), "PHOENIX_HOST": "127.0.0.1",
               "PHOENIX_GRPC_PORT": str(free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
        server = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=open(Path(work) / "server.log", "w"))  # noqa: SIM115
        try:
            wait_up(f"{base}/v1/projects")
            for case in CASES:
                subprocess.run([args.otel_python, str(HERE / "make_otel.py"), "--case", case, "--out", str(Path(work) / "sdk"),
                                "--otlp-endpoint", f"{base}/v1/traces"], check=True)
            deadline = time.monotonic() + 60
            while len(get(f"{base}/v1/projects/default/spans?limit=1000")["data"]) < SPANS and time.monotonic() < deadline:
                time.sleep(1)
            write(base, args.out)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


def write(base: str, out: Path) -> None:
    from phoenix.client import Client

    out.mkdir(parents=True, exist_ok=True)
    dump(out / "rest_spans.json", get(f"{base}/v1/projects/default/spans?limit=1000"))
    dump(out / "rest_otlpv1.json", get(f"{base}/v1/projects/default/spans/otlpv1?limit=1000"))
    client = Client(base_url=base)
    spans = client.spans.get_spans(project_identifier="default", limit=1000)
    dump(out / "client_spans.json", spans)
    frame = client.spans.get_spans_dataframe(project_identifier="default", limit=1000)
    (out / "dataframe_records.json").write_text(frame.to_json(orient="records", force_ascii=False) + "\n", encoding="utf-8")
    (out / "dataframe_iso.json").write_text(frame.to_json(orient="records", date_format="iso", force_ascii=False) + "\n",
                                            encoding="utf-8")
    versions = {"script": "tests/data/traces/make_phoenix.py", "python": sys.version.split()[0]}
    for name in ("arize-phoenix", "arize-phoenix-client", "arize-phoenix-otel", "pandas", "openinference-semantic-conventions"):
        versions[name] = importlib.metadata.version(name)
    versions["spans_from"] = "make_otel.py cases " + ", ".join(CASES) + " (versions in ../sdk/versions.json)"
    dump(out / "versions.json", versions)
    print(f"{len(spans)} spans from Phoenix → {out}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
