"""Room for the results a full store cannot keep, set aside before the run starts.

Why: the store's disk filling mid-run used to end with the spill file written on that same full disk (0 bytes),
so the results it was meant to keep were lost. Now, before a run starts, ``reserve`` picks the first folder
with room (beside the ``--out`` export, the store's own ``unsaved/`` folder, then the temp folder) and
pre-allocates bytes there, so the spill is written into space that already belongs to it whatever fills up
later. A run that ends with nothing refused gives the room back (``Reserve.release``). When no folder had
room, ``Reserve.shortfall`` says so before the run (the CLI prints it; the results then live in the export).

A spill file is JSON Lines, one finished task a line (``sample_id``, ``scorer``, ``repeat``, ``results``); the next
``--resume`` of the run writes every file it finds for the run back into the store (``restore``) and removes it.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from rageval_core.core.private import private_dir
from rageval_core.core.redact import redact_data
from rageval_core.core.types import MetricResult
from rageval_core.store import db
from rageval_core.store.runs import Store

Task = tuple[str, str, list[MetricResult], int]  # sample id, scorer, results, repeat

PER_TASK_BYTES = 16 * 1024  # a spilled task with its details (claims, verdicts, prompts): 1-36 KB offline, ~12 KB mean
MIN_BYTES = 256 * 1024
MAX_BYTES = 64 * 2**20  # a bigger run spills past the reservation (on the chance there is room then)
FOLDER = "rageval-unsaved"  # beside an export, and in the temp folder (the store's own is ``unsaved/``)
FILE_MODE = 0o600


def store_folder(store: Store) -> Path | None:
    """The store's own spill folder (None for an in-memory database)."""
    return None if store.path == ":memory:" else Path(store.path).parent / "unsaved"


def temp_folder() -> Path:
    """A per-user folder in the system's temp folder (another disk than the store's, often)."""
    return Path(tempfile.gettempdir()) / f"{FOLDER}-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def folders(store: Store, beside: Sequence[str | Path] = ()) -> list[Path]:
    """Where a spill may go, in order: a ``rageval-unsaved`` folder beside each of ``beside`` (the export's
    folder), the store's ``unsaved/`` folder, the temp folder."""
    out = [Path(b) / FOLDER for b in beside]
    own = store_folder(store)
    if own is not None:
        out.append(own)
    out.append(temp_folder())
    return list(dict.fromkeys(out))


def wanted_bytes(tasks: int) -> int:
    """The room reserved for ``tasks`` finished tasks."""
    return max(MIN_BYTES, min(MAX_BYTES, int(tasks) * PER_TASK_BYTES))


@dataclass
class Reserve:
    """Bytes set aside in ``folder`` for the run's spill file ``target`` (``held`` of ``wanted``); ``tried``: the
    folders that had no room and why."""

    run_id: str
    folder: Path | None
    wanted: int
    held: int = 0
    tried: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def target(self) -> Path | None:
        return None if self.folder is None else self.folder / f"{self.run_id}.jsonl"

    @property
    def _room(self) -> Path | None:
        return None if self.folder is None else self.folder / f"{self.run_id}.reserve"

    @property
    def shortfall(self) -> str | None:
        """What to say before the run when the room could not be set aside; None when it was."""
        if self.held >= self.wanted:
            return None
        tried = "; ".join(f"{p}: {why}" for p, why in self.tried) or "no folder to try"
        got = f"only {self.held / 2**20:.1f} MB in {self.folder}" if self.folder is not None and self.held else "none"
        return (f"no folder has room to keep {self.wanted / 2**20:.1f} MB of results should the store's disk fill during "
                f"the run ({got}; {tried}); results the store cannot keep would then be only in the export")

    def release(self) -> None:
        """Give the room back (the run ended with nothing to spill)."""
        room = self._room
        if room is not None:
            room.unlink(missing_ok=True)
            _remove_if_empty(self.folder)
        self.held = 0

    def write(self, tasks: Sequence[Task]) -> tuple[int, Path | None]:
        """Write ``tasks`` into the reserved room (past it if they need more), as the spill file; returns how many
        were written and the file (0 and None when not one could be). A write that fails part-way keeps the
        whole lines before it."""
        if not tasks:
            self.release()
            return 0, None
        for folder in [f for f in [self.folder] if f is not None] + [p for p, _ in self.tried]:
            written, path = _write_into(folder, self.run_id, tasks, folder == self.folder)
            if written:
                if folder != self.folder:
                    self.release()
                return written, path
        return 0, None


def reserve(store: Store, run_id: str, tasks: int, beside: Sequence[str | Path] = ()) -> Reserve:
    """Set aside room for ``tasks`` finished tasks in the first of ``folders`` that has it (or the most any had);
    none for a database in memory (it cannot be resumed)."""
    if store.path == ":memory:":
        return Reserve(run_id, None, 0)
    want = wanted_bytes(tasks)
    res = Reserve(run_id, None, want)
    best: tuple[int, Path] | None = None
    for folder in folders(store, beside):
        free = _free(folder)
        if free is None:
            res.tried.append((folder, "cannot be written"))
            _remove_if_empty(folder)
            continue
        if free >= want and _allocate(folder, run_id, want):
            res.folder, res.held = folder, want
            return res
        res.tried.append((folder, f"{free / 2**20:.1f} MB free"))
        _remove_if_empty(folder)
        if best is None or free > best[0]:
            best = (free, folder)
    if best is not None and best[0] > 0:  # less than wanted: hold what there is
        size = best[0] // 2
        if _allocate(best[1], run_id, size):
            res.folder, res.held = best[1], size
    return res


