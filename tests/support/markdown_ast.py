"""What the Markdown-sink rule (tests/support/markdown_sinks.py) reads from the syntax tree: the values a name
is bound to in its scope, a scope's own nodes, parameters, and which names are numbers by their annotations."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

@dataclass
class Module:
    path: str  # relative to the root, with slashes
    name: str  # dotted
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]


def parse_module(rel: str, source: str) -> Module:
    """``rel`` (a path with slashes) parsed, with each node's parent."""
    tree = ast.parse(source, filename=rel)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    return Module(rel, rel.removesuffix(".py").replace("/", ".").removesuffix(".__init__"), tree, parents)


# Method names of built-in types: ``x.get(...)`` is never taken for a project function of the same name.
BUILTIN_METHODS = {n for kind in (str, dict, list, set, tuple) for n in dir(kind)}


class Each(ast.expr):
    """A collection handed where each element is a label; safe when every element is."""

    def __init__(self, collection: ast.expr) -> None:
        super().__init__()
        self.collection = collection
        self.lineno = collection.lineno
        self.col_offset = collection.col_offset


@dataclass(frozen=True)
class Imported:
    module: str
    name: str


NUMERIC_TYPES = {"int", "float", "bool"}


def numeric(annotation: ast.expr | None) -> bool:
    """``int``, ``float``, ``bool``, a union of them, optionally with None (which shows as "None")."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(annotation, ast.Name):
        return annotation.id in NUMERIC_TYPES
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return True
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return numeric(annotation.left) and numeric(annotation.right) and not (
            is_none(annotation.left) and is_none(annotation.right))
    return False


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def annotation(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> ast.expr | None:
    return next((a.annotation for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs] if a.arg == param),
                None)


@cache
def numeric_names(root: Path) -> tuple[set[str], set[str]]:
    """Attribute names that are numbers wherever the project defines them (class fields, ``self.x`` and
    properties in rageval_core and rageval_ui): ``state.test_looks`` is an int whatever ``state`` is; and function
    names every definition of which is annotated to return a number."""
    kinds: dict[str, bool] = {}
    functions: dict[str, bool] = {}

    def note(name: str, numeric: bool) -> None:
        kinds[name] = kinds.get(name, True) and numeric

    for package in ("rageval_core", "rageval_ui"):
        for path in (root / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            note(item.target.id, numeric(item.annotation))
                        elif isinstance(item, ast.Assign):
                            for target in item.targets:
                                if isinstance(target, ast.Name):
                                    note(target.id, False)
                        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                                isinstance(d, ast.Name) and d.id in ("property", "cached_property")
                                for d in item.decorator_list):
                            note(item.name, numeric(item.returns))
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
                    note(node.target.attr, numeric(node.annotation))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions[node.name] = functions.get(node.name, True) and numeric(node.returns)
                elif isinstance(node, (ast.Assign, ast.AugAssign)):
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        for sub in ast.walk(target):
                            if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                                note(sub.attr, False)
    return ({name for name, numeric in kinds.items() if numeric},
            {name for name, numeric in functions.items() if numeric and name not in BUILTIN_METHODS})


def called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


@cache
def own_nodes(scope: ast.AST) -> tuple[ast.AST, ...]:
    """Nodes of ``scope`` outside nested functions, lambdas and classes (kept: scopes are asked again and again)."""
    found = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return tuple(found)


def params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, ast.expr | None]]:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in zip(positional, defaults):
        if arg.arg not in ("self", "cls"):
            yield arg.arg, default
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        yield arg.arg, default


def param_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return names


@cache
def local_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = param_names(fn)
    for node in own_nodes(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def assigned(node: ast.AST, name: str) -> Iterator[ast.expr | None]:
    """What ``node`` binds to ``name``: the value, or None for a binding the rule cannot follow."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == name:
                yield node.value
            elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)) and any(
                    isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(target)):
                yield None  # unpacking
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
        yield node.value
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
        yield node.value
    elif isinstance(node, ast.NamedExpr) and node.target.id == name:
        yield node.value
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None and any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(item.optional_vars)):
                yield None
    elif isinstance(node, ast.ExceptHandler) and node.name == name:
        yield None
    elif isinstance(node, (ast.For, ast.AsyncFor)) and not isinstance(node.target, ast.Name) and any(
            isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.target)):
        yield from unpacked(node.target, node.iter, name)


def unpacked(target: ast.expr, iterable: ast.expr, name: str) -> Iterator[ast.expr | None]:
    """``for a, b in ((x, y), (z, w))``: the values ``name`` takes, when the loop runs over a literal of tuples."""
    position = next((i for i, e in enumerate(getattr(target, "elts", [])) if isinstance(e, ast.Name) and e.id == name),
                    None)
    rows = iterable.elts if isinstance(iterable, (ast.List, ast.Tuple)) else None
    if position is None or rows is None or not all(
            isinstance(r, ast.Tuple) and len(r.elts) == len(target.elts) for r in rows):  # type: ignore[attr-defined]
        yield None
        return
    for row in rows:
        yield row.elts[position]  # type: ignore[attr-defined]


@cache
def function_bindings(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> list[ast.expr | Imported | None]:
    found: list[ast.expr | Imported | None] = []
    for node in own_nodes(fn):
        found.extend(assigned(node, name))
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            found.append(None)
    return found


@cache
def module_bindings(tree: ast.Module, name: str, module_name: str = "") -> list[ast.expr | Imported | None]:
    found: list[ast.expr | Imported | None] = []
    for node in own_nodes(tree):
        found.extend(assigned(node, name))
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    found.append(Imported(absolute(node, module_name), alias.name))
        elif isinstance(node, ast.Import) and any((a.asname or a.name) == name for a in node.names):
            found.append(None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            found.append(None)
    return found


def absolute(node: ast.ImportFrom, module_name: str) -> str:
    if not node.level:
        return node.module or ""
    base = module_name.split(".")[: -node.level]
    return ".".join([*base, node.module] if node.module else base)
