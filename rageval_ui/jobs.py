"""An evaluation running behind the page: the runner on a background thread, its progress and cancel event.

Streamlit reruns the page script on every interaction, so a run started in the script itself could not
show live progress and be cancelled at the same time. The runner (the one concurrency boundary) runs on
one helper thread; the page polls ``Job.snapshot()`` from a fragment and the Cancel button sets the
runner's cancel event. Failures become a message on the job, never a traceback on the page.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core import run as runner
from rageval_core.core.errors import RagevalError
from rageval_core.providers.config import ProviderConfig
from rageval_core.session.for_run import build_and_run
from rageval_core.run.spec import RunSpec
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.store.runs import Store, new_run_id
from rageval_core.core.types import Sample
from rageval_ui.errors import unexpected_error


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
    spec: RunSpec | None = None  # what was asked (a run the store did not keep whole is resumed from it)
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
    """The CLI's allocator and SQLite limits (``rageval_core/session/allocator.py``) before a run over HTTP starts
    its worker threads: a long run from Evaluate otherwise meets the heap growth the CLI fixed. Process-wide
    and kept (so later offline runs in this app get the 64 KiB mmap threshold too, ~10 % more CPU a row);
    offline and replay runs alone leave glibc's and SQLite's defaults. True when it applied them."""
    if provider in ("offline", "replay"):
        return False
    from rageval_core.session.allocator import tune_memory_for_run

    tune_memory_for_run(provider)
    return True


def evaluation_spec(
    samples: Sequence[Sample],
    scorers: Sequence[Scorer],
    config: ProviderConfig,
    *,
    dataset_name: str | None,
    dataset_hash: str | None,
    options: dict[str, Any] | None = None,
    repeats: int = 1,
    settings: dict[str, Any] | None = None,
) -> RunSpec:
    """The ``RunSpec`` of a run the pages start, from the workbench state (the sidebar's provider ``config``);
    checked as it is built (``SpecError``). ``repeats`` > 1 scores every pair that many times for the Trust
    page's stability panel."""
    return RunSpec(
        list(samples), list(scorers), provider=config, concurrency=max(1, int(config.concurrency or 8)),
        options=options or {}, run_id=new_run_id(), dataset_name=dataset_name, dataset_digest=dataset_hash,
        repeats=max(1, int(repeats)), settings=settings or {},
    )


def run_now(spec: RunSpec, store: Store, *, progress: Callable[[runner.Progress], None] | None = None, cancel: threading.Event | None = None) -> runner.Run:
    """Build the providers of ``spec`` and run it on this thread (the pages' short runs, and ``start``'s thread)."""
    return build_and_run(spec, store, progress=progress, cancel=cancel)


def start(spec: RunSpec, *, store_path: str | None = None) -> Job:
    """Start ``spec`` on a helper thread; returns at once (the page polls the job)."""
    job = Job(run_id=str(spec.run_id), n_samples=len(spec.samples), scorers=spec.scorer_names,
              repeats=spec.repeats or 1, spec=spec)
    tune_for_http_run(spec.provider.provider if spec.provider is not None else "offline")

    def work() -> None:
        try:
            job.result = run_now(spec, Store(store_path), progress=job._on_progress, cancel=job.cancel)
        except RagevalError as exc:
            job.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - last resort: a helper thread has no page to fall back on
            job.error = unexpected_error(exc)
        finally:
            job.finished_at = time.time()

    job._thread = threading.Thread(target=work, name=f"rageval-ui-{job.run_id}", daemon=True)
    job._thread.start()
    return job


def resume(job: Job, *, store_path: str | None = None) -> Job:
    """The same run again as a resume (a run the store did not keep whole, once there is room): the spilled
    results are written back first, and only what is missing is scored."""
    if job.spec is None:
        raise ValueError("this job has no spec to resume")
    return start(dataclasses.replace(job.spec, resume=True, spill=None), store_path=store_path)
