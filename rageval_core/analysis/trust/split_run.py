"""A dataset's label split as the workbench keeps it: dealt once by ``splits.assign_splits``, stored with the
labels (``rageval_core.store.label_splits``), extended when new rows appear, re-dealt only when the seed or
the fractions change. The pure dealing lives in ``splits``; this module only reads and writes the store.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
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


def current_split(store: Store, dataset_hash: str, *, dataset_name: str | None = None,
                  row_ids: Collection[str] | None = None) -> SplitState | None:
    """The stored split of a dataset (``None`` if never split). With the dataset's name and row ids, a version
    never split takes over the split of its previous version (``inherit_split``), so one edited row does not
    deal a fresh test set with its look counter at 0."""
    stored = label_splits.load_split(store, dataset_hash)
    if stored is None and dataset_name and row_ids:
        stored = inherit_split(store, dataset_hash, dataset_name, row_ids)
    if stored is None:
        return None
    return SplitState(stored.assignment, stored.seed, stored.fractions, label_splits.count_test_looks(store, dataset_hash))


def inherit_split(store: Store, dataset_hash: str, dataset_name: str, row_ids: Collection[str]) -> label_splits.StoredSplit | None:
    """Key the split on row identity across versions of one dataset: the split stored for another content hash
    of a dataset of the same name (its runs say which) that shares at least half the rows is copied, row by row,
    to this version, with its seed and fractions, and its test looks are carried over (one look recorded per look,
    saying where it came from). Rows it lacks are dealt later by ``ensure_split``; ``None`` when no version fits."""
    ids = {str(r) for r in row_ids}
    best: tuple[int, str, label_splits.StoredSplit] | None = None
    seen: set[str] = set()
    for info in store.list_runs():  # newest first: a tie keeps the latest version
        other = info.dataset_hash
        if info.dataset_name != dataset_name or not other or other == dataset_hash or other in seen:
            continue
        seen.add(other)
        old = label_splits.load_split(store, other)
        shared = len(ids & set(old.assignment)) if old is not None else 0
        if old is None or not shared or 2 * shared < min(len(ids), len(old.assignment)):
            continue
        if best is None or shared > best[0]:
            best = (shared, other, old)
    if best is None:
        return None
    _, other, old = best
    label_splits.save_split(store, dataset_hash, {r: s for r, s in old.assignment.items() if r in ids}, old.seed,
                            old.fractions)
    for _ in range(label_splits.count_test_looks(store, other)):
        label_splits.record_test_look(store, dataset_hash, f"carried from {other[:12]}")
    return label_splits.load_split(store, dataset_hash)


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


__all__ = ["SplitState", "current_split", "ensure_split", "inherit_split"]
