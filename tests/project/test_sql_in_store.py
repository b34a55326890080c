"""The store is the only door to SQL: no SQL statement, no ``sqlite3`` and no store connection (``_conn``) outside
``rageval_core/store/``, in the core, the UI with its pages (``rageval_ui``), app.py and bench.

Read from the source with ast (nothing is imported). A SQL statement is a string literal (an f-string's literal
parts too) shaped like one: ``SELECT … FROM``, ``INSERT INTO``, ``UPDATE … SET``, ``DELETE FROM``, ``CREATE TABLE``
(index, view, trigger), ``ALTER TABLE``, ``DROP …``, ``PRAGMA x``, ``BEGIN``, ``COMMIT``, ``ROLLBACK``, ``VACUUM``.
Docstrings are prose and are not read. There is no allow-list: bench's probes of a store another process writes
go through ``store.probe``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "rageval_core" / "store"
SCANNED = [ROOT / "rageval_core", ROOT / "rageval_ui", ROOT / "bench", ROOT / "app.py"]

SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(TEMP\s+|TEMPORARY\s+|UNIQUE\s+)?(TABLE|INDEX|VIEW|TRIGGER)\b|\bALTER\s+TABLE\b"
    r"|\bDROP\s+(TABLE|INDEX|VIEW|TRIGGER)\b|\bPRAGMA\s+\w+|^\s*(BEGIN|COMMIT|ROLLBACK|VACUUM)\b"
)


def _files() -> list[Path]:
    out: list[Path] = []
    for place in SCANNED:
        found = [place] if place.is_file() else sorted(place.rglob("*.py"))
        out += [p for p in found if STORE not in p.parents]
    return out


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string nodes that are docstrings (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def _strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_the_scan_sees_the_places_it_guards() -> None:
    names = {p.relative_to(ROOT).parts[0] for p in _files()}
    assert {"rageval_core", "rageval_ui", "bench", "app.py"} <= names
    assert any(p.parent.name == "app_pages" for p in _files())
    assert SQL.search("SELECT id FROM runs") and SQL.search("INSERT OR REPLACE INTO t") and SQL.search("PRAGMA user_version")
    assert not SQL.search("select the rows from the table") and not SQL.search("Update the settings")


def test_no_sql_statement_outside_the_store() -> None:
    found = []
    for path in _files():
        for line, text in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            if SQL.search(text):
                found.append(f"{_where(path, line)}: {text.strip()[:70]!r}")
    assert found == [], "SQL outside rageval_core/store/ (put it behind a store function):\n" + "\n".join(found)


def test_no_sqlite3_or_store_connection_outside_the_store() -> None:
    found = []
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "sqlite3" for a in node.names):
                found.append(f"{_where(path, node.lineno)}: import sqlite3")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3":
                found.append(f"{_where(path, node.lineno)}: from sqlite3 import")
            elif isinstance(node, ast.Attribute) and node.attr == "_conn":
                found.append(f"{_where(path, node.lineno)}: ._conn")
            elif isinstance(node, ast.Name) and node.id in ("_conn", "sqlite3"):
                found.append(f"{_where(path, node.lineno)}: {node.id}")
    assert found == [], "database access outside rageval_core/store/:\n" + "\n".join(found)
