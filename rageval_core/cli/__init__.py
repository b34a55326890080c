"""``python -m rageval_core``: evaluate a dataset in CI, compare runs, list and export run history, build
test sets, report how far scores can be trusted. One module per command group; this one only builds the parser and maps outcomes to exit codes.

Exit codes (the contract in docs/cli.md): 0 done; 1 a ``--fail-under`` threshold missed (a threshold whose every
row is unscored counts as missed); 2 nothing could be evaluated (no valid rows, bad configuration, or
``--strict`` with bad rows); 3 an internal error (one line on stderr naming the log file under the state
directory that holds the traceback; never a traceback on the terminal); 4 results not kept (computed, but the
store could not keep them all, e.g. a full disk mid-run: what was lost, where it is kept and how to resume are
said); 130 interrupted. API keys come
from the environment only and are never printed. An error that escapes a command takes its code from its branch
of the error tree (``core.errors``, ``EXIT_CODES`` below); anything outside the tree is an internal error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from rageval_core.cli import prefetch
from rageval_core.cli.common import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_NOT_KEPT, ProgressBar, UsageError, err
from rageval_core.analysis.thresholds import Threshold, ThresholdCheck, check_thresholds, parse_threshold
from rageval_core.core.errors import ConfigError, DataError, ProviderError, RagevalError, ResultsNotKept, StoreError

__all__ = [
    "EXIT_CODES", "ProgressBar", "Threshold", "ThresholdCheck", "UsageError", "build_parser", "check_thresholds", "exit_code",
    "main", "parse_threshold",
]

# The error tree's branches and their exit codes (docs/cli.md), most specific first: an error that escapes a command
# takes the code of the first class it is an instance of. Exit 4 (results computed but not kept) goes first, as the
# StoreError subclass that says so; exit 1 is never an error (a command returns it).
EXIT_CODES: tuple[tuple[type[RagevalError], int], ...] = (
    (ResultsNotKept, EXIT_NOT_KEPT),  # results computed but not all kept by the store (a full disk mid-run)
    (DataError, EXIT_BAD_INPUT),  # a dataset, trace or document that cannot be read as given
    (ConfigError, EXIT_BAD_INPUT),  # flags, a spec, a rubric, a template, a judges file, a mapping (UsageError too)
    (StoreError, EXIT_BAD_INPUT),  # the store cannot be opened, read or written as asked
    (ProviderError, EXIT_BAD_INPUT),  # a provider the run cannot go on without (a cancelled one: 130, see exit_code)
    (RagevalError, EXIT_BAD_INPUT),  # on the root itself: still a message for the user, not a bug
)


def exit_code(exc: BaseException) -> int:
    """The exit code of an error that escaped a command: its branch's (``EXIT_CODES``), 130 for an interrupt (a
    provider call cancelled by it too), 3 for anything outside the error tree."""
    if isinstance(exc, KeyboardInterrupt) or (isinstance(exc, ProviderError) and exc.kind == "cancelled"):
        return EXIT_INTERRUPTED
    return next((code for cls, code in EXIT_CODES if isinstance(exc, cls)), EXIT_INTERNAL)


def build_parser() -> argparse.ArgumentParser:
    # The command modules are imported here, not at the top: ``main`` starts the provider SDK's import first.
    from rageval_core.cli import annotate, compare, dataset, evaluate, phoenix, report, runs, synth, traces, trust, ui

    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog=invoked if invoked.startswith("rageval") else "python -m rageval_core",
        description="RAG Eval Workbench CLI: evaluate datasets (exit 0 done, 1 threshold missed, 2 bad input, "
        "3 internal error, 4 results not kept, 130 interrupted), compare and export runs.",
    )
    parser.add_argument("--db", help="SQLite store (default: .rageval/rageval.sqlite or $RAGEVAL_HOME)")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (evaluate, compare, runs, dataset, trust, report, traces, phoenix, annotate, ui):
        group.add_command(sub)
    synth.add_commands(sub)  # synth, rag (the synthetic-QA → RAG pipeline)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    prefetch.start(sys.argv[1:] if argv is None else argv)  # the SDK's ~1 s import, beside the work below
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["ui"]:  # everything after `ui` belongs to Streamlit (--server.port ...), not to this parser
        from rageval_core.cli import ui

        return ui.run(given[1:])
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, which matches the contract
        return int(exc.code or 0)
    if getattr(args, "concurrency", 1) is not None and getattr(args, "concurrency", 1) < 1:
        err("--concurrency must be at least 1")
        return EXIT_BAD_INPUT
    restore = _sigterm_as_ctrl_c()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        err("aborted")
        return EXIT_INTERRUPTED
    except RagevalError as exc:
        code = exit_code(exc)
        err("aborted" if code == EXIT_INTERRUPTED else f"error: {_unwritable(exc) or exc}")
        return code
    except Exception as exc:  # noqa: BLE001 - the contract: exit 3 and a log file, never a traceback
        message = _store_fault(exc, args) or _unwritable(exc)
        if message is None:
            return _internal_error(exc, argv)
        err(f"error: {message}")  # a full disk or a read-only folder is the machine's state, not a bug
        return EXIT_BAD_INPUT
    finally:
        restore()


def _store_fault(exc: BaseException, args: argparse.Namespace) -> str | None:
    """SQLite's own error for a store whose pages turned out damaged after it opened ("database disk image is
    malformed" from a query) or for a write to a read-only one outside the store's ``write``: the store's message
    naming the file and what to do, not an internal error; else None."""
    from rageval_core.core.paths import database_path
    from rageval_core.store.db import STORE_ERRORS, store_fault

    if not isinstance(exc, STORE_ERRORS):  # SQLite's errors (the store's own are RagevalErrors, said already)
        return None

    try:
        path = getattr(args, "db", None) or database_path()
    except RagevalError:
        return None
    fault = store_fault(exc, path)
    return None if fault is None else str(fault)


def _unwritable(exc: BaseException) -> str | None:
    """A full disk or a read-only folder said as such (not an internal error), else None."""
    import errno

    from rageval_core.store.db import StoreBusy, StoreReadOnly, is_unwritable

    if isinstance(exc, StoreReadOnly):  # says which store, why and what to do already
        return None
    cause = exc.__cause__ if isinstance(exc, StoreBusy) and exc.__cause__ is not None else exc
    if is_unwritable(cause):  # an SQLite error (or a lock given up on) saying so
        return f"the store cannot be written ({cause}): a full disk or a read-only folder; nothing already stored is lost"
    if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT, errno.EPERM):
        return f"cannot write {cause.filename or 'a file'}: {cause.strerror}; nothing already stored is lost"
    return None


def _sigterm_as_ctrl_c() -> Callable[[], object]:
    """SIGTERM (a container stop, ``kill PID``) ends every command as Ctrl-C does: exit 130 with what was
    written kept, never a silent kill mid-write (``evaluate`` installs its own two-step handler for both)."""
    import signal
    import threading

    def on_sigterm(_sig: int, _frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    return lambda: signal.signal(signal.SIGTERM, previous)


def _internal_error(exc: BaseException, argv: Sequence[str] | None) -> int:
    """Write the traceback, through the redaction step (the command line may hold a credentialed --base-url or
    a literal --header value), to a log under the state directory; one line on stderr."""
    import datetime
    import traceback

    from rageval_core.core.redact import redact

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    command = " ".join(_shown_argv(sys.argv[:1] + list(sys.argv[1:] if argv is None else argv)))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
    try:
        from rageval_core.core.paths import logs_dir
        from rageval_core.core.private import write_private_text

        log = logs_dir() / f"internal-error-{stamp}.log"
        write_private_text(log, redact(f"command: {command}\n{text}"))
        where = f"traceback in {log}"
    except OSError as write_exc:
        where = f"and the log could not be written ({write_exc.strerror or write_exc})"
    except RagevalError as write_exc:  # no state folder to write it in (RAGEVAL_HOME is a file)
        where = f"and the log could not be written ({write_exc})"
    err(f"internal error ({type(exc).__name__}); {where} — please report it")
    return EXIT_INTERNAL


def _shown_argv(argv: Sequence[str]) -> list[str]:
    """The command line as the crash log shows it: a ``--header`` value keeps only its name (any header may
    carry a token, not just the ones the redaction patterns know)."""
    out: list[str] = []
    for n, arg in enumerate(argv):
        if n and argv[n - 1] == "--header":
            arg = arg.partition(":")[0] + ": ***"
        elif arg.startswith("--header="):
            arg = arg.partition(":")[0] + ": ***"
        out.append(arg)
    return out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


