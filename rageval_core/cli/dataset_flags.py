"""The flags every command that reads a dataset shares: ``--map field=column,...`` and ``--contexts-sep`` (which
column holds which field, for names the loader does not know), and ``--naming`` for what writes rows back out."""

from __future__ import annotations

import argparse
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
        return None
    try:
        return parse_column_map(specs, separator) or None
    except ValueError as exc:
        raise UsageError(f"--map: {exc}") from None
