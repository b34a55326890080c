"""Rows as an editable table (``st.data_editor``) and back, validated exactly like a file."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rageval_core.data.datasets.formats import FIELD_ALIASES
from rageval_core.data.datasets.loader import finish, read_records
from rageval_core.data.datasets.model import LoadedDataset
from rageval_core.data.datasets.values import BLANK, CONTEXT_SEPARATOR, is_missing
from rageval_core.core.types import Sample

if TYPE_CHECKING:  # pandas is only needed by the table helpers
    import pandas as pd

TABLE_COLUMNS: tuple[str, ...] = ("id", "question", "contexts", "answer", "ground_truth")


def contexts_to_cell(contexts: Sequence[str]) -> str:
    """One editable text cell for a list of contexts: items joined by `` ||| ``.

    Falls back to a JSON list when that would not read back the same (a context with a newline or
    ``|||``, or one that starts with ``[``), so a table round trip never splits a context.
    """
    items = list(contexts)
    ambiguous = any("\n" in c or CONTEXT_SEPARATOR in c or c != c.strip() for c in items)
    if ambiguous or (items and items[0].startswith("[")):
        return json.dumps(items, ensure_ascii=False)
    return f" {CONTEXT_SEPARATOR} ".join(items)


def samples_to_dataframe(samples: Sequence[Sample]) -> pd.DataFrame:
    """A table for ``st.data_editor``: core columns, contexts as one ``|||``-joined text cell, then metadata."""
    import pandas as pd

    rows = []
    for s in samples:
        row: dict[str, Any] = {
            "id": s.id,
            "question": s.question,
            "contexts": contexts_to_cell(s.contexts),
            "answer": s.answer,
            "ground_truth": s.ground_truth,
        }
        for key, value in s.metadata.items():
            row.setdefault(key, value)
        for key, score in s.external_scores.items():  # "ragas:faithfulness": read back as an external score
            row.setdefault(key, score)
        rows.append(row)
    columns = list(TABLE_COLUMNS)
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    return pd.DataFrame(rows, columns=columns)


def _table_records(df: pd.DataFrame) -> Iterator[dict[str, Any]]:
    columns = [str(c) for c in df.columns]
    for values in df.itertuples(index=False, name=None):
        yield dict(zip(columns, values))


def dataframe_to_samples(df: pd.DataFrame, name: str = "table") -> LoadedDataset:
    """Rows of an edited table back to samples, validated exactly like a file (issues name ``name``).

    Blank ids get ``row-N``; the contexts cell accepts what a CSV cell does (JSON list, ``|||``, lines).
    """
    records: list[Any] = []
    for raw in _table_records(df):
        record = _normalise_table_record(raw)
        blank = not any(not is_missing(v) and str(v).strip() for v in record.values())
        records.append(BLANK if blank else record)  # keeps row numbers equal to table positions
    samples, issues = read_records(records, name, text_cells=True)
    return finish(samples, issues, name, "table", sum(r is not BLANK for r in records))


def _normalise_table_record(record: dict[str, Any]) -> dict[str, Any]:
    """Table cells may be lists (a ListColumn) or numpy scalars; make them plain values."""
    import numpy as np

    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, np.ndarray):
            value = value.tolist()
        elif isinstance(value, np.generic):
            value = value.item()
        if key.strip().lower() in FIELD_ALIASES["contexts"] and isinstance(value, (list, tuple)):
            value = json.dumps(list(value), ensure_ascii=False, default=str)  # nested lists stay lists
        out[key] = value
    return out
