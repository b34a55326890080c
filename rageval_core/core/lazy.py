"""Package attributes imported on first use (PEP 562), so importing one module of a package stays cheap.

Why: the CLI's parser imports ``run.spec`` and ``data.traces.model``; a package ``__init__`` that imported every
submodule to re-export its names loaded the whole runner (93 modules) before the first request.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_attributes(package: str, namespace: dict[str, Any], homes: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each public name in ``homes`` (submodule -> names) is imported from
    its submodule when first asked for, then kept in ``namespace`` (the package's globals) so it is looked up once."""
    where = {name: home for home, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return __getattr__
