"""``python -m rageval_core``: evaluate a dataset in CI, compare runs, list and export run history, build
test sets. One module per command group; this one only builds the parser and maps outcomes to exit codes.

Exit codes (the README's contract): 0 done; 1 a ``--fail-under`` threshold missed (a threshold whose every
row is unscored counts as missed); 2 nothing could be evaluated (no valid rows, bad configuration, or
``--strict`` with bad rows); 130 interrupted. API keys come from the environment only and are never printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from rageval_core.cli import compare, evaluate, runs, synth
from rageval_core.cli.common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, ProgressBar, UsageError, err
from rageval_core.cli.thresholds import Threshold, ThresholdCheck, check_thresholds, parse_threshold

__all__ = ["ProgressBar", "Threshold", "ThresholdCheck", "UsageError", "build_parser", "check_thresholds", "main", "parse_threshold"]


def build_parser() -> argparse.ArgumentParser:
    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog=invoked if invoked.startswith("rageval") else "python -m rageval_core",
        description="RAG Eval Workbench CLI: evaluate datasets (exit 0 ok, 1 threshold missed, 2 bad input), compare and export runs.",
    )
    parser.add_argument("--db", help="SQLite store (default: .rageval/rageval.sqlite or $RAGEVAL_HOME)")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (evaluate, compare, runs):
        group.add_command(sub)
    synth.add_commands(sub)  # synth, rag (the synthetic-QA → RAG pipeline)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, which matches the contract
        return int(exc.code or 0)
    if getattr(args, "concurrency", 1) is not None and getattr(args, "concurrency", 1) < 1:
        err("--concurrency must be at least 1")
        return EXIT_BAD_INPUT
    try:
        return int(args.func(args))
    except UsageError as exc:
        err(f"error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err("aborted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


