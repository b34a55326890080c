"""What the CLI says about a loaded dataset: file errors, the loader's warnings and the rows it skipped
(the first ``LISTED`` of each, then a count), and the skipped rows as ``RowInfo`` for the run and export."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from rageval_core.cli.common import err
from rageval_core.core.termtext import terminal_text

if TYPE_CHECKING:
    from rageval_core.data.datasets.live import LiveDataset
    from rageval_core.data.datasets.model import LoadedDataset
    from rageval_core.store.runs import RowInfo

LISTED = 20  # issues printed per kind; all of them go to the export (settings.dataset_issues)


def invalid_rows(dataset: LoadedDataset | LiveDataset) -> list[RowInfo]:
    """One ``RowInfo`` per skipped row (``row N``, suffixed when a loaded row already uses that id, so the
    run's row table never holds one id twice)."""
    from rageval_core.data.datasets.live import LiveDataset
    from rageval_core.store.runs import RowInfo

    loaded = dataset.ids if isinstance(dataset, LiveDataset) else {s.id for s in dataset.samples}
    by_row: dict[int, list[str]] = {}
    for issue in dataset.errors:
        if issue.row is not None:
            by_row.setdefault(issue.row, []).append((f"{issue.field}: " if issue.field else "") + issue.message)
    out = []
    for row, msgs in sorted(by_row.items()):
        name = f"row {row}"
        while name in loaded:
            name += " (skipped)"
        out.append(RowInfo(name, row - 1, None, False, "; ".join(msgs)))
    return out


def _where(issue: Any) -> str:
    where = f"row {issue.row}" if issue.row is not None else issue.file
    return where + (f", {issue.field}" if issue.field else "")


def _listed(title: str, lines: Sequence[str]) -> None:
    err(title)
    for line in lines[:LISTED]:
        err("  " + terminal_text(line))
    if len(lines) > LISTED:
        err(f"  … and {len(lines) - LISTED} more (all of them in the export, settings.dataset_issues)")


def _good(dataset: LoadedDataset | LiveDataset) -> int:
    from rageval_core.data.datasets.live import LiveDataset

    return dataset.n_samples if isinstance(dataset, LiveDataset) else len(dataset.samples)


def report_dataset(dataset: LoadedDataset | LiveDataset, skipped: Sequence[Any]) -> None:
    """Print warnings, skipped rows with their reasons, then file errors, on stderr."""
    warnings = [f"{_where(i)}: {i.message}" for i in dataset.warnings]
    if warnings:
        _listed(f"dataset: {len(warnings)} warning(s) (rows loaded as described):", warnings)
    if skipped:
        _listed(
            f"dataset: {len(skipped)} bad row(s) skipped, {_good(dataset)} evaluated (of {dataset.total_rows} rows):",
            [f"{r.sample_id}: {r.error}" for r in skipped],
        )
    for issue in dataset.file_errors:
        err(f"dataset error: {terminal_text(_where(issue))}: {terminal_text(issue.message)}")


def issues_for_export(dataset: LoadedDataset | LiveDataset) -> list[dict[str, Any]]:
    """Every issue (errors and warnings) as dicts, for the run's settings and so the export."""
    return [i.to_dict() for i in dataset.issues]
