"""``rageval ui``: start the installed workbench on 127.0.0.1 from any folder (``pip install "rageval-workbench[ui]"``).

The workbench's Streamlit settings live in one file shipped with the UI package, ``rageval_ui/streamlit.toml``
(local only: 127.0.0.1, XSRF and CORS protection on, no usage statistics). ``streamlit run app.py`` in a clone reads
it through ``.streamlit/config.toml`` (a symbolic link to it); an installed copy has no such folder in the user's
working directory, so this command passes each setting as a ``--section.key=value`` flag. Arguments after ``ui``
go to Streamlit as they are, and one that names a setting replaces the shipped value
(``rageval ui --server.port 8600``; ``--server.address 0.0.0.0`` to serve a team, behind your own auth).
The state folder is the working directory's ``.rageval/`` (or ``RAGEVAL_HOME``), as for every command.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, Sequence

from rageval_core.cli.common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, err

INSTALL_HINT = 'the workbench UI is not installed: pip install "rageval-workbench[ui]" (in a clone: pip install ".[ui]")'


def add_command(sub: Any) -> None:
    """Register ``ui``."""
    p = sub.add_parser(
        "ui",
        help="start the workbench (Streamlit) on 127.0.0.1; extra arguments go to `streamlit run`",
        description="Start the workbench from any folder: its state lives in ./.rageval (or $RAGEVAL_HOME). Arguments "
        "after `ui` are passed to `streamlit run` (e.g. --server.port 8600); one that names a setting replaces the "
        "shipped value. Exit 2 when the UI package or Streamlit is not installed.",
    )
    p.add_argument("streamlit_args", nargs="*", metavar="STREAMLIT_ARG", help="passed to `streamlit run`")
    p.set_defaults(func=cmd_ui)
    global _PARSER
    _PARSER = p


_PARSER: argparse.ArgumentParser | None = None


def run(argv: Sequence[str]) -> int:
    """``rageval ui ARGS``: read before the main parser, whose options would otherwise claim Streamlit's flags."""
    if any(a in ("-h", "--help") for a in argv) and _PARSER is not None:
        _PARSER.print_help()
        return 0
    return cmd_ui(argparse.Namespace(streamlit_args=list(argv)))


def ui_package_dir() -> Path | None:
    """The installed ``rageval_ui`` folder, found without importing it (the CLI sits below the UI)."""
    spec = importlib.util.find_spec("rageval_ui")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def setting_flags(config: Path, given: Sequence[str]) -> list[str]:
    """``--section.key=value`` for each shipped setting the user did not give on the command line."""
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    named = {arg.split("=", 1)[0] for arg in given if arg.startswith("--")}
    flags: list[str] = []
    for section, values in data.items():
        for key, value in values.items():
            name = f"--{section}.{key}"
            if name not in named:
                shown = str(value).lower() if isinstance(value, bool) else str(value)
                flags.append(f"{name}={shown}")
    return flags


def streamlit_command(ui_dir: Path, given: Sequence[str]) -> list[str]:
    extra = [a for a in given if a != "--"]
    return [sys.executable, "-m", "streamlit", "run", str(ui_dir / "app.py"),
            *setting_flags(ui_dir / "streamlit.toml", extra), *extra]


def cmd_ui(args: argparse.Namespace) -> int:
    ui_dir = ui_package_dir()
    if ui_dir is None or not (ui_dir / "app.py").is_file() or importlib.util.find_spec("streamlit") is None:
        err(INSTALL_HINT)
        return EXIT_BAD_INPUT
    command = streamlit_command(ui_dir, args.streamlit_args)
    if os.name == "posix":
        # Streamlit takes this process's place, so a signal meant for `rageval ui` (a supervisor's SIGTERM, a
        # `kill`) reaches the server: a child started with subprocess outlived it and kept the port.
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(command[0], command)
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
