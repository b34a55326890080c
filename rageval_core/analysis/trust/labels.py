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

Annotators: a row's ``annotator`` field names who gave its labels (a labels file may hold one row per person
and row id), and a column may name its own: ``label_faithful@alice``. Several annotators' labels of one
source merge to their majority (a tie gives no label: it is a disagreement to settle); each person's own
labels feed the human–human agreement (``rageval_core.analysis.trust.annotator_report``).

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
    annotator: str | None = None

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


ANNOTATOR_FIELD = "annotator"


def _label_columns(meta: Mapping[str, Any]) -> Iterable[tuple[str, tuple[str, ...], str | None]]:
    """``(column, criteria, annotator)`` of each label column a row holds: ``label_faithful`` (the row's
    ``annotator``, if any) and ``label_faithful@alice``."""
    nested = meta.get("meta")
    keys = list(meta) + ([k for k in nested if k not in meta] if isinstance(nested, Mapping) else [])
    given = _field(meta, ANNOTATOR_FIELD)
    row_annotator = str(given).strip() or None if given is not None else None
    for key in keys:
        base, at, name = str(key).partition("@")
        if base in LABEL_COLUMNS and (not at or name.strip()):
            yield str(key), LABEL_COLUMNS[base], name.strip() if at else row_annotator


def dataset_labels(rows: Iterable[tuple[str, Mapping[str, Any]]], source: str = DATASET) -> list[Label]:
    """Labels from dataset columns of ``(row_id, metadata)`` pairs (a ``Sample``'s id and metadata).

    The scale is decided per column over all rows (any value above 1 makes it a 1–5 rating)."""
    rows = list(rows)
    raw: dict[tuple[str, str], list[tuple[str, float, str | None]]] = {}  # (scale key, criteria) -> [(row, value, annotator)]
    for rid, meta in rows:
        for column, criteria, annotator in _label_columns(meta):
            v = _as_number(_field(meta, column))
            if v is not None:
                raw.setdefault((column.partition("@")[0], ",".join(criteria)), []).append((rid, v, annotator))
        nested = meta.get("human_labels")
        if isinstance(nested, Mapping):
            for criterion, value in nested.items():
                v = _as_number(value)
                if v is not None:
                    raw.setdefault((f"human_labels.{criterion}", str(criterion)), []).append((rid, v, None))
    out: list[Label] = []
    for (_, criteria), values in raw.items():
        rating = any(v > 1 for _, v, _ in values)
        for rid, v, annotator in values:
            for criterion in criteria.split(","):
                out.append(Label(str(rid), criterion, binarize_label(v, rating), source, v, annotator))
    return out


def inspector_labels(stored: Mapping[str, Mapping[str, float | None]]) -> list[Label]:
    """Labels saved in the store by the inspector (``Store.labels``: ``{row_id: {criterion: 0/1}}``)."""
    return [
        Label(str(rid), str(crit), int(float(v) >= 0.5), INSPECTOR, float(v))
        for rid, by_crit in stored.items()
        for crit, v in by_crit.items()
        if v is not None
    ]


def inspector_annotator_labels(stored: Mapping[str, Mapping[str, Mapping[str, float]]]) -> list[Label]:
    """Each named person's labels saved by the inspector (``Store.annotator_labels``)."""
    return [
        Label(str(rid), str(crit), int(float(v) >= 0.5), INSPECTOR, float(v), str(name))
        for rid, by_crit in stored.items()
        for crit, by_name in by_crit.items()
        for name, v in by_name.items()
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


def _by_source(labs: Sequence[Label]) -> list[list[Label]]:
    groups: dict[str, list[Label]] = {}
    for lab in labs:
        groups.setdefault(lab.source, []).append(lab)
    return list(groups.values())


def _one_per_source(labs: Sequence[Label]) -> Label | None:
    """One source's label of a row and criterion: the only one, else the majority of its annotators (the last
    label per annotator counts); ``None`` on a tie."""
    if len(labs) == 1:
        return labs[0]
    last: dict[str | None, Label] = {}
    for lab in labs:
        last[lab.annotator] = lab
    ones = sum(lab.value for lab in last.values())
    zeros = len(last) - ones
    if ones == zeros:
        return None
    value = int(ones > zeros)
    return next(lab for lab in last.values() if lab.value == value)


def annotator_label_map(labels: Iterable[Label]) -> dict[str, dict[str, dict[str, int]]]:
    """``{criterion: {annotator: {row_id: 0/1}}}`` of the labels that name their annotator; when one person
    labelled a row in several sources, ``PRECEDENCE`` picks which counts."""
    rank = {s: i for i, s in enumerate(PRECEDENCE)}
    best: dict[tuple[str, str, str], Label] = {}
    for lab in labels:
        if not lab.annotator:
            continue
        key = (lab.criterion, lab.annotator, lab.row_id)
        if key not in best or rank.get(lab.source, len(rank)) <= rank.get(best[key].source, len(rank)):
            best[key] = lab
    out: dict[str, dict[str, dict[str, int]]] = {}
    for (criterion, annotator, rid), lab in best.items():
        out.setdefault(criterion, {}).setdefault(annotator, {})[rid] = lab.value
    return out


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
        labs = [lab for source in _by_source(labs) if (lab := _one_per_source(source)) is not None]
        if not labs:
            continue  # annotators tied: no label until the disagreement is settled
        labs = sorted(labs, key=lambda lab: rank.get(lab.source, len(rank)))
        merged[key] = labs[0]
        values = {lab.source: lab.value for lab in labs}
        if len(set(values.values())) > 1:
            conflicts.append(LabelConflict(key[0], key[1], values, labs[0].source))
    pairs, groups = preference_pairs(list(rows), merged)
    return HumanLabels(merged, conflicts, pairs, groups)
