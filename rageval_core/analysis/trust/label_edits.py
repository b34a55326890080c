"""A person's 👍 / 👎 given or taken back on Inspect, kept consistent across the team's word (``human_labels``)
and each annotator's own label (``annotator_labels``), through the store's label methods only.

Taking a label back removes it for the person it belongs to. Named: that person's own label goes; the team's word
is then what the remaining annotators say (their clear majority; a tie leaves no word, a disagreement to settle),
or nothing when nobody else labelled the row. Unnamed (a tab where nobody typed a name), the label shown is the
team's word: it goes, and so does the own label of the one annotator it came from, which would otherwise come
back the moment that name is typed; when several people labelled the row their own labels stay (they are theirs,
and people's agreement counts them), and the caller is told who keeps one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rageval_core.store.runs import Store


@dataclass(frozen=True)
class LabelChange:
    """What a save did: ``removed_for`` the people whose own label went, ``kept_by`` those who keep theirs, and
    ``team`` the team's word afterwards (None: no word)."""

    team: float | None
    removed_for: tuple[str, ...] = ()
    kept_by: tuple[str, ...] = field(default_factory=tuple)


def save_label(store: Store, dataset_hash: str, row_id: str, criterion: str, label: float | None,
               note: str | None = None, annotator: str | None = None) -> LabelChange:
    """Give (``label`` 0 / 1) or take back (``None``) one label on a row, as ``annotator`` when named."""
    name = (annotator or "").strip()
    if label is not None:
        store.set_label(dataset_hash, row_id, criterion, label, note, annotator=name or None)
        return LabelChange(float(label))
    others = dict(store.annotator_labels(dataset_hash).get(row_id, {}).get(criterion, {}))
    removed: tuple[str, ...] = ()
    if name:
        if name in others:
            store.set_annotator_label(dataset_hash, row_id, criterion, name, None)
            others.pop(name)
            removed = (name,)
    elif len(others) == 1:
        (only,) = others
        store.set_annotator_label(dataset_hash, row_id, criterion, only, None)
        others, removed = {}, (only,)
    team = _majority(others.values()) if name else None
    store.set_label(dataset_hash, row_id, criterion, team, note if note else None)
    return LabelChange(team, removed, tuple(sorted(others)))


def _majority(values: Any) -> float | None:
    values = [float(v) for v in values if v is not None]
    ones = sum(1 for v in values if v >= 0.5)
    zeros = len(values) - ones
    return None if ones == zeros else float(ones > zeros)
