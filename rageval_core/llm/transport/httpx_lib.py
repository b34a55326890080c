"""Which httpx the SDKs use here: the ``httpx2`` fork when installed, else ``httpx``.

Its own module because both the guard (its deadline-bound client) and the SDK warm-up need it, and the guard
imports the warm-up.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["httpx_module"]


def httpx_module() -> Any:
    """The httpx module the SDKs use here (the ``httpx2`` fork when installed, else ``httpx``)."""
    for name in ("httpx2", "httpx"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("neither httpx2 nor httpx is installed")
