"""A dataset's label split as the workbench keeps it: dealt once by ``splits.assign_splits``, stored with the
labels (``rageval_core.store.label_splits``), extended when new rows appear, re-dealt only when the seed or
the fractions change. The pure dealing lives in ``splits``; this module only reads and writes the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rageval_core.analysis.trust.splits import DEFAULT_FRACTIONS, SplitRow, assign_splits, split_counts
from rageval_core.store import label_splits
from rageval_core.store.runs import Store


@dataclass(frozen=True)
class SplitState:
    """The split in use: ``{row_id: split}``, how it was dealt, and how often test was looked at."""

    assignment: dict[str, str]
    seed: int
    fractions: dict[str, float]
    test_looks: int
    added: int = 0  # rows dealt now (new since the split was stored)
    redealt: bool = False  # an earlier split with other seed / fractions was replaced

    def counts(self, among: Sequence[str] | None = None) -> dict[str, int]:
        return split_counts(self.assignment, among)


def _same(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return all(abs(float(a.get(k, 0.0)) - float(b.get(k, 0.0))) < 1e-6 for k in set(a) | set(b))


def current_split(store: Store, dataset_hash: str) -> SplitState | None:
    """The stored split of a dataset (``None`` if never split); read only."""
    stored = label_splits.load_split(store, dataset_hash)
    if stored is None:
        return None
    return SplitState(stored.assignment, stored.seed, stored.fractions, label_splits.count_test_looks(store, dataset_hash))


def ensure_split(
    store: Store,
    dataset_hash: str,
    rows: Sequence[SplitRow],
    fractions: Mapping[str, float] | None = None,
    seed: int = 0,
) -> SplitState:
    """The dataset's split covering ``rows``: the stored one when it was dealt with this seed and these
    fractions (rows it lacks are dealt among themselves and added, so no stored row changes split), else a
    new one dealt over ``rows`` and stored in place of the old."""
    shares = dict(fractions or DEFAULT_FRACTIONS)
    stored = label_splits.load_split(store, dataset_hash)
    if stored is not None and stored.seed == seed and _same(stored.fractions, shares):
        new = [r for r in rows if r.row_id not in stored.assignment]
        added = assign_splits(new, shares, seed) if new else {}
        if added:
            label_splits.save_split(store, dataset_hash, added, seed, shares)
        assignment = {**stored.assignment, **added}
        return SplitState(assignment, seed, shares, label_splits.count_test_looks(store, dataset_hash), len(added))
    assignment = assign_splits(rows, shares, seed)
    label_splits.save_split(store, dataset_hash, assignment, seed, shares, replace=True)
    return SplitState(assignment, seed, shares, label_splits.count_test_looks(store, dataset_hash), len(assignment),
                      redealt=stored is not None)


__all__ = ["SplitState", "current_split", "ensure_split"]
