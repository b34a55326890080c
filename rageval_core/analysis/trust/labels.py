"""Human labels per row and criterion, from dataset columns, a labels file and the inspector's 👍 / 👎,
merged with the source kept and conflicts reported. No I/O: callers pass rows and the stored labels.

Dataset columns (top level or under a row's ``meta`` object, as in ../shared/benchmarks):

| column | criteria |
|---|---|
| ``label_faithful`` | faithfulness |
| ``label_relevant`` | answer_relevancy |
| ``label_context`` (also ``label_context_relevant``) | context_precision and context_relevance (both ask whether the retrieved context serves the question) |
| ``label_correct`` | answer_correctness |
| ``human_labels`` object | its own criterion ids (what "download with labels" writes) |

Values are 0/1 (also true/false, "yes"/"no") or a 1–5 rating. A column whose values go above 1 is a
1–5 rating and is binarised at ≥ 4 (4 and 5 pass: "good", 3 is not). Blank / null means no label.
Precedence when two sources label the same row and criterion: inspector over labels file over dataset
(the inspector is the person's latest word); any disagreement is listed as a conflict.

Pairwise sets: rows sharing a ``pair_group`` (or ``pair_id``) form pairs per criterion wherever one row
is labelled 1 and another 0 (WikiEval's pointwise mapping); a ``preferred`` column (1 = the
human-preferred answer of its group) adds pairs for ``pair_criterion`` when given, else for every criterion.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_core.core.types import (
    ANSWER_CORRECTNESS,
    ANSWER_RELEVANCY,
    CONTEXT_PRECISION,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
)

DATASET = "dataset"
FILE = "file"
INSPECTOR = "inspector"
PRECEDENCE = (INSPECTOR, FILE, DATASET)  # first wins
ALL_CRITERIA = "*"

LABEL_COLUMNS: dict[str, tuple[str, ...]] = {
    "label_faithful": (FAITHFULNESS,),
    "label_relevant": (ANSWER_RELEVANCY,),
    "label_context": (CONTEXT_PRECISION, CONTEXT_RELEVANCE),
    "label_context_relevant": (CONTEXT_PRECISION, CONTEXT_RELEVANCE),
    "label_correct": (ANSWER_CORRECTNESS,),
}
GROUP_COLUMNS = ("pair_group", "pair_id")
RATING_PASS = 4  # 1–5 ratings: 4 and 5 pass


@dataclass(frozen=True)
class Label:
    """One human verdict: ``value`` 1 = good on the criterion; ``raw`` as written (a 1–5 rating stays 4)."""

    row_id: str
    criterion: str
    value: int
    source: str
    raw: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LabelConflict:
    """Two sources disagree on one row and criterion; ``used`` is the source that won."""

    row_id: str
    criterion: str
    values: dict[str, int]
    used: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PreferencePair:
    """Two answers of one group: people prefer ``preferred`` over ``other`` on ``criterion``."""

    group: str
    criterion: str
    preferred: str
    other: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class HumanLabels:
    """Merged labels: one per (row, criterion), plus conflicts, pairs and the group of each row."""

    labels: dict[tuple[str, str], Label] = field(default_factory=dict)
    conflicts: list[LabelConflict] = field(default_factory=list)
    pairs: list[PreferencePair] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)

    def for_criterion(self, criterion: str) -> dict[str, int]:
        """``{row_id: 0/1}`` for one criterion."""
        return {rid: lab.value for (rid, crit), lab in self.labels.items() if crit == criterion}

    def criteria(self) -> list[str]:
        return list(dict.fromkeys(crit for _, crit in self.labels))

    def by_row(self) -> dict[str, list[str]]:
        """``{row_id: [criteria with a label]}``."""
        out: dict[str, list[str]] = {}
        for rid, crit in self.labels:
            out.setdefault(rid, []).append(crit)
        return out


def _as_number(value: Any) -> float | None:
    if value is None or isinstance(value, (list, dict)):
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return None if math.isnan(float(value)) else float(value)
    text = str(value).strip().lower()
    if text in ("", "none", "null", "nan", "-"):
        return None
    if text in ("yes", "true", "y", "good", "👍"):
        return 1.0
    if text in ("no", "false", "n", "bad", "👎"):
        return 0.0
    try:
        return float(text)
    except ValueError:
        return None


def _field(metadata: Mapping[str, Any], name: str) -> Any:
    """A column at the top level of a row, else under its ``meta`` object."""
    if name in metadata:
        return metadata[name]
    meta = metadata.get("meta")
    return meta.get(name) if isinstance(meta, Mapping) else None


def binarize_label(raw: float, rating: bool) -> int:
    """0/1 as given; a 1–5 rating passes at ``RATING_PASS`` or above."""
    return int(raw >= RATING_PASS) if rating else int(raw >= 0.5)


def dataset_labels(rows: Iterable[tuple[str, Mapping[str, Any]]], source: str = DATASET) -> list[Label]:
    """Labels from dataset columns of ``(row_id, metadata)`` pairs (a ``Sample``'s id and metadata).

    The scale is decided per column over all rows (any value above 1 makes it a 1–5 rating)."""
    rows = list(rows)
    raw: dict[tuple[str, str], list[tuple[str, float]]] = {}  # (scale key, column) -> [(row, value)]
    for rid, meta in rows:
        for column, criteria in LABEL_COLUMNS.items():
            v = _as_number(_field(meta, column))
            if v is not None:
                raw.setdefault((column, ",".join(criteria)), []).append((rid, v))
        nested = meta.get("human_labels")
        if isinstance(nested, Mapping):
            for criterion, value in nested.items():
                v = _as_number(value)
                if v is not None:
                    raw.setdefault((f"human_labels.{criterion}", str(criterion)), []).append((rid, v))
    out: list[Label] = []
    for (_, criteria), values in raw.items():
        rating = any(v > 1 for _, v in values)
        for rid, v in values:
            for criterion in criteria.split(","):
                out.append(Label(str(rid), criterion, binarize_label(v, rating), source, v))
    return out


def inspector_labels(stored: Mapping[str, Mapping[str, float | None]]) -> list[Label]:
    """Labels saved in the store by the inspector (``Store.labels``: ``{row_id: {criterion: 0/1}}``)."""
    return [
        Label(str(rid), str(crit), int(float(v) >= 0.5), INSPECTOR, float(v))
        for rid, by_crit in stored.items()
        for crit, v in by_crit.items()
        if v is not None
    ]


def preference_pairs(rows: Sequence[tuple[str, Mapping[str, Any]]], merged: Mapping[tuple[str, str], Label]) -> tuple[list[PreferencePair], dict[str, str]]:
    """Pairs within groups (module docstring) and ``{row_id: group}`` for every grouped row."""
    groups: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    preferred: dict[str, tuple[float, str | None]] = {}
    for rid, meta in rows:
        group = next((_field(meta, c) for c in GROUP_COLUMNS if _field(meta, c) not in (None, "")), None)
        if group is None:
            continue
        groups[rid] = str(group)
        members.setdefault(str(group), []).append(rid)
        pref = _as_number(_field(meta, "preferred"))
        if pref is not None:
            crit = _field(meta, "pair_criterion")
            preferred[rid] = (pref, None if crit in (None, "") else str(crit))
    pairs: list[PreferencePair] = []
    seen: set[tuple[str, str, str, str]] = set()

    def add(group: str, criterion: str, good: str, bad: str) -> None:
        key = (group, criterion, good, bad)
        if key not in seen:
            seen.add(key)
            pairs.append(PreferencePair(group, criterion, good, bad))

    criteria = list(dict.fromkeys(crit for _, crit in merged))
    for group, ids in members.items():
        for criterion in criteria:
            goods = [r for r in ids if (lab := merged.get((r, criterion))) is not None and lab.value == 1]
            bads = [r for r in ids if (lab := merged.get((r, criterion))) is not None and lab.value == 0]
            for g in goods:
                for b in bads:
                    add(group, criterion, g, b)
        for g in (r for r in ids if r in preferred and preferred[r][0] >= 0.5):
            for b in (r for r in ids if r in preferred and preferred[r][0] < 0.5):
                crit = preferred[g][1] or preferred[b][1] or ALL_CRITERIA
                add(group, crit, g, b)
    return pairs, groups


def merge_labels(*sources: Iterable[Label], rows: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> HumanLabels:
    """One label per (row, criterion) by ``PRECEDENCE``; disagreements become ``LabelConflict``.

    ``rows`` (row id, metadata) supply the pair groups."""
    rank = {s: i for i, s in enumerate(PRECEDENCE)}
    by_key: dict[tuple[str, str], list[Label]] = {}
    for source in sources:
        for lab in source:
            by_key.setdefault((lab.row_id, lab.criterion), []).append(lab)
    merged: dict[tuple[str, str], Label] = {}
    conflicts: list[LabelConflict] = []
    for key, labs in by_key.items():
        labs = sorted(labs, key=lambda lab: rank.get(lab.source, len(rank)))
        merged[key] = labs[0]
        values = {lab.source: lab.value for lab in labs}
        if len(set(values.values())) > 1:
            conflicts.append(LabelConflict(key[0], key[1], values, labs[0].source))
    pairs, groups = preference_pairs(list(rows), merged)
    return HumanLabels(merged, conflicts, pairs, groups)
