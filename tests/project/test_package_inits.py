"""Each package of rageval_core says what it is for and what it offers: a docstring and a literal ``__all__``
whose every name exists. A package whose ``__init__`` imports nothing lists every submodule, and the
packages below stay import-free, so importing one part of the core (the CLI's start-up) loads nothing else.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.source_tree import ROOT, parsed

CORE = ROOT / "rageval_core"
# Importing these runs nothing but their docstring and __all__ (keep it so: the CLI's start-up is measured).
# The top package is not here: its __getattr__ (core/lazy.py) imports each public name on first use, and
# tests/project/test_public_api.py checks that importing it loads nothing else.
IMPORT_FREE = {
    "rageval_core.analysis", "rageval_core.core", "rageval_core.data", "rageval_core.embeddings",
    "rageval_core.llm", "rageval_core.llm.transport", "rageval_core.offline", "rageval_core.rag",
    "rageval_core.scoring", "rageval_core.scoring.judges", "rageval_core.scoring.metrics", "rageval_core.store",
}


def packages() -> dict[str, Path]:
    return {".".join(init.parent.relative_to(ROOT).parts): init for init in sorted(CORE.rglob("__init__.py"))}


def declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            return list(ast.literal_eval(node.value))
    return None


def bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if node.name == "__getattr__":  # a lazy attribute (PEP 562) is named by a string inside it
                names.update(c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
                if isinstance(target, ast.Name) and target.id == "__getattr__" and node.value is not None:
                    # ``__getattr__ = lazy_attributes(...)``: the lazy names are strings in its arguments
                    names.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return names


def submodules(init: Path) -> set[str]:
    folder = init.parent
    return ({p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
            | {d.name for d in folder.iterdir() if (d / "__init__.py").is_file()})


def imports_anything(tree: ast.Module) -> bool:
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree))


def test_every_package_has_a_docstring_and_an_all_whose_names_exist():
    problems = []
    for name, init in packages().items():
        tree = parsed(init)
        if not ast.get_docstring(tree):
            problems.append(f"{name}: no docstring saying what the package is for")
        exported = declared_all(tree)
        if exported is None:
            problems.append(f"{name}: no __all__")
            continue
        missing = sorted(set(exported) - bound_names(tree) - submodules(init))
        if missing:
            problems.append(f"{name}: __all__ names what does not exist: {missing}")
        if len(exported) != len(set(exported)):
            problems.append(f"{name}: __all__ repeats a name")
    assert problems == []


def test_import_free_packages_stay_so_and_list_every_submodule():
    problems = []
    for name, init in packages().items():
        tree = parsed(init)
        if name in IMPORT_FREE and imports_anything(tree):
            problems.append(f"{name}: imports something (keep package imports cheap: import where used)")
        if not imports_anything(tree) and name != "rageval_core":
            unlisted = sorted(submodules(init) - set(declared_all(tree) or []))
            if unlisted:
                problems.append(f"{name}: __all__ leaves out {unlisted}")
    assert problems == []
    assert IMPORT_FREE <= set(packages())


def test_the_top_package_names_its_packages():
    """The top package's ``__all__`` is the public API (tests/project/test_public_api.py); its docstring names
    every package, so a reader of ``rageval_core`` still finds the parts."""
    doc = ast.get_docstring(parsed(CORE / "__init__.py")) or ""
    packages_here = {d.name for d in CORE.iterdir() if (d / "__init__.py").is_file()}
    assert {p for p in packages_here if f"``{p}``" not in doc} == set()
