"""The core's packages form layers: a package imports only packages below it (docs/architecture.md holds the
order and says what each layer is for). Every import counts, inside functions and ``if TYPE_CHECKING:`` blocks
too, as in the cycle test: a function-level import hides a dependency from start-up, not from the reader.

Packages on the same line of ``LAYERS`` may not import each other either (``cli`` and ``testing`` are two tops).
The UI (``rageval_ui``: its modules and pages) and ``bench`` sit above every layer of the core.
"""

from __future__ import annotations

from collections.abc import Mapping

from tests.project.test_import_cycles import import_graph, repo_graph

# Bottom first. Keep in step with the table in docs/architecture.md (test_the_docs_list_the_layers checks it).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("data",),
    ("store",),
    ("llm",),
    ("embeddings",),
    ("offline",),
    ("providers",),
    ("scoring",),
    ("run",),
    ("analysis",),
    ("views",),
    ("session",),
    ("rag",),
    ("testing", "cli"),
    ("__init__", "__main__"),  # rageval_core's own two loose files: the public API and `python -m rageval_core`
)
ABOVE_ALL = ("rageval_ui", "bench")

# Imports allowed to break the order: none. This list only shrinks.
ALLOWED: set[tuple[str, str]] = set()


def rank_of(package: str) -> int:
    for rank, line in enumerate(LAYERS):
        if package in line:
            return rank
    if package in ABOVE_ALL:
        return len(LAYERS)
    raise AssertionError(f"package {package!r} is in no layer: add it to LAYERS and docs/architecture.md")


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "rageval_core":
        return parts[0]
    return parts[1] if len(parts) > 1 else "__init__"


def violations(graph: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where a package imports one on its own line (not itself) or above it."""
    out = []
    for module, targets in graph.items():
        mine = package_of(module)
        for target in targets:
            theirs = package_of(target)
            if theirs == mine or (mine in ABOVE_ALL and theirs in ABOVE_ALL and mine != "rageval_core"):
                continue
            if rank_of(theirs) >= rank_of(mine) and mine not in ABOVE_ALL:
                out.append((module, target))
            elif mine in ABOVE_ALL and theirs in ABOVE_ALL and mine != theirs and mine == "rageval_ui":
                out.append((module, target))  # the shipped UI never imports the benchmarks
    return sorted(out)


def test_layer_checker_on_a_known_graph(tmp_path):
    pkg = tmp_path / "rageval_core"
    for sub in ("core", "store", "cli", "testing"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "low.py").write_text("def f():\n    from rageval_core.store import up\n")  # downward: wrong
    (pkg / "store" / "up.py").write_text("from rageval_core.core import low\n")  # upward: fine
    (pkg / "cli" / "a.py").write_text("from rageval_core.testing import b\n")  # sideways on one line: wrong
    (pkg / "testing" / "b.py").write_text("")
    found = violations(import_graph(tmp_path, ["rageval_core"]))
    assert found == [("rageval_core.cli.a", "rageval_core.testing.b"), ("rageval_core.core.low", "rageval_core.store.up")]


def test_every_package_sits_on_a_layer():
    for module in repo_graph():
        rank_of(package_of(module))


def test_packages_import_only_layers_below_them():
    found = [pair for pair in violations(repo_graph()) if pair not in ALLOWED]
    shown = "\n".join(f"{a} -> {b}" for a, b in found)
    assert found == [], "imports against the layer order (move what both need below them):\n" + shown


def test_the_allow_list_only_holds_real_violations():
    assert ALLOWED <= set(violations(repo_graph())), "no longer a violation, remove it from ALLOWED"


def test_the_docs_list_the_layers():
    from tests.support.source_tree import ROOT

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    order = [name for line in LAYERS[:-1] for name in line]
    positions = [text.find(f"| `{name}` |") for name in order]
    assert all(p >= 0 for p in positions), f"docs/architecture.md's layer table misses {[n for n, p in zip(order, positions) if p < 0]}"
    assert positions == sorted(positions, reverse=True), "docs/architecture.md lists the layers top first, in LAYERS order"
