"""What importing a labels file that names its annotators would store (``annotate RUN --import FILE`` and the
Trust page's import), and what it says about everything else; nothing here writes.

``label_values.read_labels`` names the values that are not labels and the columns mixing 0 / 1 with 2–5. On top of
that an import names: row ids the run does not have (as such), labels that name no annotator (a person's own label
needs a name, so they are not imported), the same person labelling one row and criterion twice (a duplicate, or a
conflict when the values differ: the last in the file is kept, and said), and a plain label that disagrees with an
``@name`` one on the same row. ``refusal`` says why nothing is imported; ``warnings`` what is imported anyway.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust.label_values import FILE, Cell, Label, LabelRead, read_labels
from rageval_core.core.messages import say

IDS_SHOWN = 10


@dataclass(frozen=True)
class Clash:
    """Labels of one row and criterion that do not add up to one: ``kind`` duplicate (one person, same value),
    conflict (one person, different values) or plain (a label naming nobody against a named one)."""

    kind: str
    row_id: str
    criterion: str
    annotator: str
    cells: tuple[Cell, ...]
    values: tuple[float, ...]
    kept: float

    def message(self) -> str:
        where = say("labels.where", row=self.row_id, record=", ".join(str(c.record) for c in self.cells))
        values = ", ".join(f"{c.column}={v:g}" for c, v in zip(self.cells, self.values))
        if self.kind == "plain":
            plain = ", ".join(f"{c.column}={v:g}" for c, v in zip(self.cells, self.values) if c.annotator is None)
            return say("labels.plain_vs_named", where=where, criterion=self.criterion, plain=plain,
                       annotator=self.annotator, named=f"{self.kept:g}")
        code = "labels.duplicate" if self.kind == "duplicate" else "labels.conflict"
        return say(code, where=where, annotator=self.annotator, criterion=self.criterion, values=values, kept=f"{self.kept:g}")


@dataclass
class ImportPlan:
    """The labels an import stores (``named``: one per row, criterion and person) and what it reports."""

    run: str
    read: LabelRead
    named: list[tuple[str, str, str, float]] = field(default_factory=list)
    unknown_rows: list[str] = field(default_factory=list)
    known_rows: int = 0
    plain: int = 0
    clashes: list[Clash] = field(default_factory=list)

    def refusal(self, skip_bad: bool = False) -> list[str]:
        """Why nothing is imported (each problem, then the reason), or [] when the import may go ahead."""
        if self.read.mixed:
            return [m.message() for m in self.read.mixed] + [say("labels.refused_mixed")]
        if self.read.not_labels and not skip_bad:
            return [p.message() for p in self.read.not_labels] + [
                say("labels.refused_values", n=len(self.read.not_labels))]
        if self.unknown_rows and not self.known_rows:
            return [say("labels.no_known_rows", n=len(self.unknown_rows), run=self.run, ids=_ids(self.unknown_rows))]
        if not self.named:
            return [say("labels.no_annotator", plain=self.plain)]
        return []

    def warnings(self) -> list[str]:
        """What an import that goes ahead leaves out or had to choose, each named."""
        out = [p.message() for p in self.read.not_labels]
        if self.read.not_labels:
            out.append(say("labels.skipped_values", n=len(self.read.not_labels)))
        if self.unknown_rows:
            out.append(say("labels.unknown_rows", n=len(self.unknown_rows), run=self.run, ids=_ids(self.unknown_rows)))
        if self.plain:
            out.append(say("labels.plain_skipped", n=self.plain))
        return out + [c.message() for c in self.clashes]

    def people(self) -> int:
        return len({n[2] for n in self.named})


def plan_import(rows: Iterable[tuple[str, Mapping[str, Any]]], run_rows: Collection[str], run: str) -> ImportPlan:
    """The import of labels file ``rows`` (``read_label_rows``) into the run ``run`` whose row ids are ``run_rows``."""
    read = read_labels(rows, source=FILE)
    plan = ImportPlan(run, read)
    unknown: dict[str, None] = {}
    known: set[str] = set()
    kept: dict[tuple[str, str, str], list[tuple[Cell, Label]]] = {}
    plain: dict[tuple[str, str], list[tuple[Cell, Label]]] = {}
    for label, cell in zip(read.labels, read.cells):
        if label.row_id not in run_rows:
            unknown.setdefault(label.row_id)
            continue
        known.add(label.row_id)
        if label.annotator:
            kept.setdefault((label.row_id, label.criterion, label.annotator), []).append((cell, label))
        else:
            plain.setdefault((label.row_id, label.criterion), []).append((cell, label))
    plan.unknown_rows, plan.known_rows = list(unknown), len(known)
    plan.plain = sum(len(v) for v in plain.values())
    for (row, criterion, annotator), given in kept.items():
        last = given[-1][1]
        plan.named.append((row, criterion, annotator, float(last.value)))
        if len(given) > 1:
            kind = "duplicate" if len({lab.value for _, lab in given}) == 1 else "conflict"
            plan.clashes.append(Clash(kind, row, criterion, annotator, tuple(c for c, _ in given),
                                      tuple(float(lab.value) for _, lab in given), float(last.value)))
        for cell, lab in plain.get((row, criterion), []):
            if lab.value != last.value:
                plan.clashes.append(Clash("plain", row, criterion, annotator, (cell, given[-1][0]),
                                          (float(lab.value), float(last.value)), float(last.value)))
    return plan


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:IDS_SHOWN])
    return shown + (f" (+{len(ids) - IDS_SHOWN})" if len(ids) > IDS_SHOWN else "")
