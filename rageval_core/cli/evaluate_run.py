"""What ``evaluate`` and ``trust DATA`` share: the scorers their flags ask for, the ``RunSpec`` the flags make,
reading the dataset, and running it with built providers under the Ctrl-C handling.

The flags stop here: ``run_spec`` turns them into a typed ``RunSpec`` (with its ``ProviderConfig``), and
everything below the CLI receives that, never the argparse namespace.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import EXIT_INTERRUPTED, ProgressBar, UsageError, err, provider_config
from rageval_core.cli.dataset_report import invalid_rows, issues_for_export, report_dataset

if TYPE_CHECKING:  # the parser's build imports this module; the runner's modules come with the run
    from rageval_core.data.datasets import LoadedDataset
    from rageval_core.data.datasets.column_map import ColumnMap
    from rageval_core.data.datasets.live import LiveDataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.run import Progress, Run
    from rageval_core.run.spec import RunSpec
    from rageval_core.scoring.metrics.base import Scorer
    from rageval_core.store.runs import RowInfo, Store

    # What a run's skipped rows are: a list, or for a file read as the run goes, a callable answered at its end.
    Skipped = Sequence[RowInfo] | Callable[[], Sequence[RowInfo]]


def scorers_from_args(args: argparse.Namespace) -> list[Scorer]:
    """The scorers of ``--metrics``, ``--judge`` and ``--judges FILE`` (each configuration bound to its own
    provider stack, inheriting retries, timeout and cache settings from the run's provider options)."""
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers

    metric_ids = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    try:
        scorers: list[Scorer] = list(build_scorers(metric_ids, {"economy": True} if args.economy else {}))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for judge in args.judge or []:
        try:
            scorers.append(JudgeScorer(judge))
        except FileNotFoundError:
            raise UsageError(f"--judge {judge!r}: no such preset or rubric file (presets: rubric5, binary, binary-strict)") from None
        except (ValueError, OSError) as exc:
            raise UsageError(f"--judge {judge!r}: {exc}") from None
    if getattr(args, "judges", None):
        from rageval_core.scoring.judges.bound import judge_scorers
        from rageval_core.scoring.judges.config import JudgeConfigError, load_judges

        try:
            judges = load_judges(args.judges)
            scorers.extend(judge_scorers(judges, provider_config(args), economy=bool(args.economy)))
        except (JudgeConfigError, FileNotFoundError) as exc:
            raise UsageError(f"--judges: {exc}") from None
        except ValueError as exc:
            raise UsageError(f"--judges {args.judges}: {exc}") from None
    if not scorers:
        raise UsageError("nothing to evaluate: give --metrics, --judge and/or --judges")
    names = [s.name for s in scorers]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"scorer given twice: {', '.join(dupes)}")
    return scorers


def run_spec(args: argparse.Namespace, dataset: LoadedDataset | LiveDataset, invalid: Skipped, scorers: list[Scorer],
             cfg: ProviderConfig, run_id: str) -> RunSpec:
    """The run the flags ask for, over the dataset's valid rows (a file read as the run goes stays one)."""
    from rageval_core.data.datasets.live import LiveDataset
    from rageval_core.run.spec import RunSpec

    return RunSpec(
        dataset if isinstance(dataset, LiveDataset) else dataset.samples,
        scorers,
        provider=cfg,
        concurrency=args.concurrency,
        options={"reask": getattr(args, "reask", 1)},
        repeats=getattr(args, "repeats", None),
        repeat_temperature=getattr(args, "repeat_temperature", None),
        run_id=run_id,
        resume=bool(getattr(args, "resume", None)),
        dataset_name=dataset.name,
        dataset_digest=dataset.content_hash,
        invalid_rows=invalid,
        late_settings=lambda: {"dataset_issues": issues_for_export(dataset)},
        settings={
            "metrics": [s.name for s in scorers if s.method == "decomposed"],
            "judges": list(args.judge or []),
            "economy": bool(getattr(args, "economy", False)),
            "cache": not args.no_cache,
            "replay_log": args.replay_log,
            "data": str(args.data),
            "dataset_issues": issues_for_export(dataset),
            **_map_setting(args),
        },
    )


def _map_setting(args: argparse.Namespace) -> dict[str, Any]:
    """``{"column_map": ...}`` when the dataset was read through ``--map`` (so the run's file can be read again)."""
    from rageval_core.cli.dataset_flags import column_map_of

    found = column_map_of(args)
    return {"column_map": found.to_settings()} if found else {}


@dataclass(frozen=True)
class BatchFlags:
    """``--batch``: how often to poll, and the jobs submitted before to collect."""

    poll_s: float
    attach: tuple[str, ...] = ()


