"""The rows a run scored, kept with the run through the content-addressed texts (``store.texts``).

Why: a run used to keep only row ids and its dataset's hash, so opening it meant hunting for the rows (the session's
dataset, the CLI's file re-read and re-hashed, every sample file by hash); a dataset file edited or moved left the
run unable to show, export or report what it scored. Now each row of ``run_rows`` holds its sample in ``sample``:
the text ids of its question, answer, ground truth, its other fields as one JSON text (the metadata: category,
language, label columns, anything else the file had; another tool's scores; any field ``Sample`` gains) and its
contexts, as varints (``texts.encode_composite``'s encoding, without its marker byte). Each
text is kept as a prompt's segment holds it (its lines with their line ends: ``_put_line``), so it is one row of
``texts`` however many rows, runs and prompts hold it (a context shared by rows, a question in every run of a
dataset, an answer the judge's prompt already sent are stored once), and a run's rows cost a few bytes each beyond
their first appearance (bench/scale.py: 1,339 bytes a result at 1,200 rows, against 1,307-1,314 before runs kept
their rows; with texts kept as they are, not as a prompt's lines, 1,664 against 1,438 at 120 rows).

Texts are redacted before they are kept, as everything the store writes is. A run stored before this column, or a
row that could not be read (a rejected row), has no sample: ``None``.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rageval_core.core.redact import redact, redact_data
from rageval_core.core.types import Sample
from rageval_core.store import texts

NONE = 0  # the id of a missing text (ground truth, metadata): texts ids start at 1
_KNOWN = {f.name for f in dataclasses.fields(Sample)}


# The Sample fields kept as texts of their own; every other field (metadata, external scores, any added later) goes
# into one JSON text under its name.
_TEXT_FIELDS = ("id", "question", "contexts", "answer", "ground_truth")


def _other_fields(sample: Sample) -> dict[str, Any]:
    return {f.name: dict(v) if isinstance(v, Mapping) else v for f in dataclasses.fields(sample)
            if f.name not in _TEXT_FIELDS and (v := getattr(sample, f.name)) not in (None, {}, (), [])}


def encode(conn: sqlite3.Connection, sample: Sample, memo: dict[str, int]) -> bytes:
    """What ``run_rows.sample`` holds for ``sample``: its texts' ids (each text put once; ``memo`` per write
    transaction). Order: question, answer, ground truth, the other fields as JSON, then every context."""
    others = redact_data(_other_fields(sample))
    fields: list[str | None] = [
        sample.question, sample.answer, sample.ground_truth,
        None if not others else json.dumps(others, ensure_ascii=False, default=str),
        *sample.contexts,
    ]
    ids = [NONE if text is None else texts.put(conn, text, memo) if i == 3 else _put_line(conn, redact(text), memo)
           for i, text in enumerate(fields)]
    return texts.encode_composite(ids)[1:]


def _put_line(conn: sqlite3.Connection, text: str, memo: dict[str, int]) -> int:
    """A row's text as the prompts hold it: its lines with their line ends (``texts.segments`` of a prompt cut a
    context, an answer, a question out of its tags so), cut into segments like a prompt. A text a prompt already
    sent is then no new row at all, and one split by blank lines shares its pieces."""
    return texts.put_segments(conn, text + "\n", memo)[0]


def _ids(blob: bytes) -> list[int]:
    return texts.composite_ids(b"\x00" + bytes(blob)) or []


def decode_many(conn: sqlite3.Connection, rows: Iterable[tuple[str, bytes | None]]) -> dict[str, Sample]:
    """``{row id: Sample}`` for the rows that have a stored sample, in the order given (texts read in one go)."""
    wanted = [(sid, _ids(blob)) for sid, blob in rows if blob is not None]
    found = texts.get_many(conn, {i for _, ids in wanted for i in ids if i != NONE})
    out: dict[str, Sample] = {}
    for sid, ids in wanted:
        if len(ids) < 4:
            continue  # never written so: not a sample
        question, answer, truth, others, *contexts = ids
        extra = {} if others == NONE else json.loads(found[others])
        out[sid] = Sample(
            id=sid, question=found[question][:-1], answer=found[answer][:-1],
            contexts=tuple(found[i][:-1] for i in contexts), ground_truth=None if truth == NONE else found[truth][:-1],
            **{name: value for name, value in extra.items() if name in _KNOWN},
        )
    return out


def attach_rows(conn: sqlite3.Connection, run_id: str, samples: Sequence[Sample]) -> int:
    """Give the run's rows that have no stored sample the texts of ``samples`` (a run stored before this column,
    resumed on the same data); how many rows got one. Inside the caller's write transaction."""
    memo = texts.Memo()
    have = {r[0] for r in conn.execute("SELECT sample_id FROM run_rows WHERE run_id = ? AND sample IS NULL", (run_id,))}
    todo = [(encode(conn, s, memo), run_id, s.id) for s in samples if s.id in have]
    conn.executemany("UPDATE run_rows SET sample = ? WHERE sample IS NULL AND run_id = ? AND sample_id = ?", todo)
    return len(todo)


def row_values(conn: sqlite3.Connection, run_id: str, sample_id: str, position: int, category: str | None, valid: bool,
               error: str | None, sample: Sample | None, memo: dict[str, int]) -> tuple[Any, ...]:
    """One ``run_rows`` row's values (``INSERT_ROW``'s order), its sample's texts put in ``texts`` first."""
    blob = None if sample is None else encode(conn, sample, memo)
    return run_id, sample_id, position, category, int(valid), error, blob


INSERT_ROW = "INTO run_rows (run_id, sample_id, position, category, valid, error, sample) VALUES (?,?,?,?,?,?,?)"


def samples_by_id(conn: sqlite3.Connection, run_id: str) -> dict[str, Sample]:
    """The run's stored samples, valid rows in dataset order (empty for a run stored before this column)."""
    return decode_many(conn, conn.execute(
        "SELECT sample_id, sample FROM run_rows WHERE run_id = ? AND valid = 1 ORDER BY position", (run_id,)))


def has_samples(conn: sqlite3.Connection, run_id: str) -> bool:
    """Whether the run keeps its rows' texts (any valid row with a stored sample)."""
    return conn.execute("SELECT 1 FROM run_rows WHERE run_id = ? AND valid = 1 AND sample IS NOT NULL LIMIT 1",
                        (run_id,)).fetchone() is not None
