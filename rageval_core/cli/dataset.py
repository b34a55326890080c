"""``dataset check FILE`` (the rows as they will be read, and every problem) and ``dataset convert FILE --out OUT``
(written back in the seed's, ragas's or DeepEval's shape), both through ``--map`` when the file's names are not known."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import EXIT_BAD_INPUT, EXIT_OK, UsageError, echo, err, table
from rageval_core.cli.dataset_flags import add_map_args, add_naming_arg, column_map_of
from rageval_core.cli.dataset_report import invalid_rows, report_dataset

if TYPE_CHECKING:
    from collections.abc import Iterable
    from rageval_core.core.types import Sample

PREVIEW_CHARS = 60


def _short(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def preview_rows(samples: Iterable[Sample], n: int) -> list[list[Any]]:
    """The first ``n`` rows as the preview table shows them: id, question, contexts (count: first), answer,
    reference, external scores."""
    out = []
    for s in list(samples)[:n]:
        first = f"{len(s.contexts)}: {_short(s.contexts[0], 40)}" if s.contexts else "0"
        scores = ", ".join(f"{k}={'-' if v is None else f'{v:.3g}'}" for k, v in s.external_scores.items())
        out.append([s.id, _short(s.question), first, _short(s.answer), _short(s.ground_truth or ""), scores])
    return out


def _load(args: argparse.Namespace) -> Any:
    from rageval_core.data.datasets import load_dataset

    dataset = load_dataset(args.file, column_map=column_map_of(args))
    report_dataset(dataset, invalid_rows(dataset))
    return dataset


def cmd_dataset_check(args: argparse.Namespace) -> int:
    dataset = _load(args)
    echo(f"{args.file}: {len(dataset.samples)} of {dataset.total_rows} row(s) read ({dataset.format}, {dataset.language}), "
         f"{len(dataset.errors)} error(s), {len(dataset.warnings)} warning(s); content hash {dataset.content_hash[:12]}")
    if dataset.samples and args.rows:
        echo(table(["id", "question", "contexts", "answer", "ground_truth", "external scores"], preview_rows(dataset.samples, args.rows)))
    return EXIT_OK if dataset.samples else EXIT_BAD_INPUT


def cmd_dataset_convert(args: argparse.Namespace) -> int:
    from rageval_core.data.datasets import DatasetError, save_dataset

    dataset = _load(args)
    if not dataset.samples:
        raise UsageError(f"{args.file}: no valid rows to write (the reasons are above)")
    try:
        path = save_dataset(dataset.samples, args.out, naming=args.naming)
    except DatasetError as exc:
        raise UsageError(str(exc)) from None
    if dataset.bad_rows:
        err(f"{len(dataset.bad_rows)} bad row(s) left out (listed above)")
    echo(f"{len(dataset.samples)} row(s) → {path} ({args.naming} names)")
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``dataset check | convert``."""
    ds = sub.add_parser("dataset", help="check how a dataset file reads, or write it back in ragas's or DeepEval's shape")
    dsub = ds.add_subparsers(dest="dataset_command", required=True)
    ck = dsub.add_parser("check", help="the rows as they will be read (a preview) and every problem, by file, row and field")
    ck.add_argument("file", help="dataset file (.json, .jsonl, .csv)")
    ck.add_argument("--rows", type=int, default=5, help="rows to preview (default 5; 0 for none)")
    add_map_args(ck)
    ck.set_defaults(func=cmd_dataset_check)
    cv = dsub.add_parser("convert", help="write the valid rows to another file, e.g. in ragas's or DeepEval's names")
    cv.add_argument("file", help="dataset file (.json, .jsonl, .csv)")
    cv.add_argument("--out", required=True, help="the file to write: .json, .jsonl or .csv")
    add_naming_arg(cv)
    add_map_args(cv)
    cv.set_defaults(func=cmd_dataset_convert)