def spec_from_args(args: argparse.Namespace, dataset: LoadedDataset | LiveDataset, invalid: Skipped,
                   scorers: list[Scorer]) -> RunSpec:
    """``run_spec`` with the provider flags' configuration and the run id (``--resume``'s, or a new one, known
    before the run starts so an abort can name it)."""
    from rageval_core.run.spec import SpecError
    from rageval_core.store.runs import new_run_id

    try:
        return run_spec(args, dataset, invalid, scorers, provider_config(args), getattr(args, "resume", None) or new_run_id())
    except SpecError as exc:
        raise UsageError(str(exc)) from None


def batch_flags(args: argparse.Namespace) -> BatchFlags | None:
    return BatchFlags(args.batch_poll, tuple(args.batch_job or [])) if getattr(args, "batch", False) else None


def run_scorers(spec: RunSpec, store: Store, *, quiet: bool, batch: BatchFlags | None = None) -> Run:
    """Build the providers of ``spec`` and run it, storing the run; the first Ctrl-C finishes the calls in
    flight (resumable), a second aborts. Shared by ``evaluate`` and ``trust DATA``."""
    from rageval_core.run.batch import BatchCancelled, BatchError
    from rageval_core.session.allocator import tune_memory_for_run
    from rageval_core.llm.base import ProviderError
    from rageval_core.run import RunError

    cfg = spec.provider
    assert cfg is not None
    tune_memory_for_run(cfg.provider)  # before the run's worker threads start (see session/allocator.py)
    cancel = threading.Event()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    run_id = spec.run_id

    def on_sigint(_sig: int, _frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        # Set before printing: a second Ctrl-C can run this handler again inside the first one's write, and
        # must find the run already cancelled (else it is taken for a first one and the abort waits for the
        # calls in flight; the cancel test failed that way under load).
        cancel.set()
        err(f"\ninterrupted: sending nothing new, finishing calls in flight (Ctrl-C again to abort); "
            f"resume with: --resume {run_id}")

    if threading.current_thread() is threading.main_thread():
        for sig in previous:  # SIGTERM (a container stop, `kill`) behaves as Ctrl-C: resumable, nothing lost
            signal.signal(sig, on_sigint)
    prefetcher = None
    if batch is None and not spec.streamed:
        from rageval_core.providers.config import embedding_choice
        from rageval_core.offline.prefetch import start_for_run

        prefetcher = start_for_run(cfg.provider, embedding_choice(cfg).model, spec.samples)
    progress = None if quiet else ProgressBar(sys.stderr)
    try:
        return _execute(spec, store, cancel, progress, batch)
    except BatchCancelled as exc:
        err(str(exc))
        raise KeyboardInterrupt from None
    except (RunError, ProviderError, BatchError) as exc:  # bad run id, a provider stack that cannot be built, a failed batch job
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        # The second Ctrl-C: exit now. Abandoned calls' threads would keep the interpreter alive until their
        # deadline, so leave without waiting for them (the store commits each result on its own).
        err(f"aborted; resume with: --resume {run_id}")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)
    finally:
        if prefetcher is not None:
            prefetcher.stop()
        if threading.current_thread() is threading.main_thread():
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _execute(spec: RunSpec, store: Store, cancel: threading.Event, progress: Callable[[Progress], None] | None,
             batch: BatchFlags | None) -> Run:
    """The providers built once for ``spec``, then the run (through the batch API with ``--batch``)."""
    from rageval_core.session.for_run import build_and_run, build_and_run_batched

    if batch is not None:
        return build_and_run_batched(spec, store, poll_s=batch.poll_s, say=err, attach=batch.attach, cancel=cancel,
                                     progress=progress)
    return build_and_run(spec, store, progress=progress, cancel=cancel)


LOADING_EVERY = 10_000  # rows between "loading" lines on stderr


def load_rows(path: str, *, quiet: bool = True, column_map: ColumnMap | None = None) -> tuple[LoadedDataset, list[RowInfo]]:
    """The dataset and its skipped rows; file errors, warnings and skipped rows go to stderr. Nothing to
    evaluate is a usage error (exit 2) after the reasons are printed. Unless ``quiet``, a large file says
    how far its reading got every 10,000 rows (a 100,000-row file takes seconds to read and check).
    ``column_map`` (``--map``) says which column holds which field."""
    from rageval_core.data.datasets import load_dataset

    def on_row(n: int) -> None:
        if n % LOADING_EVERY == 0:
            err(f"loading {Path(path).name}: {n:,} rows read")

    dataset = load_dataset(path, on_row=None if quiet else on_row, column_map=column_map)
    invalid = invalid_rows(dataset)
    report_dataset(dataset, invalid)
    if not dataset.samples:
        raise UsageError(f"{path}: no valid rows to evaluate (the reasons are above)")
    return dataset, invalid
