"""Where the workbench keeps its local state: ``.rageval/`` in the working directory, or RAGEVAL_HOME."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """The state folder (created on first use): SQLite store, response cache, call log, rubrics, labels."""
    root = Path(os.environ.get("RAGEVAL_HOME") or Path.cwd() / ".rageval")
    root.mkdir(parents=True, exist_ok=True)
    return root


def database_path() -> Path:
    """The one SQLite file that runs, results, call log, cache, rubric versions and labels share."""
    return home() / "rageval.sqlite"


def logs_dir() -> Path:
    """Where internal-error tracebacks go (the CLI prints one line naming the file, never the traceback)."""
    folder = home() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
