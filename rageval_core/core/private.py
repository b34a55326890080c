"""Private files: everything the workbench writes holds the user's questions, answers and documents.

The state folder is 0700 and every file the product writes (store, caches, logs, spill, exports, reports,
crash log) 0600 whatever the umask: files are created with ``os.open(..., 0o600)`` and then ``fchmod``-ed,
so an existing file written earlier with a looser mode is tightened too. A folder found looser than 0700 is
tightened once, with a warning on stderr naming it (anyone else on the machine could have read it).
"""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path
from typing import IO, Any, Callable

FILE_MODE = 0o600
DIR_MODE = 0o700

_warned: set[str] = set()
# Where the "tightened" warning goes; tests swap it to capture the line.
warn: Callable[[str], None] = lambda line: print(line, file=sys.stderr)  # noqa: E731


def private_dir(folder: str | Path, *, tighten: bool = True) -> Path:
    """``folder`` created 0700 (parents as needed); an existing looser one is tightened with a warning."""
    target = Path(folder)
    if not target.is_dir():
        target.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        os.chmod(target, DIR_MODE)  # mkdir's mode is masked by the umask
        return target
    if tighten:
        mode = stat.S_IMODE(target.stat().st_mode)
        if mode & 0o077:
            try:
                os.chmod(target, DIR_MODE)
            except OSError as exc:
                _warn_once(target, f"warning: {target} is readable by others (mode {mode:o}) and could not be "
                                   f"made private: {exc.strerror or exc}")
                return target
            _warn_once(target, f"warning: {target} was readable by others (mode {mode:o}); now 0700")
    return target


def _warn_once(target: Path, line: str) -> None:
    key = str(target.resolve())
    if key not in _warned:
        _warned.add(key)
        warn(line)


def open_private(path: str | Path, mode: str = "w", *, encoding: str = "utf-8") -> IO[Any]:
    """``open(path, mode)`` for ``w``/``a``/``x`` (text or ``b``), the file 0600 whatever the umask."""
    flags = os.O_WRONLY | os.O_CREAT
    if "a" in mode:
        flags |= os.O_APPEND
    elif "x" in mode:
        flags |= os.O_EXCL
    else:
        flags |= os.O_TRUNC
    fd = os.open(str(path), flags | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):  # never a device or pipe (--out /dev/stdout is the terminal's)
            os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    raw = io.open(fd, "ab" if "a" in mode else "wb")
    if "b" in mode:
        return raw
    return io.TextIOWrapper(raw, encoding=encoding)


def write_private_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """``Path.write_text`` with the file 0600."""
    with open_private(path, "w", encoding=encoding) as fh:
        fh.write(text)
    return Path(path)


def write_private_bytes(path: str | Path, data: bytes) -> Path:
    """``Path.write_bytes`` with the file 0600."""
    with open_private(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def touch_private(path: str | Path) -> Path:
    """Create ``path`` empty (or keep it) and make it 0600: SQLite gives its -wal and -shm files the mode of the
    database file, so creating the database this way keeps all three private. Never on a database this
    process has open: closing the descriptor would drop SQLite's locks on it (``tighten_file`` is by path)."""
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return Path(path)


def tighten_file(path: str | Path) -> None:
    """Make an existing file 0600 (SQLite's -wal / -shm made before this version, for instance)."""
    try:
        os.chmod(path, FILE_MODE)
    except FileNotFoundError:
        pass
