"""A real Arize Phoenix server for the round-trip tests, in its own test-only venv (Phoenix's ~150 dependencies
never enter the project's environment).

The venv is made once under ``$RAGEVAL_TEST_VENVS`` (default ``~/.cache/rageval-test-venvs``) with the pinned
versions below and pip's own cache, named by its pins (a changed pin makes a new one), and reused by every later
session; a lock keeps two sessions from installing at once. Where it cannot be made (no network, no index) the test
skips with the reason, a skip allow-listed in tests/support/skips.py; under ``RAGEVAL_REQUIRE_E2E=1`` (CI, set by
.ci/run) that is a failure instead.

``start`` runs ``python -m phoenix.server.main serve`` on 127.0.0.1 with a free HTTP and gRPC port, its database in a
temporary ``PHOENIX_WORKING_DIR``, telemetry off and authentication on: a random ``PHOENIX_ADMIN_SECRET`` (made for
this session, held in memory and in the server's environment only) is the bearer key the tests hand to the
workbench through ``PHOENIX_API_KEY``, so the key path is exercised against the real server. Beside it runs a worker
in the same venv (``phoenix_worker.py``: traces sent through the OpenTelemetry SDK and the OpenInference instrumentor,
annotations read back through ``phoenix.client``), started first so that its imports overlap the server's start.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from tests.support.external_venvs import ExternalVenv
from tests.support.external_venvs import venv_or_skip as external_venv_or_skip

# The versions the round trip was built and measured against (issue 35). openai and the OpenTelemetry exporter are
# pinned as pip resolved them beside Phoenix 20.26.1, so the install does not backtrack.
PINS = (
    "arize-phoenix==20.26.1",
    "arize-phoenix-client==3.5.0",
    "opentelemetry-sdk==1.45.2",
    "opentelemetry-exporter-otlp-proto-http==1.45.2",
    "openinference-instrumentation-openai==0.1.66",
    "openai==3.60.0",
)
INSTALL_TIMEOUT_S = 1500  # ~150 packages (grpcio, pyarrow, pandas, sqlalchemy, ...): minutes on a cold pip cache
START_TIMEOUT_S = 240  # first start runs the database migrations: ~40 s on a loaded 2-core machine
WORKER_SCRIPT = Path(__file__).with_name("phoenix_worker.py")


PHOENIX = ExternalVenv("phoenix", PINS, install_timeout_s=INSTALL_TIMEOUT_S)


def venv_or_skip() -> Path:
    """The Phoenix venv's python (made on first use by ``external_venvs``), or a skip / CI failure with the reason."""
    return external_venv_or_skip(PHOENIX)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _secret() -> str:
    """At least 32 characters with a digit and a lowercase letter, as Phoenix requires of its secrets."""
    return "k1" + secrets.token_hex(20)


@dataclass
class PhoenixServer:
    """A running Phoenix: its URL, the admin bearer key, and a worker running Phoenix's own code in the venv
    (``phoenix_worker.py``: seeding through the OpenTelemetry SDK, reading back through ``phoenix.client``)."""

    python: Path
    url: str
    api_key: str
    workdir: Path
    process: subprocess.Popen[bytes]
    worker: subprocess.Popen[str]
    log: Path  # the server's output; the worker's stderr is beside it in phoenix-worker.log
    started_s: float = 0.0  # from spawning the server and the worker to both being ready
    versions: dict[str, str] = field(default_factory=dict)  # what the worker runs (arize-phoenix, its client, ...)
    trace_ids: list[str] = field(default_factory=list)  # every trace seeded so far, in order
    seed_s: float = 0.0

    def call(self, op: str, timeout: float = 120, **kwargs: Any) -> Any:
        """One request to the worker; its JSON answer (an ``AssertionError`` with its traceback when it failed)."""
        assert self.worker.stdin is not None and self.worker.stdout is not None
        self.worker.stdin.write(json.dumps({"op": op, **kwargs}) + "\n")
        self.worker.stdin.flush()
        answer = _read_line(self.worker, timeout, f"the worker's answer to {op}", self.workdir)
        if "error" in answer:
            raise AssertionError(f"phoenix worker {op} failed:\n{answer['error']}")
        return answer

    def seed(self, project: str, rows: list[dict[str, Any]], openai_base_url: str) -> list[str]:
        """Send the rows as traces through the OpenTelemetry SDK and the OpenInference instrumentor; their ids."""
        began = time.monotonic()
        out = self.call("seed", endpoint=f"{self.url}/v1/traces", openai_base_url=openai_base_url, project=project,
                        rows=rows)
        self.seed_s += time.monotonic() - began
        self.trace_ids += out["trace_ids"]
        return list(out["trace_ids"])

    def annotations(self, project: str) -> dict[str, Any]:
        """The project's root spans by trace id and every annotation on them, read with Phoenix's own client."""
        return self.call("annotations", url=self.url, project=project)

    def stop(self) -> None:
        if self.worker.poll() is None:
            self.worker.kill()
            self.worker.wait(timeout=10)
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def _read_line(worker: subprocess.Popen[str], timeout: float, what: str, workdir: Path) -> Any:
    """The worker's next JSON line, waiting at most ``timeout`` seconds."""
    import selectors

    assert worker.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(worker.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise AssertionError(f"no {what} within {timeout:g} s")
    line = worker.stdout.readline()
    if not line:
        err = (workdir / "phoenix-worker.log").read_text(encoding="utf-8", errors="replace")[-3000:]
        raise AssertionError(f"the phoenix worker exited ({worker.poll()}) before {what}:\n{err}")
    return json.loads(line)


def start(python: Path, workdir: Path) -> PhoenixServer:
    """``phoenix serve`` on free ports with its database in ``workdir``, authentication on, and the worker beside it
    (their imports overlap); waits for /healthz and the worker's ready line."""
    port, grpc_port = free_port(), free_port()
    key = _secret()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(workdir / "phoenix"), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_ENABLE_AUTH": "true", "PHOENIX_SECRET": _secret(), "PHOENIX_ADMIN_SECRET": key,
           "PYTHONWARNINGS": "ignore"}
    env.pop("PHOENIX_API_KEY", None)
    log = workdir / "phoenix-server.log"
    began = time.monotonic()
    with open(workdir / "phoenix-worker.log", "wb") as worker_log:
        worker = subprocess.Popen([str(python), str(WORKER_SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=worker_log, text=True, env={**os.environ, "PHOENIX_API_KEY": key,
                                                                     "PYTHONWARNINGS": "ignore"}, cwd=workdir)
    with open(log, "wb") as out:
        process = subprocess.Popen([str(python), "-m", "phoenix.server.main", "serve"], stdout=out,
                                   stderr=subprocess.STDOUT, env=env, cwd=workdir, start_new_session=True)
    server = PhoenixServer(python, f"http://127.0.0.1:{port}", key, workdir, process, worker, log)
    try:
        _wait_healthy(server, began)
        server.versions = _read_line(worker, START_TIMEOUT_S, "the worker's ready line", workdir)["versions"]
    except BaseException:
        server.stop()
        raise
    server.started_s = time.monotonic() - began
    return server


def _wait_healthy(server: PhoenixServer, began: float) -> None:
    while time.monotonic() - began < START_TIMEOUT_S:
        if server.process.poll() is not None:
            tail = server.log.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise AssertionError(f"phoenix serve exited {server.process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise AssertionError(f"phoenix serve did not answer /healthz within {START_TIMEOUT_S} s (log: {server.log})")
