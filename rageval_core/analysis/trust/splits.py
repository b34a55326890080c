"""Label splits: train (few-shot source), dev (iterate on the prompt), test (look once, at the end).

API for other modules (the Prompts page's "vs people" panel builds on these names):

- ``parse_split(text) -> dict[str, float]``: ``"train=0.2,dev=0.4,test=0.4"`` → fractions (ValueError
  with a message naming the bad part).
- ``split_rows(row_ids, categories, labels) -> list[SplitRow]``: the rows with what stratifies them.
- ``assign_splits(rows, fractions=DEFAULT_FRACTIONS, seed=0) -> dict[row_id, split]``: pure and seeded.
- ``rows_in(assignment, split) -> list[str]`` and ``split_counts(assignment) -> {split: n}``.
- Stored per dataset hash (``rageval_core.store.label_splits``) through
  ``rageval_core.analysis.trust.split_run.ensure_split(store, dataset_hash, rows, fractions, seed)``, which
  keeps an earlier assignment and only adds rows it has not seen; ``record_test_look`` counts each look
  at test figures and ``count_test_looks`` reads the count (both in ``rageval_core.store.label_splits``).

Why stratified: with 16 labelled rows a plain random split can put every failing answer in train, so dev
and test say nothing about failures. Rows are grouped by (category, their labels); the groups are laid
end to end in seeded random order (rows shuffled within each), and the splits are dealt along that
sequence by largest deficit (at every position the split furthest below its share of the rows so far
gets the row). So every group — being a stretch of the sequence — is split in proportion to within one
row, and the split sizes are the fractions of the total to within one row. Splits are of rows, so every
criterion of one row sits in the same split; rows of one pair group or a row and its translation
(``x`` and ``x-en``) are dealt as one unit, so a few-shot example's twin never sits in dev or test.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from rageval_core.core.errors import ConfigError

TRAIN = "train"
DEV = "dev"
TEST = "test"
SPLITS = (TRAIN, DEV, TEST)
DEFAULT_FRACTIONS: dict[str, float] = {TRAIN: 0.2, DEV: 0.4, TEST: 0.4}


@dataclass(frozen=True)
class SplitRow:
    """One row as the split sees it: its id, category and human labels (``{criterion: 0/1}``)."""

    row_id: str
    category: str | None = None
    labels: Mapping[str, int] = field(default_factory=dict)
    group: str | None = None  # rows of one group (a pair, a translation) always share a split

    @property
    def stratum(self) -> str:
        """The group the row is stratified in: category and every label, in a stable text form."""
        labels = ",".join(f"{c}={int(v)}" for c, v in sorted(self.labels.items()))
        return f"{self.category or ''}|{labels}"


def parse_split(text: str) -> dict[str, float]:
    """``train=0.2,dev=0.4,test=0.4`` → fractions summing to 1 (a split left out gets 0).

    Raises ``ValueError`` naming the bad part: an unknown split name, a value that is no number or is
    negative, a repeated name, or fractions that do not sum to 1 (within 0.001)."""
    out = {name: 0.0 for name in SPLITS}
    seen: set[str] = set()
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in SPLITS:
            raise ConfigError(f"--split {text!r}: {part!r} is not train=, dev= or test= with a fraction")
        if name in seen:
            raise ConfigError(f"--split {text!r}: {name} is given twice")
        seen.add(name)
        try:
            share = float(value)
        except ValueError:
            raise ConfigError(f"--split {text!r}: {value.strip()!r} is not a number") from None
        if not 0.0 <= share <= 1.0:
            raise ConfigError(f"--split {text!r}: {name}={value.strip()} is outside 0..1")
        out[name] = share
    total = sum(out.values())
    if abs(total - 1.0) > 1e-3:
        raise ConfigError(f"--split {text!r}: the fractions sum to {total:g}, not 1")
    return {k: v / total for k, v in out.items()}


def format_split(fractions: Mapping[str, float]) -> str:
    """The inverse of ``parse_split``: ``train=0.2,dev=0.4,test=0.4``."""
    return ",".join(f"{name}={float(fractions.get(name, 0.0)):g}" for name in SPLITS)


def split_rows(
    row_ids: Iterable[str],
    categories: Mapping[str, str | None] | None = None,
    labels: Mapping[str, Mapping[str, int]] | None = None,
    groups: Mapping[str, str] | None = None,
    parallel_suffix: str | None = None,
) -> list[SplitRow]:
    """``SplitRow`` for each id: its category (``categories``), labels (``labels``: ``{criterion:
    {row_id: 0/1}}``, what ``HumanLabels.for_criterion`` gives per criterion) and group (``groups``, e.g.
    pair groups; with ``parallel_suffix`` a row ``x-en`` joins row ``x`` when both are present, so a
    translation never lands in another split than its original)."""
    ids = [str(r) for r in row_ids]
    present = set(ids)
    cats = categories or {}
    by_row: dict[str, dict[str, int]] = {}
    for criterion, values in (labels or {}).items():
        for rid, v in values.items():
            by_row.setdefault(str(rid), {})[criterion] = int(v)

    def group_of(rid: str) -> str:
        base = rid
        if parallel_suffix and rid.endswith(parallel_suffix) and rid[: -len(parallel_suffix)] in present:
            base = rid[: -len(parallel_suffix)]
        group = (groups or {}).get(rid) or (groups or {}).get(base)
        return f"group:{group}" if group is not None else f"row:{base}"

    return [SplitRow(rid, cats.get(rid), by_row.get(rid, {}), group_of(rid)) for rid in ids]


def _stratum_seed(seed: int, stratum: str) -> int:
    """A seed per group that does not depend on the other groups (adding a category leaves the order of
    rows inside every other one unchanged)."""
    return int.from_bytes(hashlib.sha256(f"{seed}\x00{stratum}".encode()).digest()[:8], "big")


def deal(sizes: Sequence[int], fractions: Mapping[str, float]) -> list[str]:
    """Split names for units of ``sizes`` rows, dealt by largest deficit: each unit goes to the split
    whose row count is furthest below its fraction of the rows dealt so far, this unit included (ties:
    the order of ``SPLITS``). With units of one row, each split gets its fraction of every prefix to
    within one row."""
    names = [s for s in SPLITS if fractions.get(s, 0.0) > 0.0]
    taken = {s: 0 for s in names}
    dealt = 0
    out: list[str] = []
    for size in sizes:
        dealt += size
        pick = max(names, key=lambda s: (fractions[s] * dealt - taken[s], -SPLITS.index(s)))
        taken[pick] += size
        out.append(pick)
    return out


def assign_splits(
    rows: Sequence[SplitRow], fractions: Mapping[str, float] | None = None, seed: int = 0
) -> dict[str, str]:
    """``{row_id: "train" | "dev" | "test"}``, stratified by category and labels (module docstring).

    Pure and seeded: the same rows (in any order), fractions and seed give the same assignment."""
    shares = dict(fractions or DEFAULT_FRACTIONS)
    if not any(v > 0 for v in shares.values()):
        raise ConfigError("every split fraction is 0")
    units: dict[str, list[SplitRow]] = {}
    for row in sorted(rows, key=lambda r: r.row_id):
        units.setdefault(row.group or f"row:{row.row_id}", []).append(row)
    strata: dict[str, list[str]] = {}  # a unit is stratified by its first row
    for key, members in sorted(units.items()):
        strata.setdefault(members[0].stratum, []).append(key)
    order = sorted(strata)
    random.Random(seed).shuffle(order)
    sequence: list[str] = []
    for stratum in order:
        keys = list(strata[stratum])
        random.Random(_stratum_seed(seed, stratum)).shuffle(keys)
        sequence.extend(keys)
    picks = deal([len(units[k]) for k in sequence], shares)
    return {row.row_id: split for key, split in zip(sequence, picks) for row in units[key]}


def rows_in(assignment: Mapping[str, str], split: str) -> list[str]:
    """The row ids of one split, in id order."""
    return sorted(rid for rid, s in assignment.items() if s == split)


def split_counts(assignment: Mapping[str, str], among: Iterable[str] | None = None) -> dict[str, int]:
    """Rows per split (``among``: only these ids, e.g. the rows labelled on one criterion)."""
    keep = None if among is None else set(among)
    counts = {name: 0 for name in SPLITS}
    for rid, s in assignment.items():
        if keep is None or rid in keep:
            counts[s] = counts.get(s, 0) + 1
    return counts


__all__ = [
    "DEFAULT_FRACTIONS",
    "DEV",
    "SPLITS",
    "TEST",
    "TRAIN",
    "SplitRow",
    "assign_splits",
    "deal",
    "format_split",
    "parse_split",
    "rows_in",
    "split_counts",
    "split_rows",
]
