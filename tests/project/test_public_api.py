"""The public API of ``rageval_core`` (its ``__all__``) is pinned: a name is added or removed on purpose, here and
in docs/python-api.md together. Every name resolves, and ``import rageval_core`` stays cheap (PEP 562: the names
are imported on first use, so the CLI's start-up, which imports the package first, loads nothing more)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rageval_core

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = [
    "ConfigError", "DataError", "Evaluation", "LoadedDataset", "MethodComparison", "ProviderConfig", "ProviderError",
    "RagevalError", "RunComparison", "RunSpec", "Sample", "Score", "Store", "StoreError", "TrustReport", "Usage",
    "__version__", "compare", "evaluate", "load_dataset", "trust",
]


def test_all_is_the_pinned_public_api() -> None:
    assert rageval_core.__all__ == PUBLIC, "change PUBLIC and docs/python-api.md on purpose, together"


def test_every_public_name_resolves_and_the_errors_share_one_root() -> None:
    for name in PUBLIC:
        assert getattr(rageval_core, name) is not None, name
    assert all(issubclass(getattr(rageval_core, e), rageval_core.RagevalError)
               for e in ("ConfigError", "DataError", "ProviderError", "StoreError"))
    assert rageval_core.RunSpec.__module__ == "rageval_core.run.spec"  # the runner's own types, not copies
    assert rageval_core.ProviderConfig.__module__ == "rageval_core.providers.config"
    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        rageval_core.evaluat  # noqa: B018 - a typo fails as for any module
    from rageval_core import cli  # noqa: F401 - the packages stay importable by name beside the API


def test_the_docs_page_names_every_public_function() -> None:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    for name in ("load_dataset", "evaluate", "trust", "compare", "RagevalError", "ProviderConfig", "RunSpec", "Store"):
        assert f"{name}" in text, name


def test_importing_the_package_loads_nothing_else() -> None:
    code = ("import sys, rageval_core; print(sorted(m for m in sys.modules if m.startswith('rageval_core')));"
            "print(sorted(m for m in ('pandas', 'numpy', 'sqlite3', 'openai', 'google.genai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['rageval_core', 'rageval_core.core', 'rageval_core.core.lazy']", "[]"]
