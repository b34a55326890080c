"""No import cycles in rageval_core, ui, app_pages or bench, counting every import statement (inside functions
and ``if TYPE_CHECKING:`` blocks too): a function-level import only hides a cycle from start-up, not from the
reader who has to understand both modules at once.

The graph is read from the source with ast (nothing is imported). ``from a import b`` points at the module
``a.b`` when there is one, else at ``a``; an import of a package points at its ``__init__``. A cycle is a
strongly connected component of more than one module; the failure names its modules and one loop through them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from tests.support.source_tree import PACKAGES, ROOT, parsed

# Cycles allowed to stay open: none (the CLI's evaluate <-> trust <-> trust_checks went with cli/evaluate_run.py
# and cli/trust_context.py). This list only shrinks: a listed cycle that is gone fails
# test_the_allow_list_only_holds_open_cycles, so it is removed.
ALLOWED_CYCLES: set[frozenset[str]] = set()


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def source_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    return {module_name(p, root): p for package in packages for p in sorted((root / package).rglob("*.py"))}


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules`` (an imported attribute names its module)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, tree: ast.Module, modules: Mapping[str, Path], *, is_package: bool) -> set[str]:
    """The modules of ``modules`` that ``tree`` imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(filter(None, (_known(alias.name, modules) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                hit = sub if sub in modules else _known(target, modules)
                if hit:
                    found.add(hit)
    found.discard(module)
    return found


def import_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    modules = source_modules(root, packages)
    return {name: imports_of(name, parsed(path), modules, is_package=path.name == "__init__.py")
            for name, path in modules.items()}


@cache
def repo_graph() -> dict[str, set[str]]:
    return import_graph()


def cycles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next((w for w in edges if w in graph), None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def loop_through(component: frozenset[str], graph: Mapping[str, Iterable[str]]) -> list[str]:
    """One closed path inside ``component``, from its first module back to it (breadth first)."""
    start = min(component)
    paths = {w: [start, w] for w in sorted(graph[start]) if w in component}
    frontier = list(paths)
    while start not in paths:
        nxt = []
        for node in frontier:
            for w in sorted(graph[node]):
                if w in component and w not in paths:
                    paths[w] = paths[node] + [w]
                    nxt.append(w)
        frontier = nxt
    return paths[start]


def describe(component: frozenset[str], graph: Mapping[str, Iterable[str]]) -> str:
    return f"{sorted(component)}: " + " -> ".join(loop_through(component, graph))


def test_cycle_finder_on_a_known_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}, "g": set()}
    assert sorted(map(sorted, cycles(graph))) == [["a", "b", "c"], ["d", "e"]]
    assert loop_through(frozenset({"a", "b", "c"}), graph) == ["a", "b", "c", "a"]


def test_function_level_relative_and_from_imports_all_count(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import leaf\n")
    (pkg / "sub" / "leaf.py").write_text("def f():\n    from pkg import top\n    return top\n")
    (pkg / "top.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.leaf import f\n")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph["pkg.sub"] == {"pkg.sub.leaf"}
    assert graph["pkg.sub.leaf"] == {"pkg.top"} and graph["pkg.top"] == {"pkg.sub.leaf"}
    assert cycles(graph) == [frozenset({"pkg.sub.leaf", "pkg.top"})]


def test_a_planted_bench_cycle_fails(tmp_path):
    """bench/ is read like the core: a cycle through a function-level import between bench scripts is found."""
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "__init__.py").write_text('"""benches"""\n')
    (bench / "fit.py").write_text("from bench.report import SEED\n")
    (bench / "report.py").write_text("SEED = 9\n\n\ndef main():\n    from bench import seeds\n    return seeds\n")
    (bench / "seeds.py").write_text("from bench.fit import SEED\n")
    graph = import_graph(tmp_path, ["bench"])
    assert [describe(c, graph) for c in cycles(graph)] == [
        "['bench.fit', 'bench.report', 'bench.seeds']: bench.fit -> bench.report -> bench.seeds -> bench.fit"]


def test_no_import_cycles():
    graph = repo_graph()
    found = [describe(c, graph) for c in cycles(graph) if c not in ALLOWED_CYCLES]
    assert found == [], "import cycles (move what both sides need into a module below them):\n" + "\n".join(found)


def test_the_allow_list_only_holds_open_cycles():
    open_cycles = set(cycles(repo_graph()))
    closed = [sorted(c) for c in ALLOWED_CYCLES if c not in open_cycles]
    assert closed == [], f"no longer a cycle, remove from ALLOWED_CYCLES: {closed}"
