"""The UI layer stays thin: pages and rageval_ui/ call rageval_core, never an SDK, and hold no scoring logic.

Checked on the import graph (parsed with ast, nothing is executed): pages import only streamlit, pandas,
altair, rageval_ui.* and rageval_core.*; rageval_ui/ adds only the standard library; neither imports an LLM SDK, numpy or
the modules that compute scores (metric internals and scoring math); rageval_ui/app.py is the router and the
top-level app.py only calls it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "rageval_ui" / "app_pages").glob("*.py"))
UI_MODULES = sorted((ROOT / "rageval_ui").glob("*.py"))

PAGE_ALLOWED = {"__future__", "streamlit", "pandas", "altair", "rageval_ui", "rageval_core"}
SDKS = {"openai", "google", "anthropic", "httpx", "requests"}
# Score computation lives in these core modules; the UI may only reach them through registries and the runner.
SCORING_MODULES = (
    "rageval_core.scoring.metrics.scoring",
    "rageval_core.scoring.metrics.faithfulness",
    "rageval_core.scoring.metrics.answer_relevancy",
    "rageval_core.scoring.metrics.context_precision",
    "rageval_core.scoring.metrics.context_recall",
    "rageval_core.scoring.metrics.context_relevance",
    "rageval_core.scoring.metrics.answer_correctness",
    "rageval_core.scoring.metrics.claims",
    "rageval_core.offline",
    "rageval_core.offline.provider",
    "rageval_core.llm.openai_provider",
    "rageval_core.llm.gemini_provider",
)
# Not score computation: the offline judge's known misses as recorded words and figures (read from a JSON file),
# which the Trust page and the offline banner show.
NOT_SCORING = ("rageval_core.offline.limits",)
NUMERIC = {"numpy", "scipy", "sklearn"}


def imported_modules(path: Path) -> set[str]:
    """Every module name a file imports (absolute names; relative imports are resolved to their package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                names.add(f"{path.parent.name}.{node.module or ''}".rstrip("."))
            elif node.module:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def test_there_are_pages_and_ui_modules() -> None:
    assert PAGES, "pages/ holds no page"
    assert UI_MODULES, "ui/ holds no module"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_import_only_the_thin_layer(page: Path) -> None:
    tops = {_top(n) for n in imported_modules(page)}
    assert tops <= PAGE_ALLOWED, f"{page.name} imports {sorted(tops - PAGE_ALLOWED)}"


@pytest.mark.parametrize("module", [*PAGES, *UI_MODULES, ROOT / "app.py"], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_sdk_numeric_or_scoring_import(module: Path) -> None:
    names = imported_modules(module)
    assert not {_top(n) for n in names} & (SDKS | NUMERIC), f"{module.name} imports an SDK or numeric library"
    bad = sorted(n for n in names if n.startswith(SCORING_MODULES) and not n.startswith(NOT_SCORING))
    assert not bad, f"{module.name} reaches scoring internals directly: {bad}"


@pytest.mark.parametrize("module", UI_MODULES, ids=lambda p: p.name)
def test_ui_modules_use_only_stdlib_and_the_thin_layer(module: Path) -> None:
    tops = {_top(n) for n in imported_modules(module)}
    foreign = {t for t in tops - PAGE_ALLOWED if t not in sys.stdlib_module_names}
    assert not foreign, f"rageval_ui/{module.name} imports {sorted(foreign)}"


def test_app_is_a_router() -> None:
    router = ROOT / "rageval_ui" / "app.py"
    tops = {_top(n) for n in imported_modules(router)}
    assert tops <= {"__future__", "streamlit", "rageval_ui"}, f"rageval_ui/app.py imports {sorted(tops)}"
    assert "st.navigation(" in router.read_text(encoding="utf-8")
    assert {_top(n) for n in imported_modules(ROOT / "app.py")} == {"rageval_ui"}, "app.py only calls rageval_ui.app.main"


def test_no_streamlit_below_core() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "rageval_core").rglob("*.py")
        if "streamlit" in {_top(n) for n in imported_modules(p)}
    ]
    assert not offenders, f"streamlit imported inside the core: {offenders}"


def test_the_check_catches_a_bad_page(tmp_path: Path) -> None:
    """The guard itself works: an SDK import and a scoring import are both seen."""
    bad = tmp_path / "bad.py"
    bad.write_text("import openai\nfrom rageval_core.scoring.metrics.scoring import average_precision\n", encoding="utf-8")
    names = imported_modules(bad)
    assert "openai" in names
    assert any(n.startswith(SCORING_MODULES) for n in names)
