"""An evaluation running behind the page: the runner on a background thread, its progress and cancel event.

Streamlit reruns the page script on every interaction, so a run started in the script itself could not
show live progress and be cancelled at the same time. The runner (the one concurrency boundary) runs on
one helper thread; the page polls ``Job.snapshot()`` from a fragment and the Cancel button sets the
runner's cancel event. Failures become a message on the job, never a traceback on the page.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core import run as runner
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.store.runs import Store, new_run_id
from rageval_core.core.types import Sample


@dataclass
class Job:
    """One evaluation in flight (or finished): what the Evaluate page shows."""

    run_id: str
    n_samples: int
    scorers: list[str]
    repeats: int = 1
    cancel: threading.Event = field(default_factory=threading.Event)
    progress: runner.Progress | None = None
    result: runner.Run | None = None
    error: str | None = None
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def done(self) -> bool:
        return not self.running

    def snapshot(self) -> runner.Progress | None:
        with self._lock:
            return self.progress

    def _on_progress(self, progress: runner.Progress) -> None:
        with self._lock:
            self.progress = progress

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run ends (tests and the CLI-like paths); True when it has ended."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.done


def tune_for_http_run(provider: str) -> bool:
    """The CLI's allocator and SQLite limits (``rageval_core/cli/allocator.py``) before a run over HTTP starts
    its worker threads: a long run from Evaluate otherwise meets the heap growth the CLI fixed. Process-wide
    and kept (so later offline runs in this app get the 64 KiB mmap threshold too, ~10 % more CPU a row);
    offline and replay runs alone leave glibc's and SQLite's defaults. True when it applied them."""
    if provider in ("offline", "replay"):
        return False
    from rageval_core.cli.allocator import tune_memory_for_run

    tune_memory_for_run(provider)
    return True


def start(
    samples: Sequence[Sample],
    scorers: Sequence[Scorer],
    config: Any,
    *,
    dataset_name: str,
    dataset_hash: str,
    options: dict[str, Any] | None = None,
    store_path: str | None = None,
    repeats: int = 1,
) -> Job:
    """Start ``runner.run`` on a helper thread with the provider ``config``; returns at once.

    ``repeats`` > 1 scores every pair that many times (``runner.run(repeats=K)``) for the Trust page's
    stability panel."""
    job = Job(run_id=new_run_id(), n_samples=len(samples), scorers=[s.name for s in scorers], repeats=max(1, int(repeats)))
    tune_for_http_run(getattr(config, "provider", "offline"))

    def work() -> None:
        try:
            job.result = runner.run(
                list(samples),
                list(scorers),
                config=config,
                store=Store(store_path),
                concurrency=max(1, int(getattr(config, "concurrency", 8) or 8)),
                options=options or {},
                progress=job._on_progress,
                cancel=job.cancel,
                run_id=job.run_id,
                dataset_name=dataset_name,
                dataset_digest=dataset_hash,
                repeats=max(1, int(repeats)),
            )
        except Exception as exc:  # noqa: BLE001 - shown on the page as a message
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.finished_at = time.time()

    job._thread = threading.Thread(target=work, name=f"rageval-ui-{job.run_id}", daemon=True)
    job._thread.start()
    return job
