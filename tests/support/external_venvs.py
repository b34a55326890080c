"""Test-only virtual environments for other tools (ragas, DeepEval), never project dependencies: created once under
``$RAGEVAL_TEST_VENVS`` (default ``~/.cache/rageval-test-venvs``) with pinned versions and pip's own cache, then
reused by every test session (a venv is named by its pins, so a changed pin makes a new one).

Where a venv cannot be made (no network, no index), the test skips with the reason, a skip allow-listed in
tests/support/skips.py; under ``RAGEVAL_REQUIRE_E2E=1`` (CI, set by .ci/run) that is a failure instead, so CI never
passes without running the real libraries.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, one session at a time
    fcntl = None  # type: ignore[assignment]

INSTALL_TIMEOUT_S = 1200  # ragas resolves ~120 packages: ~3 min here with the pins below, longer on a cold pip cache


@dataclass(frozen=True)
class ExternalVenv:
    """One tool's venv: its pinned requirements and the environment its scripts run with (telemetry off)."""

    name: str
    pins: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    install_timeout_s: float = INSTALL_TIMEOUT_S  # each pip step's deadline

    @property
    def key(self) -> str:
        return hashlib.sha256("\n".join((sys.version.split()[0], *self.pins)).encode()).hexdigest()[:10]


# The versions the fixtures in tests/data/external were written with (their versions.json); openai pinned as pip
# resolved it beside these, so pip does not backtrack through every openai release.
RAGAS = ExternalVenv("ragas", ("ragas==0.4.3", "langchain-openai==1.8.1", "langchain-community==0.4.1", "openai==3.3.0",
                               "pandas==3.1.1"), {"RAGAS_DO_NOT_TRACK": "true"})
DEEPEVAL = ExternalVenv("deepeval", ("deepeval==4.3.1", "pandas==3.1.1"), {"DEEPEVAL_TELEMETRY_OPT_OUT": "YES"})


def venvs_root() -> Path:
    return Path(os.environ.get("RAGEVAL_TEST_VENVS") or Path.home() / ".cache" / "rageval-test-venvs").expanduser()


def _python(path: Path) -> Path:
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(venv: ExternalVenv) -> Path:
    """The venv's python, created and installed on first use (a lock keeps two sessions from installing at once);
    ``RuntimeError`` saying what failed."""
    root = venvs_root()
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{venv.name}-{venv.key}"
    ready = path / "rageval-ready.json"
    with open(root / f"{venv.name}.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.is_file() and _python(path).is_file():
            return _python(path)
        steps = [[sys.executable, "-m", "venv", "--clear", str(path)],
                 [str(_python(path)), "-m", "pip", "install", "--disable-pip-version-check", *venv.pins]]
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=venv.install_timeout_s)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise RuntimeError(f"{' '.join(step[:4])} …: {exc}") from None
            if done.returncode != 0:
                tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
                raise RuntimeError(f"{' '.join(step[:4])} … exited {done.returncode}:\n{tail}")
        ready.write_text(json.dumps({"pins": list(venv.pins)}), encoding="utf-8")
    return _python(path)


def venv_or_skip(venv: ExternalVenv) -> Path:
    """``ensure_venv``, or a skip with the reason (a failure under ``RAGEVAL_REQUIRE_E2E=1``, as in CI)."""
    try:
        return ensure_venv(venv)
    except RuntimeError as exc:
        reason = f"cannot make the test-only {venv.name} venv under {venvs_root()} ({', '.join(venv.pins)}): {exc}"
        if os.environ.get("RAGEVAL_REQUIRE_E2E") == "1":
            pytest.fail(f"RAGEVAL_REQUIRE_E2E=1 but {reason}")
        pytest.skip(reason)


def run_in(python: Path, venv: ExternalVenv, script: str, *args: str, timeout: float = 300) -> object:
    """Run ``script`` with the venv's python (its env, telemetry off) and return the JSON it prints last."""
    env = {**os.environ, **venv.env, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([str(python), "-c", script, *args], capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise AssertionError(f"{venv.name} script exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
