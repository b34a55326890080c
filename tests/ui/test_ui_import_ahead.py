"""Every page's imports done ahead, once per process, after the first page (``read_ahead.import_pages``): the
first open of Compare then compiles no module it shares with no other page (0.15 s of its server time)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from rageval_ui import nav, read_ahead

ROOT = Path(__file__).resolve().parents[2]


def _bound_names(path: Path) -> set[str]:
    """The names a page's top-level import statements bind."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def test_only_a_pages_import_lines_run_ahead() -> None:
    for spec in nav.ALL:
        path = ROOT / spec.path
        namespace: dict[str, object] = {"__name__": "import_ahead_test"}
        exec(read_ahead.page_imports(path), namespace)  # noqa: S102 - the page's own import lines
        assert set(namespace) - {"__name__", "__builtins__"} == _bound_names(path), spec.path
    compare = read_ahead.page_imports(ROOT / nav.COMPARE.path)
    assert {"trust_compare", "judges_view", "svg"} <= set(compare.co_names)
    assert "title" not in compare.co_names and "stored_runs_or_stop" not in compare.co_names  # no page code


def test_a_new_process_imports_every_page_module_once_in_the_background() -> None:
    script = """
import json, sys
from rageval_ui import read_ahead
before = {m for m in ("rageval_ui.trust_compare", "rageval_ui.judges_view", "rageval_core.analysis.report.svg") if m in sys.modules}
thread = read_ahead.import_pages()
thread.join(120)
print(json.dumps({"before": sorted(before), "name": thread.name, "again": read_ahead.import_pages() is None,
                  "after": [m in sys.modules for m in ("rageval_ui.trust_compare", "rageval_ui.judges_view", "rageval_ui.testset",
                                                       "rageval_core.analysis.report.svg")]}))
"""
    env = {**os.environ, read_ahead.ENV: "1"}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] == []  # importing ui.read_ahead did not import the pages' modules itself
    assert seen["name"] == "rageval-import-pages" and seen["again"] and all(seen["after"])


def test_read_ahead_off_imports_nothing_ahead(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(read_ahead, "_imports", None)  # as in a new process
    monkeypatch.setenv(read_ahead.ENV, "0")
    assert read_ahead.import_pages() is None and read_ahead._imports is None
