"""Where text reaches a Streamlit call that renders Markdown, and whether the rule proves it safe.

Streamlit renders Markdown in st.markdown / caption / write / the alerts / toast / headers, in every widget label,
``help=`` tooltip and radio caption, in expander, popover, status and tab labels, in metric labels and in the
options of radio, pills and segmented_control. Text from data, a model or a user reaches one of those only through
``md_escape`` (or ``md_code`` / ``md_link``, rageval_ui/safe_text.py). The scan proves an argument safe when it is:

- a literal; ``md_escape(...)``, ``md_code(...)``; ``md_link(label, url)`` with a safe label;
- ``t(key, **kw)`` / ``t_opt(key, default, **kw)`` with every keyword (and the default) safe: the catalogue is
  ours (tests/ui/test_i18n.py keeps placeholders out of code spans, where no escape works);
- a number: ``len`` / ``int`` / ``float`` / ``round`` / ``sum`` / ``abs`` of anything, an f-string field with
  a numeric format (``{x:.3f}``, ``{n:,}``, ``{v:g}``, ``{s:.0%}``), which raises on text; a parameter, a call or an
  attribute annotated ``int`` / ``float`` / ``bool`` (an attribute only when every class field, ``self.`` attribute
  and property of that name in rageval_core and rageval_ui is annotated so);
- f-strings, ``+``, ``a if c else b``, ``a or b`` and ``sep.join(...)`` of safe parts;
- a name every binding of which is safe (local, module level, or imported from another project module); a loop or
  comprehension variable over a safe collection;
- a call of a project function every ``return`` of which is safe; a parameter every caller passes safely (and
  whose function is never handed around as a value, so every caller is seen).

Anything else is reported with its file, line and source: a new page that shows data unescaped fails the test.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.markdown_ast import (
    BUILTIN_METHODS, Each, Imported, Module, parse_module, annotation, called_name, function_bindings, local_names, module_bindings,
    numeric, numeric_names, own_nodes, param_names, params,
)

# Calls whose first positional argument (the body or label) Streamlit renders as Markdown.
FIRST_ARG = {
    "markdown", "caption", "info", "warning", "error", "success", "toast", "title", "header", "subheader",
    "expander", "popover", "status", "spinner", "metric", "button", "download_button", "link_button", "checkbox",
    "toggle", "radio", "selectbox", "multiselect", "slider", "select_slider", "text_input", "number_input",
    "text_area", "date_input", "time_input", "file_uploader", "color_picker", "pills", "segmented_control",
    "form_submit_button", "feedback",
}
ALL_ARGS = {"write"}  # every positional argument (strings become Markdown)
LIST_ARG = {"tabs"}  # a list of labels
KEYWORDS = {"body", "label", "help", "text"}  # page_link(label=), progress(text=), any widget's help=
LIST_KEYWORDS = {"captions"}  # radio captions
MARKDOWN_OPTIONS = {"radio", "pills", "segmented_control"}  # options (or format_func's result) drawn as Markdown
SINKS = FIRST_ARG | ALL_ARGS | LIST_ARG | {"page_link", "progress"}

ESCAPERS = {"md_escape", "md_code"}
CATALOGUE = {"t": 1, "t_opt": 2}  # name → positional arguments before the keywords (t_opt's second is its default)
NUMERIC_CALLS = {"len", "int", "float", "round", "sum", "abs"}
NUMERIC_SPECS = tuple("dfFgGeE%n,")

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    call: str
    source: str  # the whole argument: the allow-list's key
    parts: tuple[str, ...] = ()  # the pieces of it the rule could not prove safe

    def __str__(self) -> str:
        unsafe = f"  (unproven: {' | '.join(self.parts)})" if self.parts and self.parts != (self.source,) else ""
        return f"{self.path}:{self.line}: st.{self.call}(...) gets {self.source}{unsafe}"


class Scanner:
    """The rule over a set of modules (rageval_ui and the modules it imports constants from)."""

    def __init__(self, root: Path, packages: tuple[str, ...] = ("rageval_ui",), extra: dict[str, str] | None = None):
        self.root = root
        self.modules: dict[str, Module] = {}
        self.readonly: dict[str, Module | None] = {}
        for package in packages:
            for path in sorted((root / package).rglob("*.py")):
                rel = path.relative_to(root).as_posix()
                self._add(rel, path.read_text(encoding="utf-8"))
        for rel, source in (extra or {}).items():
            self._add(rel, source)
        self.functions: dict[str, list[tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef]]] = {}
        self.calls: dict[str, list[tuple[Module, ast.Call]]] = {}
        self.handed_around: set[str] = set()
        for module in self.modules.values():
            for node in ast.walk(module.tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions.setdefault(node.name, []).append((module, node))
                elif isinstance(node, ast.Call):
                    name = called_name(node)
                    if name:
                        self.calls.setdefault(name, []).append((module, node))
            for node in ast.walk(module.tree):  # a function used as a value (callback, format_func): callers unseen
                if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                    parent = module.parents.get(node)
                    name = node.id if isinstance(node, ast.Name) else node.attr
                    if name in self.functions and not (isinstance(parent, ast.Call) and parent.func is node):
                        self.handed_around.add(name)
        self.numeric_attributes, numeric_functions = numeric_names(root)
        self.safe_returns: set[str] = set(numeric_functions)
        self.safe_params: set[tuple[str, str]] = {
            (name, a.arg) for name, defs in self.functions.items() for _, f in defs
            for a in [*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs]
            if numeric(a.annotation) and all(numeric(annotation(g, a.arg)) for _, g in defs)}
        self._fixpoint()

    def _add(self, rel: str, source: str) -> None:
        module = parse_module(rel, source)
        self.modules[module.name] = module

    # -- the fixpoint over function returns and parameters ------------------------------------------------------
    def _fixpoint(self) -> None:
        while True:
            before = (len(self.safe_returns), len(self.safe_params))
            for name, defs in self.functions.items():
                if name not in self.safe_returns and all(self._returns_safe(m, f) for m, f in defs):
                    self.safe_returns.add(name)
                if name in self.handed_around:
                    continue
                for module, fn in defs:
                    for param, default in params(fn):
                        if (name, param) not in self.safe_params and self._callers_safe(name, fn, param, default, module):
                            self.safe_params.add((name, param))
            if (len(self.safe_returns), len(self.safe_params)) == before:
                return

    def _returns_safe(self, module: Module, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        returns = [n for n in own_nodes(fn) if isinstance(n, ast.Return)]
        values = [r.value for r in returns if r.value is not None]
        return bool(values) and all(self.safe(module, v) for v in values)

    def _callers_safe(self, name: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str,
                      default: ast.expr | None, def_module: Module) -> bool:
        calls = self.calls.get(name, [])
        if not calls:
            return False
        positional = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        offset = 1 if positional and positional[0] in ("self", "cls") else 0
        for module, call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return False
            given = next((k.value for k in call.keywords if k.arg == param), None)
            if given is None and param in positional:
                index = positional.index(param) - (offset if isinstance(call.func, ast.Attribute) else 0)
                if 0 <= index < len(call.args):
                    given = call.args[index]
            if given is None:
                if default is None or not self.safe(def_module, default):
                    return False
            elif not self.safe(module, given):
                return False
        return True

    # -- the rule -------------------------------------------------------------------------------------------------
    def safe(self, module: Module, node: ast.expr, seen: frozenset[tuple[int, str]] = frozenset()) -> bool:
        """Whether ``node`` is text the rule proves safe to hand to a Markdown renderer."""
        if isinstance(node, Each):
            return self._iterable_safe(module, node.collection, seen)
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.JoinedStr):
            return all(isinstance(v, ast.Constant) or self._field_safe(module, v, seen) for v in node.values)
        if isinstance(node, ast.BinOp):
            return self.safe(module, node.left, seen) and self.safe(module, node.right, seen)
        if isinstance(node, ast.IfExp):
            return self.safe(module, node.body, seen) and self.safe(module, node.orelse, seen)
        if isinstance(node, ast.BoolOp):
            return all(self.safe(module, v, seen) for v in node.values)
        if isinstance(node, ast.Call):
            return self._call_safe(module, node, seen)
        if isinstance(node, ast.Name):
            return self._name_safe(module, node, seen)
        if isinstance(node, ast.Attribute):
            return node.attr in self.numeric_attributes or self._module_constant_safe(module, node, seen)
        if isinstance(node, ast.Subscript):
            return self._mapping_values_safe(module, node.value, seen)
        return False

    def _module_constant_safe(self, module: Module, node: ast.Attribute, seen: frozenset) -> bool:
        """``data.QUICK_ROWS``: a constant of a project module imported under that name."""
        if not isinstance(node.value, ast.Name):
            return False
        for binding in module_bindings(module.tree, node.value.id, module.name):
            if isinstance(binding, Imported):
                target = self._module(f"{binding.module}.{binding.name}")
                if target is not None:
                    return self._imported_safe(Imported(target.name, node.attr), seen)
        return False

    def _resolved(self, module: Module, node: ast.Name) -> list[tuple[Module, ast.expr]] | None:
        """The values bound to ``node`` (following imports into project modules), or None when one cannot be
        followed."""
        bindings = self._bindings(module, node)
        if not bindings:
            return None
        found: list[tuple[Module, ast.expr]] = []
        for value in bindings:
            while isinstance(value, Imported):
                source = self._module(value.module)
                if source is None:
                    return None
                values = module_bindings(source.tree, value.name, source.name)
                if len(values) != 1:
                    return None
                module, value = source, values[0]
            if value is None:
                return None
            found.append((module, value))
        return found

    def unproven(self, module: Module, node: ast.expr) -> Iterator[ast.expr]:
        """The smallest parts of an unsafe ``node`` that make it so (for the message)."""
        parts: list[ast.expr] = []
        if isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.FormattedValue) and not self._field_safe(module, v, frozenset())]
            parts = [p.value for p in parts]  # type: ignore[attr-defined]
        elif isinstance(node, (ast.BinOp, ast.IfExp, ast.BoolOp)):
            children = ([node.left, node.right] if isinstance(node, ast.BinOp) else [node.body, node.orelse]
                        if isinstance(node, ast.IfExp) else node.values)
            parts = [c for c in children if not self.safe(module, c)]
        elif isinstance(node, ast.Call) and called_name(node) in CATALOGUE:
            parts = [k.value for k in node.keywords if not self.safe(module, k.value)]
            parts += [a for a in node.args[1:] if not self.safe(module, a)]
        elif isinstance(node, ast.Call) and called_name(node) == "join" and isinstance(node.func, ast.Attribute) \
                and isinstance(node.args[0], (ast.ListComp, ast.GeneratorExp)):
            parts = [node.args[0].elt]
        if not parts:
            yield node
            return
        for part in parts:
            yield from self.unproven(module, part)

    def _field_safe(self, module: Module, field: ast.FormattedValue, seen: frozenset) -> bool:
        if field.conversion not in (-1, None):  # !r / !s / !a: a repr of data is still data
            return False
        spec = field.format_spec
        if spec is not None and all(isinstance(v, ast.Constant) for v in spec.values):
            text = "".join(str(v.value) for v in spec.values)
            if text.endswith(NUMERIC_SPECS):
                return True
        return self.safe(module, field.value, seen)

    def _call_safe(self, module: Module, call: ast.Call, seen: frozenset) -> bool:
        name = called_name(call)
        if name in ESCAPERS:
            return True
        if name == "md_link":
            return bool(call.args) and self.safe(module, call.args[0], seen)
        if name in CATALOGUE:
            n = CATALOGUE[name]
            return (all(k.arg is not None and self.safe(module, k.value, seen) for k in call.keywords)
                    and all(self.safe(module, a, seen) for a in call.args[1:n]) and len(call.args) <= n)
        if name in NUMERIC_CALLS and isinstance(call.func, ast.Name):
            return True
        if name == "join" and isinstance(call.func, ast.Attribute) and len(call.args) == 1:
            return self.safe(module, call.func.value, seen) and self._iterable_safe(module, call.args[0], seen)
        return name in self.safe_returns and name not in BUILTIN_METHODS

    def _iterable_safe(self, module: Module, node: ast.expr, seen: frozenset) -> bool:
        """A collection whose every element is safe."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return all(self.safe(module, e, seen) for e in node.elts)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.safe(module, node.elt, seen)
        if isinstance(node, ast.Dict):  # iterating a dict gives its keys
            return all(k is not None and self.safe(module, k, seen) for k in node.keys)
        if isinstance(node, ast.DictComp):
            return self.safe(module, node.key, seen)
        if isinstance(node, ast.Call) and called_name(node) in ("list", "tuple", "sorted", "reversed") \
                and len(node.args) == 1 and isinstance(node.func, ast.Name):
            return self._iterable_safe(module, node.args[0], seen)
        if isinstance(node, ast.Name):
            loop = self._loop_binding(module, node)
            if loop is not None:
                return False  # a collection taken from a collection: not followed
            resolved = self._resolved(module, node)
            keys, _ = self._mutations(module, node)
            return resolved is not None and all(self._iterable_safe(m, b, seen) for m, b in resolved) \
                and all(self.safe(module, k, seen) for k in keys)
        return False

    def _mutations(self, module: Module, node: ast.Name) -> tuple[list[ast.expr], list[ast.expr]]:
        """What the scope adds to the collection named ``node`` after binding it: ``name[k] = v`` gives a key and a
        value, ``name.append(x)`` / ``add`` / ``insert`` an element (a key), ``extend`` / ``update`` something
        the rule cannot follow (returned as the expression itself, which is not safe)."""
        scope = self._scope(module, node)
        keys: list[ast.expr] = []
        values: list[ast.expr] = []
        for item in own_nodes(scope):
            if isinstance(item, ast.Subscript) and isinstance(item.ctx, ast.Store) and \
                    isinstance(item.value, ast.Name) and item.value.id == node.id:
                keys.append(item.slice)
                parent = module.parents.get(item)
                values.append(parent.value if isinstance(parent, ast.Assign) else item)
            elif isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) and \
                    isinstance(item.func.value, ast.Name) and item.func.value.id == node.id:
                if item.func.attr in ("append", "add") and item.args:
                    keys.append(item.args[0])
                elif item.func.attr == "insert" and len(item.args) == 2:
                    keys.append(item.args[1])
                elif item.func.attr in ("extend", "update", "setdefault", "__setitem__"):
                    keys.append(item)
                    values.append(item)
        return keys, values

    def _mapping_values_safe(self, module: Module, node: ast.expr, seen: frozenset) -> bool:
        if isinstance(node, ast.Dict):
            return all(self.safe(module, v, seen) for v in node.values)
        if isinstance(node, ast.DictComp):
            return self.safe(module, node.value, seen)
        if isinstance(node, ast.Name):
            resolved = self._resolved(module, node)
            _, values = self._mutations(module, node)
            return resolved is not None and all(self._mapping_values_safe(m, b, seen) for m, b in resolved) \
                and all(self.safe(module, v, seen) for v in values)
        if isinstance(node, ast.Call):  # a project function that returns a mapping of safe values
            name = called_name(node)
            defs = self.functions.get(name or "", [])
            if not defs or name in BUILTIN_METHODS:
                return False
            for def_module, fn in defs:
                returns = [r.value for r in own_nodes(fn) if isinstance(r, ast.Return) and r.value is not None]
                if not returns or not all(self._mapping_values_safe(def_module, r, seen) for r in returns):
                    return False
            return True
        return False

    def callable_safe(self, module: Module, node: ast.expr) -> bool:
        """A format_func whose every result is safe: a lambda, ``mapping.get`` or a project function."""
        if isinstance(node, ast.Lambda):
            return self.safe(module, node.body)
        if isinstance(node, ast.Attribute) and node.attr == "get":
            return self._mapping_values_safe(module, node.value, frozenset())
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        return name in self.safe_returns

    def _name_safe(self, module: Module, node: ast.Name, seen: frozenset) -> bool:
        scope = self._scope(module, node)
        key = (id(scope), node.id)
        if key in seen:
            return False  # a name defined through itself: not proven
        seen = seen | {key}
        loop = self._loop_binding(module, node)
        if loop is not None:
            return self._iterable_safe(module, loop, seen)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.id in param_names(scope):
            return self._param_safe(scope, node.id)
        if isinstance(scope, ast.Lambda):
            return False
        bindings = self._bindings(module, node)
        if not bindings:
            return False
        for value in bindings:
            if value is None:
                return False
            if isinstance(value, Imported):
                if not self._imported_safe(value, seen):
                    return False
            elif not self.safe(module, value, seen):
                return False
        return True

    def _param_safe(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
        return (fn.name, param) in self.safe_params

    def _module(self, name: str) -> Module | None:
        """A project module by dotted name: scanned ones, or one read on demand for its constants."""
        if name in self.modules:
            return self.modules[name]
        if name not in self.readonly:
            base = self.root / name.replace(".", "/")
            path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
            self.readonly[name] = None if path is None else parse_module(
                path.relative_to(self.root).as_posix(), path.read_text(encoding="utf-8"))
        return self.readonly[name]

    def _imported_safe(self, imported: Imported, seen: frozenset) -> bool:
        module = self._module(imported.module)
        if module is None:
            return False
        values = module_bindings(module.tree, imported.name, module.name)
        if not values:
            return False
        return all(v is not None and (self._imported_safe(v, seen) if isinstance(v, Imported)
                                      else self.safe(module, v, seen)) for v in values)

    def _scope(self, module: Module, node: ast.AST, name: str | None = None) -> Scope:
        """The function (or lambda, or module) whose binding of ``name`` (default: the Name ``node``) is seen."""
        name = name if name is not None else node.id  # type: ignore[attr-defined]
        current = module.parents.get(node)
        while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            current = module.parents.get(current)
        if current is None:
            return module.tree
        if isinstance(current, ast.Lambda):
            return current if name in {a.arg for a in current.args.args} else self._scope(module, current, name)
        if name not in local_names(current):
            return self._scope(module, current, name)
        return current

    def _loop_binding(self, module: Module, node: ast.Name) -> ast.expr | None:
        """The collection a comprehension or for-loop variable runs over (when ``node`` is one), else None."""
        current: ast.AST | None = node
        while current is not None:
            parent = module.parents.get(current)
            if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                for gen in parent.generators:
                    if isinstance(gen.target, ast.Name) and gen.target.id == node.id:
                        return gen.iter
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
                break
            current = parent
        scope = self._scope(module, node)
        body = scope if not isinstance(scope, ast.Lambda) else None
        if body is None:
            return None
        for loop in own_nodes(body):
            if isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name) \
                    and loop.target.id == node.id:
                return loop.iter
        return None

    def _bindings(self, module: Module, node: ast.Name) -> list[ast.expr | Imported | None] | None:
        scope = self._scope(module, node)
        if isinstance(scope, ast.Lambda):
            return None
        if isinstance(scope, ast.Module):
            return module_bindings(scope, node.id, module.name)
        return function_bindings(scope, node.id)

    # -- the sinks ------------------------------------------------------------------------------------------------
    def findings(self) -> Iterator[Finding]:
        for module in self.modules.values():
            for call in ast.walk(module.tree):
                if not isinstance(call, ast.Call):
                    continue
                kind = _sink_kind(call.func)
                if kind is None:
                    continue
                if kind not in SINKS or not (call.args or call.keywords):
                    continue
                for arg in self._markdown_args(call):
                    if not self.safe(module, arg):
                        shown = arg.collection if isinstance(arg, Each) else arg
                        yield Finding(module.path, arg.lineno, kind, ast.unparse(shown),
                                      tuple(ast.unparse(p) for p in self.unproven(module, shown)))
                if kind in MARKDOWN_OPTIONS:
                    yield from self._options(module, call)

    def _markdown_args(self, call: ast.Call) -> Iterator[ast.expr]:
        kind = _sink_kind(call.func)
        if kind in ALL_ARGS:
            yield from (a for a in call.args if not isinstance(a, ast.Starred))
        elif kind in LIST_ARG and call.args:
            first = call.args[0]
            yield from (first.elts if isinstance(first, (ast.List, ast.Tuple)) else [Each(first)])
        elif kind in FIRST_ARG and call.args:
            yield call.args[0]
        for keyword in call.keywords:
            if keyword.arg in KEYWORDS:
                yield keyword.value
            elif keyword.arg in LIST_KEYWORDS:
                yield Each(keyword.value)

    def _options(self, module: Module, call: ast.Call) -> Iterator[Finding]:
        kind = _sink_kind(call.func) or ""
        formatter = next((k.value for k in call.keywords if k.arg == "format_func"), None)
        if formatter is not None:
            if not self.callable_safe(module, formatter):
                yield Finding(module.path, formatter.lineno, kind, "format_func=" + ast.unparse(formatter))
            return
        options = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "options"), None)
        if options is not None and not self._iterable_safe(module, options, frozenset()):
            yield Finding(module.path, options.lineno, kind, "options=" + ast.unparse(options))


def _sink_kind(func: ast.expr) -> str | None:
    """``st.caption`` → "caption"; ``(st.warning if bad else st.success)`` → "warning" (both are sinks)."""
    if isinstance(func, ast.Attribute):
        return func.attr if func.attr in SINKS else None
    if isinstance(func, ast.IfExp):
        kinds = [_sink_kind(func.body), _sink_kind(func.orelse)]
        return next((k for k in kinds if k), None)
    return None
