"""Types are checked: mypy over rageval_core reports nothing (the configuration is pyproject.toml's [tool.mypy];
.ci/run runs the same check before pytest), core/, store/ and run/ are checked strictly, and where a parameter that
holds one of the core's objects is still typed ``Any`` (a seam between packages), a comment on its line says why.

The mypy test runs here too so that the README's test command (``python -m pytest``) catches a type error on a
developer's machine as CI does; it skips, saying so, where mypy is not installed (requirements-dev.txt pins it).
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize
import tomllib
from pathlib import Path

import pytest

from tests.support.source_tree import ROOT, source_files

STRICT_PACKAGES = ["rageval_core.core.*", "rageval_core.store.*", "rageval_core.run.*"]
STRICT_FLAGS = ("disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls", "disallow_untyped_defs",
                "disallow_incomplete_defs", "check_untyped_defs", "disallow_untyped_decorators", "warn_return_any",
                "no_implicit_reexport", "extra_checks")
# Parameter names that hold one of the core's objects (a store, a run, a dataset, a configuration ...): typed
# ``Any``, such a parameter is a seam the checker cannot see through.
SEAM_NAMES = {"store", "dataset", "cfg", "config", "spec", "run", "llm", "embedder", "samples", "sample", "result",
              "results", "report", "est", "estimate", "snap", "progress", "info", "scorer", "scorers", "view", "loaded",
              "ws", "judge", "rows", "labels"}


def test_mypy_reports_no_error() -> None:
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (pip install -r requirements-dev.txt); .ci/run checks the types")
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_core_store_and_run_are_strict() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["files"] == ["rageval_core"]
    strict = [o for o in config["overrides"] if o["module"] == STRICT_PACKAGES]
    assert len(strict) == 1 and all(strict[0].get(flag) is True for flag in STRICT_FLAGS), strict
    requirements = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
    assert "\nmypy==" in requirements
    assert "python -m mypy" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _comment_lines(source: str) -> set[int]:
    return {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT}


def _is_any(node: ast.expr | None) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (isinstance(node, ast.Attribute) and node.attr == "Any")


def seams_without_a_reason(root: Path = ROOT, packages: tuple[str, ...] = ("rageval_core", "rageval_ui")) -> list[str]:
    """``file:line: function(name: Any)`` of each seam parameter typed Any with no comment on its line or the def's."""
    found = []
    for path in source_files(root, packages):
        source = path.read_text(encoding="utf-8")
        comments = _comment_lines(source)
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for arg in args:
                if arg.arg in SEAM_NAMES and _is_any(arg.annotation) and not (
                        comments & {arg.lineno, node.lineno}):
                    found.append(f"{path.relative_to(root)}:{arg.lineno}: {node.name}({arg.arg}: Any)")
    return found


def test_every_any_at_a_seam_says_why() -> None:
    found = seams_without_a_reason()
    assert found == [], ("type these with the core's own types (under ``if TYPE_CHECKING:`` where importing costs), "
                         "or say on the line why Any:\n" + "\n".join(found))


def test_the_seam_rule_finds_an_untyped_seam(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("from typing import Any\n\n\ndef f(store: Any, other: Any) -> None:\n    pass\n\n\n"
                              "def g(store: Any) -> None:  # Any: a duck-typed store double\n    pass\n")
    assert seams_without_a_reason(tmp_path, ("pkg",)) == ["pkg/a.py:4: f(store: Any)"]
