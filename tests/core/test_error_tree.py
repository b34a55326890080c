"""One exception root: every exception class in rageval_core and rageval_ui is a ``RagevalError`` (under one of the
branches in ``core/errors.py``), or is one of the control-flow exceptions listed here with why.

Read from the source (no import: the UI's pages run when imported): each class's bases are followed by name through
the classes the two packages define until they reach ``RagevalError`` or a built-in exception.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

from rageval_core.core.errors import ConfigError, DataError, ProviderError, RagevalError, StoreError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rageval_core", "rageval_ui")

# Control flow that never reaches a user, so no front end may catch it as a user's error: each is caught inside the
# package, a few lines from where it is raised, and its definition says why in a comment.
CONTROL_FLOW = {
    "Unscorable": "rageval_core/scoring/metrics/steps.py",  # a metric turns it into an unscored result
    "NotStreamable": "rageval_core/data/datasets/streaming.py",  # the loader records the line as an issue
    "CsvAbort": "rageval_core/data/datasets/formats.py",  # the file-level issue is recorded before it is raised
    "BadRequest": "rageval_core/testing/fake_llm/wire.py",  # the fake LLM server answers it with a 400
}
# ``Deferred`` (run/batch/answers.py) is control flow too, but a ProviderError on purpose (a metric's step ends as
# after any failed call), so it sits in the tree and needs no entry here.


def _classes() -> dict[str, list[tuple[str, ast.ClassDef]]]:
    found: dict[str, list[tuple[str, ast.ClassDef]]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, []).append((path.relative_to(ROOT).as_posix(), node))
    return found


CLASSES = _classes()


def _base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def _is_builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def _roots(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
    """Where a class's bases lead: "RagevalError", the built-in exceptions reached outside the tree, or nothing
    (not an exception)."""
    if name == "RagevalError":
        return {"RagevalError"}
    if name in seen:
        return set()
    if name not in CLASSES:
        return {name} if _is_builtin_exception(name) else set()
    out: set[str] = set()
    for _path, node in CLASSES[name]:
        for base in _base_names(node):
            out |= _roots(base, seen | {name})
    return out


def _exception_classes() -> dict[str, tuple[str, set[str]]]:
    out = {}
    for name, defs in CLASSES.items():
        roots = _roots(name)
        if roots:
            out[name] = (defs[0][0], roots)
    return out


def test_the_scan_sees_the_tree_and_the_classes_beside_the_code() -> None:
    found = _exception_classes()
    assert {"RagevalError", "DataError", "ConfigError", "ProviderError", "StoreError", "UsageError"} <= set(found)
    assert {"DatasetError", "RubricError", "StoreBusy", "BatchError", "SetupError", "CsvAbort"} <= set(found)
    assert len(found) >= 25


def test_every_exception_class_is_under_ragevalerror_or_listed_as_control_flow() -> None:
    outside = []
    for name, (path, roots) in sorted(_exception_classes().items()):
        in_tree = roots == {"RagevalError"} or "RagevalError" in roots
        if name in CONTROL_FLOW:
            assert not in_tree, f"{name} ({path}) is in the tree now: take it off the control-flow list"
            assert CONTROL_FLOW[name] == path, f"{name} moved to {path}: update CONTROL_FLOW"
            continue
        if not in_tree:
            outside.append(f"{path}: {name} reaches {sorted(roots)}, not RagevalError")
    assert not outside, "subclass a branch of rageval_core/core/errors.py (or list real control flow here):\n" + "\n".join(outside)


def test_each_control_flow_class_still_exists_and_says_why() -> None:
    for name, path in CONTROL_FLOW.items():
        lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
        at = next((i for i, line in enumerate(lines) if line.startswith(f"class {name}(")), None)
        assert at is not None, f"{name} is no longer in {path}"
        assert lines[at - 1].startswith("#"), f"{path}: a comment above {name} says why it stays outside the tree"


def test_each_exception_class_is_defined_once() -> None:
    """One class a name: a second ``StoreError`` beside ``core.errors``' would split the tree (and this scan)."""
    twice = [f"{name}: {', '.join(path for path, _node in CLASSES[name])}"
             for name in _exception_classes() if len(CLASSES[name]) > 1]
    assert not twice, "import the one class instead of defining another:\n" + "\n".join(twice)


def test_names_ending_in_error_are_exceptions() -> None:
    """A class named like an error whose bases the scan cannot follow (a third-party exception) is caught here."""
    found = _exception_classes()
    unknown = [f"{defs[0][0]}: {name}" for name, defs in CLASSES.items()
               if name.endswith(("Error", "Exception")) and name not in found]
    assert not unknown, unknown


@pytest.mark.parametrize(
    ("module", "name", "branch"),
    [
        ("rageval_core.data.datasets", "DatasetError", DataError),
        ("rageval_core.data.documents", "DocumentError", DataError),
        ("rageval_core.data.traces.model", "TraceFormatError", DataError),
        ("rageval_core.core.jsonparse", "ParseError", DataError),
        ("rageval_core.scoring.rubric", "RubricError", ConfigError),
        ("rageval_core.scoring.prompts", "TemplateError", ConfigError),
        ("rageval_core.scoring.metrics.judge_template", "TemplateMismatchError", ConfigError),
        ("rageval_core.scoring.judges.config", "JudgeConfigError", ConfigError),
        ("rageval_core.rag.your_rag.mapping", "MappingError", ConfigError),
        ("rageval_core.rag.synth.kinds", "SharesError", ConfigError),
        ("rageval_core.rag.synth.model", "SynthError", ConfigError),
        ("rageval_core.rag.simple", "RagError", ConfigError),
        ("rageval_core.run.plan", "RunError", ConfigError),
        ("rageval_core.run.spec", "SpecError", ConfigError),
        ("rageval_core.store.db", "StoreBusy", StoreError),
        ("rageval_core.run.batch", "BatchError", ProviderError),
        ("rageval_core.run.batch", "BatchCancelled", ProviderError),
    ],
)
def test_each_class_sits_on_its_branch(module: str, name: str, branch: type[RagevalError]) -> None:
    import importlib

    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, branch)
    if branch in (DataError, ConfigError):
        assert issubclass(cls, ValueError)  # callers that caught ValueError still do


def test_batch_errors_carry_a_kind() -> None:
    from rageval_core.run.batch import BatchCancelled, BatchError

    assert BatchError("job failed").kind == "batch" and str(BatchError("job failed")) == "job failed"
    assert BatchCancelled("stopped").kind == "cancelled" and BatchCancelled("stopped").unscored_reason == "cancelled"


def test_the_ui_catches_the_root_and_keeps_a_last_resort_only_where_it_says_why() -> None:
    """``except Exception`` in rageval_ui only as a commented last resort (run_page, the sidebar outside it, helper
    threads, the read-ahead); i18n's locale probe is no error handling at all."""
    loose = []
    for path in sorted((ROOT / "rageval_ui").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "except Exception" in line or "except BaseException" in line:
                if "last resort" not in line and not (path.name == "i18n.py" and "no context to read" in line):
                    loose.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not loose, "catch RagevalError (a user's error) and let run_page take the rest:\n" + "\n".join(loose)
