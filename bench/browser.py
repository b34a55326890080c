"""The workbench in a real browser, for the browser bench (bench/browser_compare.py) and the browser tests
(tests/e2e): Debian's Chromium, `streamlit run app.py` on a free port with its own state folder, and the in-page
timer both measure Compare with (``SHOWN``). The tests' rule for a missing browser (a skip locally, a failure in
CI) stays in tests/support/browser.py."""

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


ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


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


# In the page: after the next click (or, with ``at_load``, from the navigation's start), the time of the first
# frame drawn once the document has a heading with ``text``, an element matching ``last`` and ``metric`` as the
# first metric's value. A MutationObserver checks on every change; nothing polls.
SHOWN = """([text, last, metric, atLoad]) => {
  window.__click = atLoad ? 0 : null; window.__shown = null;
  const ok = () => {
    if (!document.querySelector(last)) return false;
    const m = document.querySelector('[data-testid=stMetricValue]');
    if (!m || m.textContent.trim() !== metric) return false;
    return [...document.querySelectorAll('[data-testid=stHeadingWithActionElements]')].some(h => h.textContent.includes(text));
  };
  if (!atLoad) window.addEventListener('click', e => { if (window.__click === null) window.__click = e.timeStamp; },
                                      {capture: true, once: true});
  const watch = () => {
    const obs = new MutationObserver(() => {
      if (window.__click !== null && window.__shown === null && ok()) {
        obs.disconnect(); requestAnimationFrame(ts => { window.__shown = ts; });
      }
    });
    obs.observe(document.documentElement, {childList: true, subtree: true, characterData: true});
  };
  if (document.documentElement) watch(); else document.addEventListener('readystatechange', watch, {once: true});
}"""
