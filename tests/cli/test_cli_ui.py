"""``rageval ui``: the installed workbench starts on 127.0.0.1 from any folder, with the shipped settings."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rageval_core.cli import main
from rageval_core.cli import ui as ui_command
from bench.browser import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_the_clone_reads_the_same_settings_file():
    link = ROOT / ".streamlit" / "config.toml"
    assert link.resolve() == (ROOT / "rageval_ui" / "streamlit.toml").resolve()


def test_shipped_settings_become_flags_and_the_users_win(tmp_path):
    config = tmp_path / "s.toml"
    config.write_text('[server]\naddress = "127.0.0.1"\nenableCORS = true\nmaxUploadSize = 200\n', encoding="utf-8")
    flags = ui_command.setting_flags(config, ["--server.address=0.0.0.0"])
    assert flags == ["--server.enableCORS=true", "--server.maxUploadSize=200"]
    command = ui_command.streamlit_command(ROOT / "rageval_ui", ["--server.port", "8600"])
    assert command[1:5] == ["-m", "streamlit", "run", str(ROOT / "rageval_ui" / "app.py")]
    assert "--server.address=127.0.0.1" in command and command[-2:] == ["--server.port", "8600"]


def test_without_the_ui_package_it_says_how_to_install(monkeypatch, capsys):
    monkeypatch.setattr(ui_command, "ui_package_dir", lambda: None)
    assert main(["ui"]) == 2
    assert 'pip install "rageval-workbench[ui]"' in capsys.readouterr().err


def test_help_lists_the_command(capsys):
    assert main(["ui", "--help"]) == 0
    assert "streamlit run" in capsys.readouterr().out


def _clean_copy(dest: Path) -> Path:
    """The tracked files only, as a clean clone has them (no build/ or .egg-info left in the checkout)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, listed):
        src, out = ROOT / name.decode(), dest / name.decode()
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            out.symlink_to(os.readlink(src))
        elif src.is_file():
            out.write_bytes(src.read_bytes())
    return dest


def _listening_on(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port`` (IPv4, from /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        host, _, hex_port = local.partition(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(".".join(str(int(host[i:i + 2], 16)) for i in (6, 4, 2, 0)))
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from Linux's /proc/net/tcp")
def test_pip_install_then_rageval_ui_serves_the_workbench_on_loopback(tmp_path):
    """A wheel built from the tracked files into a fresh virtual environment (its dependencies seen from this one,
    so the test does not download Streamlit again), then `rageval ui` from an empty folder."""
    source = _clean_copy(tmp_path / "clone")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(source)],
                         capture_output=True, text=True, timeout=240)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([str(venv / "bin" / "rageval"), "ui", "--server.port", str(port), "--server.headless", "true"],
                            cwd=empty, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        health = ""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and health != "ok":
            try:
                health = urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read().decode()
            except OSError:
                time.sleep(0.5)
        if health != "ok":
            proc.terminate()
            pytest.fail("the workbench did not start:\n" + proc.communicate(timeout=20)[0][-3000:])
        assert _listening_on(port) == {"127.0.0.1"}
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
        assert "<div id=\"root\">" in page or "streamlit" in page.lower()
        shown = subprocess.run([str(venv / "bin" / "python"), "-c", "import rageval_ui, sys; print(rageval_ui.__file__)"],
                               cwd=empty, env=env, capture_output=True, text=True, check=True).stdout
        assert str(venv) in shown, "the UI must come from the installed package, not the checkout"
        proc.terminate()  # SIGTERM to `rageval ui` itself stops the server (a child it started outlived it)
        proc.wait(timeout=20)
        deadline = time.monotonic() + 10
        while _listening_on(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _listening_on(port), "the workbench kept serving after `rageval ui` was terminated"
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=20)
