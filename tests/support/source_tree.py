"""The project's own Python source, parsed once per test session for the tests that read the tree as a whole
(import cycles, module and function sizes)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rageval_core", "rageval_ui", "bench")


def source_files(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    return [p for package in packages for p in sorted((root / package).rglob("*.py"))]


@cache
def source_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(source_text(path), filename=str(path))
