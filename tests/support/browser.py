"""Shared browser-test support: Debian's Chromium, `streamlit run app.py` on a free port, and the rule for a
missing browser (a skip with the reason locally, a failure under RAGEVAL_REQUIRE_E2E=1, as on CI)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def unavailable(reason: str) -> None:
    if os.environ.get("RAGEVAL_REQUIRE_E2E") == "1":
        pytest.fail(f"RAGEVAL_REQUIRE_E2E=1 but {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, deadline_s: float = 90.0) -> None:
    """Poll Streamlit's health endpoint until it answers ok (or the server dies)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"streamlit did not become healthy:\n{log.read_text(errors='replace')[-3000:]}")


def require_browser() -> None:
    """Chromium and the playwright package, or ``unavailable``."""
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is missing (apt-get install chromium fonts-noto-cjk)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("the playwright package is not installed (pip install -r requirements-dev.txt)")


@contextmanager
def streamlit_app(home: Path) -> Iterator[str]:
    """`streamlit run app.py` with state in ``home`` and no API key in its environment; yields its URL."""
    log = home / "streamlit.log"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(RAGEVAL_HOME=str(home), PYTHONUNBUFFERED="1")
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "minimal",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
