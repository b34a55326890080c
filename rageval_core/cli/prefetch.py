"""Importing the provider SDK on a background thread from the first line of a command that will call it.

``import openai`` is ~1 s here (google-genai is close), more than everything else a command does before its
first request: building the parser, reading the dataset, the scorers, the estimate and the store. Started
here, the import goes on while that work is done instead of after it; the provider module imported later
on the main thread then finds it done (or waits on the import lock for the rest of it). Only a
``--provider`` given on the command line is prefetched, for the commands that send requests (never for
``-h``/``--help``, which only prints); a wrong guess costs an unused import, never a behaviour change.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence

COMMANDS = frozenset({"evaluate", "trust", "synth", "rag"})
MODULES: dict[str, tuple[str, ...]] = {
    "openai": ("rageval_core.llm.openai_provider", "rageval_core.embeddings.openai_embed"),
    "openai-compatible": ("rageval_core.llm.openai_provider", "rageval_core.embeddings.openai_embed"),
    "gemini": ("rageval_core.llm.gemini_provider", "rageval_core.embeddings.gemini"),
    "azure-openai": ("rageval_core.llm.azure_provider", "rageval_core.embeddings.openai_embed"),
    "vertex": ("rageval_core.llm.vertex_provider", "rageval_core.embeddings.gemini"),
    "anthropic": ("rageval_core.llm.anthropic_provider",),
}


def provider_of(argv: Sequence[str]) -> str | None:
    """The ``--provider`` of a command that sends requests, read from the raw arguments (before argparse)."""
    args = list(argv)
    command, i = None, 0
    while i < len(args) and command is None:
        if args[i] == "--db":  # the one top-level option with a value
            i += 1
        elif not args[i].startswith("-"):
            command = args[i]
        i += 1
    if command not in COMMANDS or "-h" in args or "--help" in args:
        return None
    for i, arg in enumerate(args):
        if arg == "--provider" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--provider="):
            return arg.split("=", 1)[1]
    return None


def start(argv: Sequence[str]) -> threading.Thread | None:
    """Import the SDK modules of the command's provider on a daemon thread; None when there is nothing to import."""
    modules = MODULES.get(provider_of(argv) or "")
    if not modules:
        return None
    thread = threading.Thread(target=_import, args=(modules,), name="rageval-prefetch", daemon=True)
    thread.start()
    return thread


def _import(modules: Sequence[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the main thread's own import reports any real problem
            return
