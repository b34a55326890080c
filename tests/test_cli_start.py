"""What a command does before its first request (issue 14: start requests soon after the command).

The provider SDK's import starts on a background thread from the first line of ``main`` for the commands that
send requests; pandas (~0.4-0.7 s here) is not imported by anything a run needs before its first request.
No timing is asserted: the tests check which modules are imported, in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rageval_core.cli import prefetch

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("argv", "provider"),
    [
        (["evaluate", "d.json", "--provider", "openai", "--metrics", "faithfulness"], "openai"),
        (["--db", "x.sqlite", "evaluate", "d.json", "--provider=gemini"], "gemini"),
        (["trust", "d.json", "--provider", "openai-compatible"], "openai-compatible"),
        (["runs", "list", "--provider", "openai"], None),  # a command that sends nothing
        (["evaluate", "d.json"], None),  # no provider named: nothing guessed
        (["evaluate", "d.json", "--provider"], None),
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
        "import rageval_core.cli.evaluate, rageval_core.runner, rageval_core.export, rageval_core.llm.registry\n"
        "from rageval_core.cli import build_parser\n"
        "build_parser()\n"
        "print('pandas' in sys.modules)\n"
    )
    assert out == "False"
