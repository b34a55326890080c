"""Feeding a run from a dataset that is read while it runs (``datasets.live.LiveDataset``).

The run loop takes its tasks from ``StreamFeed.tasks``, which reads the next row only when the loop's bounded
window has room, so what the run holds is the window (O(concurrency)), never the dataset. As rows go by, the
feed writes them to the run's row table a chunk at a time, counts the tasks a resume skips, and looks for a
language the first rows did not have (its prompt versions are added to the run at the end). The totals the
progress line shows are the file's row count until the reader reaches the end, then exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rageval_core.store import db
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.run.plan import RunError, scorer_versions, task_order
from rageval_core.store.run_rows import add_run_rows, finish_run_dataset
from rageval_core.store.runs import RowInfo, Store
from rageval_core.core.types import Sample

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo

HEAD_ROWS = 500  # rows read before the run starts: the plan (versions, embeddings, estimate) is made on them
ROWS_CHUNK = 1000  # rows written to the run's row table at a time


class StreamFeed:
    """Tasks of a ``LiveDataset`` for the run loop, with the bookkeeping a list of rows would not need."""

    def __init__(
        self, live: Any, store: Store, run_id: str, scorers: Sequence[Scorer], finished: set[tuple[str, str, int]],
        repeats: int, head: Sequence[Sample], options: Mapping[str, Any],
    ) -> None:
        from rageval_core.scoring.metrics.steps import sample_language

        self.live, self.store, self.run_id = live, store, run_id
        self.scorers, self.finished, self.repeats, self.options = list(scorers), finished, repeats, options
        self._language = sample_language
        self._firsts: dict[str, Sample] = {}
        for sample in head:
            self._firsts.setdefault(sample_language(sample), sample)
        self._head_languages = set(self._firsts)
        self._pending: list[RowInfo] = []
        self.rows = 0  # good rows read
        self.skipped = 0  # tasks a resume found finished
        self.on_read: Callable[[int], None] | None = None  # told the rows read so far after each row (tests)

    def tasks(self) -> Iterator[tuple[Sample, int, list[Scorer]]]:
        """Each row and repeat with the scorers still to run on it (row by row: the file is read once)."""
        order = task_order(self.scorers)
        for sample in self.live:
            if len(self._firsts) < 2:
                self._firsts.setdefault(self._language(sample), sample)
            self._pending.append(RowInfo(sample.id, self.rows, sample.category, True, None, sample))
            self.rows += 1
            if len(self._pending) >= ROWS_CHUNK:
                self.flush_rows()
            if self.on_read is not None:
                self.on_read(self.rows)
            for rep in range(self.repeats):
                todo = [self.scorers[i] for i in order if (sample.id, self.scorers[i].name, rep) not in self.finished]
                self.skipped += len(self.scorers) - len(todo)
                if todo:
                    yield sample, rep, todo
        self.flush_rows()

    def total(self) -> int:
        """Tasks of the whole run: exact once the reader is at the end, else from the file's row count."""
        rows: int = self.live.n_samples  # read so far (the first rows are read ahead of the tasks)
        if not self.live.done:
            rows = max(rows, self.live.expected_rows - len(self.live.bad_rows))
        return rows * len(self.scorers) * self.repeats

    def flush_rows(self) -> bool:
        """Write the rows read since the last flush; a locked store keeps them for the next try."""
        if not self._pending:
            return True
        try:
            add_run_rows(self.store, self.run_id, self._pending)
        except db.STORE_ERRORS:
            return False
        self._pending = []
        return True

    def finish(self, invalid_rows: Sequence[RowInfo], settings: Mapping[str, Any]) -> None:
        """Once the reader is at the end: the bad rows (after the good ones, as a whole read lists them), the
        content hash, ``settings`` and, when rows of another language came after the first rows, the versions
        with that language's prompts."""
        self.flush_rows()
        start = self.rows
        bad = [RowInfo(r.sample_id, start + i, r.category, False, r.error) for i, r in enumerate(invalid_rows)]
        if bad:
            add_run_rows(self.store, self.run_id, bad)
        versions = None
        if set(self._firsts) != self._head_languages:
            versions = scorer_versions(self.scorers, list(self._firsts.values()), self.options)
        finish_run_dataset(self.store, self.run_id, dataset_hash=self.live.content_hash, versions=versions, settings=settings)


def comparable_versions(stored: Mapping[str, Any], languages: set[str]) -> dict[str, Any]:
    """A stored run's versions limited to ``languages`` (a resumed file's first rows: a language met only further
    on cannot be checked before the reader gets there)."""
    out: dict[str, Any] = {}
    for name, info in stored.items():
        if name in ("_templates", "_edited_templates"):
            if isinstance(info, Mapping):
                info = {k: v for k, v in info.items() if k.split("/", 1)[0] in languages}
            elif isinstance(info, list):
                info = [k for k in info if str(k).split("/", 1)[0] in languages] or None
            if info is None:
                continue
        elif isinstance(info, Mapping) and isinstance(info.get("rubrics"), Mapping):
            info = {**info, "rubrics": {k: v for k, v in info["rubrics"].items() if k in languages}}
        out[name] = info
    return out


def check_same_file(info: RunInfo, live: Any) -> None:
    """A file read while the run goes is checked against the run by its bytes (the SHA-256 stored with the run),
    which needs no row read; a run made from a file read whole has only the content hash: then the file is read
    through once for it."""
    stored = info.settings.get("data_sha256")
    if stored:
        if stored != live.sha256:
            raise RunError(f"run {info.id} was made on a different dataset file (SHA-256 {stored[:12]}…)")
        return
    if info.dataset_hash and info.dataset_hash != live.whole_hash():
        raise RunError(f"run {info.id} was made on a different dataset (hash {info.dataset_hash[:12]}…)")
