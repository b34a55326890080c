"""The flags every command that reads a dataset shares: ``--map field=column,...`` and ``--contexts-sep`` (which
column holds which field, for names the loader does not know), and ``--naming`` for what writes rows back out."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rageval_core.cli.common import UsageError

NAMING_HELP = ("field names of the written rows: seed (question, contexts, answer, ground_truth), ragas (user_input, "
               "retrieved_contexts, response, reference) or deepeval (input, retrieval_context, actual_output, "
               "expected_output), each in the shape that tool reads back (docs/datasets.md)")


def add_map_args(parser: Any) -> None:
    """``--map`` (repeatable) and ``--contexts-sep`` on ``parser`` (or an argument group)."""
    parser.add_argument("--map", dest="column_map", action="append", metavar="FIELD=COLUMN[,...]",
                        help="which column holds each field when the file's names are not known: e.g. "
                        "question=prompt,contexts=docs,answer=reply,ground_truth=gold (fields: id, question, contexts, "
                        "answer, ground_truth; repeatable)")
    parser.add_argument("--contexts-sep", metavar="SEP",
                        help="how contexts joined in one text cell are split: blank-line, newline, pipe, triple-pipe or "
                        "the separator itself (\\n for a newline); default: the file's own conventions")


def add_naming_arg(parser: Any, default: str | None = "seed") -> None:
    """``--naming seed|ragas|deepeval``."""
    parser.add_argument("--naming", choices=("seed", "ragas", "deepeval"), default=default, help=NAMING_HELP)


def column_map_of(args: argparse.Namespace) -> Any:
    """The ``ColumnMap`` the flags give, or None; a bad map is a usage error naming the part that cannot be read."""
    from rageval_core.data.datasets import parse_column_map

    specs = getattr(args, "column_map", None) or []
    separator = getattr(args, "contexts_sep", None)
    if not specs and separator is None:
        return getattr(args, "resumed_map", None)  # ``--resume``: the map the run was started with
    try:
        return parse_column_map(specs, separator) or None
    except ValueError as exc:
        raise UsageError(f"--map: {exc}") from None


def adopt_resumed_map(args: argparse.Namespace, open_store: Callable[[argparse.Namespace], Any]) -> None:
    """``evaluate --resume RUN``: read the file through the ``--map`` / ``--contexts-sep`` RUN was started with (the
    run keeps them in its settings), so a resume needs only the file and the run id. Flags given again must say the
    same, or this is a usage error naming both maps (the file would be read another way). Nothing more to do for a
    run that does not exist (the runner says so) or was read without a map; a bad map is a usage error either way."""
    from rageval_core.data.datasets.column_map import ColumnMap

    given = column_map_of(args)  # a bad map is a usage error, resume or not
    run_id = getattr(args, "resume", None)
    info = open_store(args).find_run(str(run_id)) if run_id else None  # the store opened only for a resume
    stored = ColumnMap.from_settings((info.settings or {}).get("column_map")) if info is not None else None
    if stored is None:
        return
    if given is not None and given != stored:
        raise UsageError(f"--resume {run_id}: the run read its file through --map {stored.describe()}, not "
                         f"{given.describe()}; give the same --map or none (the run's own is used)")
    args.resumed_map = stored
