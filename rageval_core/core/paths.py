"""Where the workbench keeps its local state: ``.rageval/`` in the working directory, or RAGEVAL_HOME."""

from __future__ import annotations

import os
from pathlib import Path

from rageval_core.core.private import private_dir


def home() -> Path:
    """The state folder (created 0700 on first use, a looser one tightened with a warning): SQLite store,
    response cache, call log, rubrics, labels — the user's documents, readable by no one else."""
    return private_dir(Path(os.environ.get("RAGEVAL_HOME") or Path.cwd() / ".rageval"))


def database_path() -> Path:
    """The one SQLite file that runs, results, call log, cache, rubric versions and labels share."""
    return home() / "rageval.sqlite"


def logs_dir() -> Path:
    """Where internal-error tracebacks go (the CLI prints one line naming the file, never the traceback)."""
    return private_dir(home() / "logs")
