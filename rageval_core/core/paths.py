"""Where the workbench keeps its local state: ``.rageval/`` in the working directory, or RAGEVAL_HOME."""

from __future__ import annotations

import os
from pathlib import Path

from rageval_core.core.errors import StoreError
from rageval_core.core.messages import say
from rageval_core.core.private import private_dir


class StateDirError(StoreError):
    """The state folder (RAGEVAL_HOME, or ./.rageval) is a file, or cannot be made: the message says which."""


def home() -> Path:
    """The state folder (created 0700 on first use, a looser one tightened with a warning): SQLite store,
    response cache, call log, rubrics, labels — the user's documents, readable by no one else. A path that is a
    file, or under one, or that cannot be made, is a ``StateDirError`` naming it (exit 2), not a crash."""
    target = Path(os.environ.get("RAGEVAL_HOME") or Path.cwd() / ".rageval")
    if target.exists() and not target.is_dir():
        raise StateDirError(say("home.not_folder", path=str(target)))
    try:
        return private_dir(target)
    except (FileExistsError, NotADirectoryError):  # a file on the way: RAGEVAL_HOME=/some/file/state
        blocking = next((p for p in target.parents if p.exists() and not p.is_dir()), target)
        raise StateDirError(say("home.not_folder", path=str(blocking))) from None
    except OSError as exc:  # a read-only parent, a path too long, ...
        raise StateDirError(say("home.cannot_create", path=str(target), error=exc.strerror or str(exc))) from None


def database_path() -> Path:
    """The one SQLite file that runs, results, call log, cache, rubric versions and labels share."""
    return home() / "rageval.sqlite"


def logs_dir() -> Path:
    """Where internal-error tracebacks go (the CLI prints one line naming the file, never the traceback)."""
    return private_dir(home() / "logs")