@dataclass
class NotKept:
    """A run's finished tasks the store did not keep: all of them (for the export and the summary), how many
    of the first are in ``spill_file`` (the rest only in memory, then the export)."""

    tasks: list[Task]
    spilled: int = 0
    spill_file: str | None = None

    @property
    def result_count(self) -> int:
        """Results in ``tasks``, every repeat."""
        return sum(len(results) for _, _, results, _ in self.tasks)

    def results(self, repeat: int = 0) -> list[MetricResult]:
        return [r for _, _, results, rep in self.tasks if rep == repeat for r in results]

    def keys(self, repeat: int = 0) -> set[tuple[str, str]]:
        """(sample id, scorer) of each task of ``repeat``: a stored result of the same task is superseded."""
        return {(sid, scorer) for sid, scorer, _, rep in self.tasks if rep == repeat}


def spill_files(store: Store, run_id: str, beside: Sequence[str | Path] = (), recorded: Iterable[str] = ()) -> list[Path]:
    """Every spill file of ``run_id`` left by an earlier session: in ``folders`` and at the paths the run recorded."""
    found: list[Path] = [Path(p) for p in recorded if p and Path(p).is_file()]
    for folder in folders(store, beside):
        if folder.is_dir():
            found += sorted(folder.glob(f"{run_id}.jsonl")) + sorted(folder.glob(f"{run_id}.*.jsonl"))
    return list(dict.fromkeys(p.resolve() for p in found))


def read(path: Path) -> list[Task]:
    """The tasks of one spill file (a line cut short by a crash is skipped)."""
    out: list[Task] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip("\x00").strip()
        if not line:
            continue
        try:
            data = json.loads(line)
            results = [MetricResult.from_dict(r) for r in data["results"]]
        except (ValueError, KeyError, TypeError):
            continue
        out.append((str(data["sample_id"]), str(data["scorer"]), results, int(data.get("repeat", 0))))
    return out


def restore(store: Store, run_id: str, beside: Sequence[str | Path] = (), recorded: Iterable[str] = ()) -> int:
    """Write back every spill file an earlier session of the run left; returns how many tasks. Each file is
    removed only after the store took its tasks (a store still full raises, and the files stay)."""
    n = 0
    for path in spill_files(store, run_id, beside, recorded):
        tasks = read(path)
        if tasks:
            try:
                store.save_tasks(run_id, tasks)
            except db.STORE_ERRORS as exc:
                cause = exc.__cause__ if isinstance(exc, db.StoreBusy) and exc.__cause__ is not None else exc
                raise db.StoreError(
                    f"cannot write the {len(tasks)} task(s) of run {run_id} kept in {path} back into the store {store.path} "
                    f"({cause}); they stay in that file: free space (or let the other writer finish), then --resume "
                    f"{run_id} again") from exc
        path.unlink()
        _remove_if_empty(path.parent)
        n += len(tasks)
    return n


def _line(task: Task) -> bytes:
    sample_id, scorer, results, repeat = task
    data = {"sample_id": sample_id, "scorer": scorer, "repeat": repeat, "results": [r.to_dict() for r in results]}
    return (json.dumps(redact_data(data), ensure_ascii=False, default=str) + "\n").encode("utf-8")


def _write_into(folder: Path, run_id: str, tasks: Sequence[Task], reserved: bool) -> tuple[int, Path | None]:
    room = folder / f"{run_id}.reserve"
    target = folder / f"{run_id}.jsonl"
    n = 1
    while target.exists():  # an earlier session's file not written back yet: never overwritten
        target, n = folder / f"{run_id}.{n}.jsonl", n + 1
    try:
        private_dir(folder)
        fd = os.open(room, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    except OSError:
        return 0, None
    written, offset = 0, 0
    try:
        for task in tasks:
            data = _line(task)
            try:
                _write_all(fd, data)
            except OSError:
                break
            offset += len(data)
            written += 1
        os.ftruncate(fd, offset)  # the unused room given back; only whole lines stay
        try:
            os.fsync(fd)
        except OSError:
            pass
    finally:
        os.close(fd)
    if not written:
        room.unlink(missing_ok=True)
        return 0, None
    os.replace(room, target)
    return written, target


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _free(folder: Path) -> int | None:
    """Free bytes where ``folder`` is (made if missing), None when it cannot be written."""
    import shutil

    try:
        private_dir(folder)
        if not os.access(folder, os.W_OK):
            return None
        return int(shutil.disk_usage(folder).free)
    except OSError:
        return None


def _allocate(folder: Path, run_id: str, size: int) -> bool:
    """Pre-allocate ``size`` bytes as ``<run>.reserve`` in ``folder`` (blocks really taken, not a sparse file)."""
    room = folder / f"{run_id}.reserve"
    try:
        private_dir(folder)
        fd = os.open(room, os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    except OSError:
        return False
    try:
        try:
            os.posix_fallocate(fd, 0, size)
        except (AttributeError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                raise
            chunk = b"\0" * (1 << 20)  # no fallocate here: write the zeros
            left = size
            while left > 0:
                left -= os.write(fd, chunk[: min(left, len(chunk))])
        return True
    except OSError:
        os.close(fd)
        fd = -1
        room.unlink(missing_ok=True)
        return False
    finally:
        if fd >= 0:
            os.close(fd)


def _remove_if_empty(folder: Path | None) -> None:
    if folder is not None:
        try:
            folder.rmdir()
        except OSError:
            pass
