"""What a command does before its first request (issue 14: start requests soon after the command).

The provider SDK's import starts on a background thread from the first line of ``main`` for the commands that
send requests; pandas (~0.4-0.7 s here) is not imported by anything a run needs before its first request.
No timing is asserted: the tests check which modules are imported, in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rageval_core.cli import prefetch

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "provider"),
    [
        (["evaluate", "d.json", "--provider", "openai", "--metrics", "faithfulness"], "openai"),
        (["--db", "x.sqlite", "evaluate", "d.json", "--provider=gemini"], "gemini"),
        (["trust", "d.json", "--provider", "openai-compatible"], "openai-compatible"),
        (["runs", "list", "--provider", "openai"], None),  # a command that sends nothing
        (["evaluate", "d.json"], None),  # no provider named: nothing guessed
        (["evaluate", "d.json", "--provider"], None),
        (["evaluate", "--provider", "openai", "--help"], None),  # help only prints
    ],
)
def test_the_provider_is_read_from_the_raw_arguments(argv, provider):
    assert prefetch.provider_of(argv) == provider


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_sdk_import_runs_on_a_background_thread_for_a_command_that_calls_a_provider():
    out = _fresh(
        "import sys\n"
        "from rageval_core.cli import prefetch\n"
        "assert prefetch.start(['runs', 'list']) is None\n"
        "t = prefetch.start(['evaluate', 'd.json', '--provider', 'openai-compatible'])\n"
        "t.join(240)\n"
        "print(t.name, 'rageval_core.llm.openai_provider' in sys.modules, 'rageval_core.embeddings.openai_embed' in sys.modules)\n"
    )
    assert out == "rageval-prefetch True True"


def test_nothing_a_run_needs_before_its_first_request_imports_pandas():
    out = _fresh(
        "import sys\n"
        "import rageval_core.cli.evaluate, rageval_core.run, rageval_core.analysis.export, rageval_core.providers.registry\n"
        "from rageval_core.cli import build_parser\n"
        "build_parser()\n"
        "print('pandas' in sys.modules)\n"
    )
    assert out == "False"


# What building the parser (and so every command, ``--help`` included) must not load: the runner, the store,
# the providers and their SDKs, the dataset readers and trace readers, numpy and pandas. Each comes with the
# command that needs it.
NOT_FOR_THE_PARSER = (
    "rageval_core.run", "rageval_core.store", "rageval_core.llm", "rageval_core.providers", "rageval_core.embeddings",
    "rageval_core.data.datasets", "rageval_core.data.traces.detect", "rageval_core.scoring.judges",
    "openai", "google.genai", "httpx", "httpx2", "numpy", "pandas",
)


def _loaded_after(code: str) -> list[str]:
    out = _fresh("import json, sys\n" + code + "print(json.dumps(sorted(sys.modules)))\n")
    loaded = json.loads(out.splitlines()[-1])
    return sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in NOT_FOR_THE_PARSER))


def test_building_the_parser_imports_neither_the_runner_nor_an_sdk():
    assert _loaded_after("from rageval_core.cli import build_parser\nbuild_parser()\n") == []


@pytest.mark.parametrize("argv", [["--help"], ["evaluate", "--provider", "openai", "--help"], ["import-traces", "--help"]])
def test_help_imports_neither_the_runner_nor_an_sdk(argv):
    code = (
        "import contextlib, io\n"
        "from rageval_core.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as shown:\n"
        f"    assert main({argv!r}) == 0\n"
        "assert 'usage:' in shown.getvalue()\n"
    )
    assert _loaded_after(code) == []


def test_evaluate_sends_its_first_request_before_importing_numpy_or_pandas(tmp_path):
    """The real command against the fake server: at the first connection to it, which heavy modules are loaded.
    numpy (the embeddings' vectors, the cosines) and pandas (the closing tables) come after; the SDK must be there."""
    from urllib.parse import urlsplit

    from rageval_core.testing.fake_llm import FakeLLMServer

    seen = tmp_path / "modules.json"
    with FakeLLMServer() as server:
        port = urlsplit(server.openai_base_url).port
        argv = ["rageval_core", "--db", str(tmp_path / "s.sqlite"), "evaluate", str(ROOT / "sample_data" / "ml_qa_ja.json"),
                "--provider", "openai-compatible", "--base-url", server.openai_base_url, "--model", "m",
                "--embedding-model", "e", "--metrics", "faithfulness,answer_relevancy", "--judge", "rubric5",
                "--no-cache", "--quiet", "--out", str(tmp_path / "out.json")]
        code = (
            "import json, os, runpy, socket, sys, threading\n"
            f"sys.path.insert(0, {str(ROOT)!r})\n"
            "real = socket.socket.connect\n"
            "first = threading.Lock()\n"
            "def connect(self, address):\n"
            f"    if isinstance(address, tuple) and address[1] == {port}:\n"
            "        first.acquire()  # the first connection writes and exits; the others wait for the exit\n"
            "        modules = {m: m in sys.modules for m in ('numpy', 'pandas', 'openai')}\n"
            f"        with open({str(seen) + '.tmp'!r}, 'w') as fh:\n"
            "            json.dump(modules, fh)\n"
            f"        os.replace({str(seen) + '.tmp'!r}, {str(seen)!r})\n"
            "        os._exit(0)\n"
            "    return real(self, address)\n"
            "socket.socket.connect = connect\n"
            f"sys.argv = {argv!r}\n"
            "runpy.run_module('rageval_core', run_name='__main__', alter_sys=True)\n"
        )
        env = dict(os.environ, OPENAI_API_KEY="sk-test-start", RAGEVAL_HOME=str(tmp_path / "home"))
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert seen.exists(), done.stderr[-2000:]
    assert json.loads(seen.read_text()) == {"numpy": False, "pandas": False, "openai": True}


def test_the_embeddings_warm_up_waits_for_the_first_request(monkeypatch):
    import threading

    from rageval_core.llm.transport import warm

    monkeypatch.setattr(warm, "_first_request", threading.Event())
    warmed = []
    monkeypatch.setattr(warm, "warm", lambda kind: warmed.append(kind))
    chat = threading.Thread(target=warm._warm_quietly, args=("chat",))
    chat.start()
    chat.join(60)
    assert warmed == ["chat"]  # the chat warm-up does the first request's own work: at once
    embeddings = threading.Thread(target=warm._warm_quietly, args=("embeddings",))
    embeddings.start()
    embeddings.join(0.3)
    assert embeddings.is_alive() and warmed == ["chat"]
    warm.request_sent()
    embeddings.join(60)
    assert warmed == ["chat", "embeddings"] and "numpy" in sys.modules
