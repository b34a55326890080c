"""Private files: everything the workbench writes holds the user's questions, answers and documents.

The state folder is 0700 and every file the product writes (store, caches, logs, spill, exports, reports,
crash log) 0600 whatever the umask: files are created with ``os.open(..., 0o600)`` and then ``fchmod``-ed.
An existing file or folder is only ever tightened, never widened: its group and other bits are cleared (an
older version's 0644 store becomes 0600, a looser folder 0700, with a warning on stderr naming it: anyone else
on the machine could have read it), its owner bits are kept as the user set them (a 0400 store stays 0400:
the store then opens read-only, ``store.engine``).
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
                os.chmod(target, tightened(mode))
            except OSError as exc:
                _warn_once(target, f"warning: {target} is readable by others (mode {mode:o}) and could not be "
                                   f"made private: {exc.strerror or exc}")
                return target
            _warn_once(target, f"warning: {target} was readable by others (mode {mode:o}); now {tightened(mode):04o}")
    return target


def tightened(mode: int) -> int:
    """``mode`` with the group and other bits cleared and the owner's kept: never wider than it was."""
    return stat.S_IMODE(mode) & ~0o077


def _warn_once(target: Path, line: str) -> None:
    key = str(target.resolve())
    if key not in _warned:
        _warned.add(key)
        warn(line)


def open_private(path: str | Path, mode: str = "w", *, encoding: str = "utf-8") -> IO[Any]:
    """``open(path, mode)`` for ``w``/``a``/``x`` (text or ``b``): a new file 0600 whatever the umask, an existing
    one tightened (``tightened``), never widened."""
    flags = os.O_WRONLY | os.O_CREAT
    if "a" in mode:
        flags |= os.O_APPEND
    elif "x" in mode:
        flags |= os.O_EXCL
    else:
        flags |= os.O_TRUNC
    cloexec = getattr(os, "O_CLOEXEC", 0)
    try:  # made here: 0600 whatever the umask
        fd = os.open(str(path), flags | os.O_EXCL | cloexec, FILE_MODE)
        created = True
    except FileExistsError:
        if "x" in mode:
            raise
        fd = os.open(str(path), flags | cloexec, FILE_MODE)
        created = False
    try:
        found = os.fstat(fd)
        if stat.S_ISREG(found.st_mode):  # never a device or pipe (--out /dev/stdout is the terminal's)
            wanted = FILE_MODE if created else tightened(found.st_mode)
            if wanted != stat.S_IMODE(found.st_mode):
                os.fchmod(fd, wanted)
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
    """Create ``path`` empty and 0600 (an existing one is kept, and only tightened): SQLite gives its -wal and -shm
    files the mode of the database file, so creating the database this way keeps all three private. Never on a
    database this process has open: closing the descriptor would drop SQLite's locks on it (``tighten_file`` is by
    path)."""
    try:
        fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    except FileExistsError:
        tighten_file(path)
        return Path(path)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return Path(path)


def tighten_file(path: str | Path) -> None:
    """Clear an existing file's group and other bits (SQLite's -wal / -shm made before this version, for
    instance); its owner bits stay as they are (a 0400 file is never made 0600)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if mode & 0o077:
            os.chmod(path, tightened(mode))
    except FileNotFoundError:
        pass
