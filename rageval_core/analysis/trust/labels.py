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

Values are 0/1 (also true/false, pass/fail, "yes"/"no") or a whole column on the 1–5 scale, binarised at ≥ 4
(4 and 5 pass: "good", 3 is not). Blank / null means no label. What is not a label (0.5, -1, "NaN", a list), and
a column mixing 0/1 with 2–5, give no label: ``label_values.read_labels`` names them (module docstring there).
Precedence when two sources label the same row and criterion: inspector over labels file over dataset
(the inspector is the person's latest word); any disagreement is listed as a conflict.

Pairwise sets: rows sharing a ``pair_group`` (or ``pair_id``) form pairs per criterion wherever one row
is labelled 1 and another 0 (WikiEval's pointwise mapping); a ``preferred`` column (1 = the
human-preferred answer of its group) adds pairs for ``pair_criterion`` when given, else for every criterion.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_core.analysis.trust.label_values import (  # noqa: F401 - re-exported: the label's parts live there
    ALL_CRITERIA,
    ANNOTATOR_FIELD,
    DATASET,
    FILE,
    INSPECTOR,
    LABEL_COLUMNS,
    PRECEDENCE,
    RATING_PASS,
    Label,
    as_number,
    binarize_label,
    field_of,
    read_labels,
)

GROUP_COLUMNS = ("pair_group", "pair_id")


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


def dataset_labels(rows: Iterable[tuple[str, Mapping[str, Any]]], source: str = DATASET) -> list[Label]:
    """Labels from dataset columns of ``(row_id, metadata)`` pairs (a ``Sample``'s id and metadata). The scale is
    decided per column over all rows; values that are not labels, and columns mixing 0 / 1 with 2..5, give no
    label (``label_values.read_labels`` names them)."""
    return read_labels(rows, source).labels


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
        group = next((field_of(meta, c) for c in GROUP_COLUMNS if field_of(meta, c) not in (None, "")), None)
        if group is None:
            continue
        groups[rid] = str(group)
        members.setdefault(str(group), []).append(rid)
        pref = as_number(field_of(meta, "preferred"))
        if pref is not None:
            crit = field_of(meta, "pair_criterion")
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
        kept = [one for source in _by_source(labs) if (one := _one_per_source(source)) is not None]
        if not kept:
            continue  # annotators tied: no label until the disagreement is settled
        labs = sorted(kept, key=lambda lab: rank.get(lab.source, len(rank)))
        merged[key] = labs[0]
        values = {lab.source: lab.value for lab in labs}
        if len(set(values.values())) > 1:
            conflicts.append(LabelConflict(key[0], key[1], values, labs[0].source))
    pairs, groups = preference_pairs(list(rows), merged)
    return HumanLabels(merged, conflicts, pairs, groups)
