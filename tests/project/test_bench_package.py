"""bench/ is a package the architecture tests can read: its modules import each other as ``bench.<name>`` (so the
cycle and layer tests see every edge; a script that put bench/ on sys.path and said ``import trust`` hid the
fit_offline -> trust -> trust_seeds -> fit_offline cycle), nothing under bench imports tests, and the scripts run
both ways: ``python -m bench.<name>`` and ``python bench/<name>.py``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.project.test_import_cycles import repo_graph
from tests.support.source_tree import ROOT, parsed

BENCH = ROOT / "bench"


def bench_files() -> list[Path]:
    return sorted(BENCH.rglob("*.py"))


def imported_names(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of every absolute import, at any depth (functions and ``if TYPE_CHECKING:`` too)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module))
    return out


def test_bench_is_a_package_with_a_docstring() -> None:
    assert ast.get_docstring(parsed(BENCH / "__init__.py"))


def test_nothing_under_bench_imports_tests() -> None:
    found = [f"{p.relative_to(ROOT)}:{line}: {name}" for p in bench_files() for line, name in imported_names(parsed(p))
             if name == "tests" or name.startswith("tests.")]
    assert found == [], "move what the bench needs into rageval_core/testing or bench/:\n" + "\n".join(found)


def test_bench_modules_import_each_other_by_package_name() -> None:
    names = {p.stem for p in BENCH.glob("*.py")} - {"__init__"}
    top_level = [f"{p.relative_to(ROOT)}:{line}: import {name}" for p in bench_files()
                 for line, name in imported_names(parsed(p)) if name.split(".")[0] in names]
    on_path = [f"{p.relative_to(ROOT)}: puts bench/ on sys.path" for p in bench_files()
               if 'ROOT / "bench"))' in p.read_text(encoding="utf-8")]
    assert top_level + on_path == [], "\n".join(top_level + on_path)


def test_the_import_graph_holds_the_bench_edges() -> None:
    graph = repo_graph()
    assert {"bench.fit_offline", "bench.trust"} <= graph["bench.trust_seeds"]
    assert "bench.trust" in graph["bench.fit_offline"] and "bench.trust" in graph["bench.annotators"]
    assert "bench.trust_seeds" not in graph["bench.trust"]  # the cycle's edge, gone: seeds is a bench of its own


def test_a_bench_runs_as_a_module_and_as_a_file(tmp_path: Path) -> None:
    as_module = subprocess.run([sys.executable, "-m", "bench.trust_seeds", "--help"], cwd=ROOT, capture_output=True,
                               text=True, timeout=120)
    as_file = subprocess.run([sys.executable, str(BENCH / "trust_seeds.py"), "--help"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    for done in (as_module, as_file):
        assert done.returncode == 0 and "--seeds" in done.stdout, done.stderr[-2000:]
