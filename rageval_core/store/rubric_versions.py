"""Saved versions of rubrics and raw judge templates, in the workbench SQLite database.

Every version keeps its full content, a content hash (the same hash judge results record, so a result
can be traced back to the exact rubric and template that produced it), an optional name and when it was
saved. Saving the same content under the same name again returns the existing version. Two versions are
compared as a unified text diff.
"""

from __future__ import annotations

import difflib
import hashlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from rageval_core.store import db
from rageval_core.core import paths


class SavableRubric(Protocol):
    """What the store needs of a rubric (``scoring.rubric.Rubric``): the store sits below scoring and keeps JSON."""

    id: str
    language: str

    @property
    def content_hash(self) -> str: ...

    def to_json(self) -> str: ...


class SavableTemplate(Protocol):
    """What the store needs of a raw template (``scoring.prompts.PromptTemplate``)."""

    source: str | None
    language: str

    @property
    def label(self) -> str: ...

Kind = Literal["rubric", "template"]

@dataclass(frozen=True)
class Version:
    """One saved rubric or template. ``subject`` is the rubric id or the template label (``ja/judge``)."""

    id: int
    kind: str
    name: str | None
    subject: str
    language: str | None
    content: str
    content_hash: str
    created_at: float

    @property
    def created_at_iso(self) -> str:
        return datetime.fromtimestamp(self.created_at, tz=UTC).isoformat(timespec="seconds")

    @property
    def label(self) -> str:
        """What a version picker shows: ``#3 strict-v2 (binary-strict, 1a2b3c4d)``."""
        title = self.name or self.subject
        extra = f"{self.subject}, {self.content_hash[:8]}" if self.name else self.content_hash[:8]
        return f"#{self.id} {title} ({extra})"

    def rubric_json(self) -> str:
        """The saved rubric's JSON (``Rubric.from_json`` reads it back)."""
        if self.kind != "rubric":
            raise ValueError(f"version #{self.id} is a {self.kind}, not a rubric")
        return self.content


def text_hash(text: str) -> str:
    """sha256 of a template's text (equal to ``PromptTemplate.sha256`` for the same source)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def diff_text(a: str, b: str, a_label: str = "a", b_label: str = "b", context: int = 3) -> str:
    """Unified diff of two texts, line by line; empty when they are equal."""
    lines = difflib.unified_diff(
        a.splitlines(), b.splitlines(), fromfile=a_label, tofile=b_label, n=context, lineterm=""
    )
    return "\n".join(lines)


class RubricStore:
    """Rubric and template versions in SQLite (``.rageval/rageval.sqlite`` or RAGEVAL_HOME; own table)."""

    def __init__(self, path: str | Path | None = None, *, clock: Callable[[], float] = time.time) -> None:
        self.path = str(path) if path is not None else str(paths.database_path())
        self._clock = clock
        db.open_store(self.path)

    def _conn(self) -> sqlite3.Connection:
        return db.connect(self.path)

    # ------------------------------------------------------------------ saving
    def save_rubric(self, rubric: SavableRubric, name: str | None = None) -> Version:
        """Save a rubric; the same content under the same name is stored once."""
        return self._save("rubric", name, rubric.id, rubric.language, rubric.to_json(), rubric.content_hash)

    def save_template(self, template: SavableTemplate | str, name: str | None = None, language: str | None = None) -> Version:
        """Save a raw template (its full source, header included)."""
        if not isinstance(template, str):
            text, subject, language = template.source or "", template.label, language or template.language
        else:
            text, subject = template, f"{language or '?'}/judge-custom"
        return self._save("template", name, subject, language, text, text_hash(text))

    def _save(self, kind: str, name: str | None, subject: str, language: str | None, content: str, digest: str) -> Version:
        name = (name or "").strip() or None
        conn = self._conn()
        row = conn.execute(
            "SELECT * FROM rubric_versions WHERE kind = ? AND content_hash = ? AND name IS ? ORDER BY id LIMIT 1",
            (kind, digest, name),
        ).fetchone()
        if row is not None:
            return _version(row)
        cursor = conn.execute(
            "INSERT INTO rubric_versions (kind, name, subject, language, content, content_hash, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind, name, subject, language, content, digest, float(self._clock())),
        )
        return self.get(int(cursor.lastrowid or 0))

    # ------------------------------------------------------------------ reading
    def get(self, version_id: int) -> Version:
        row = self._conn().execute("SELECT * FROM rubric_versions WHERE id = ?", (int(version_id),)).fetchone()
        if row is None:
            raise KeyError(f"no saved rubric or template version #{version_id}")
        return _version(row)

    def versions(self, kind: Kind | None = None, *, name: str | None = None, subject: str | None = None) -> list[Version]:
        """Saved versions, newest first, optionally only one kind, name or subject."""
        clauses, params = [], []
        for column, value in (("kind", kind), ("name", name), ("subject", subject)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._conn().execute(
            f"SELECT * FROM rubric_versions {where} ORDER BY created_at DESC, id DESC", params
        ).fetchall()
        return [_version(r) for r in rows]

    def latest(self, name: str, kind: Kind = "rubric") -> Version | None:
        found = self.versions(kind, name=name)
        return found[0] if found else None

    def rubric_json(self, version_id: int) -> str:
        return self.get(version_id).rubric_json()

    def template_text(self, version_id: int) -> str:
        version = self.get(version_id)
        if version.kind != "template":
            raise ValueError(f"version #{version_id} is a {version.kind}, not a template")
        return version.content

    def find_by_hash(self, content_hash: str, kind: Kind | None = None) -> list[Version]:
        """Versions with this content hash (or hash prefix): from a judge result back to its rubric."""
        rows = self._conn().execute(
            "SELECT * FROM rubric_versions WHERE content_hash LIKE ? ORDER BY id", (content_hash + "%",)
        ).fetchall()
        return [_version(r) for r in rows if kind is None or r["kind"] == kind]

    def delete(self, version_id: int) -> None:
        self._conn().execute("DELETE FROM rubric_versions WHERE id = ?", (int(version_id),))

    def diff(self, a_id: int, b_id: int, context: int = 3) -> str:
        """Unified diff of two saved versions (rubrics as pretty JSON, templates as their text)."""
        a, b = self.get(a_id), self.get(b_id)
        return diff_text(a.content, b.content, a.label, b.label, context)


def _version(row: sqlite3.Row) -> Version:
    return Version(
        id=int(row["id"]),
        kind=row["kind"],
        name=row["name"],
        subject=row["subject"],
        language=row["language"],
        content=row["content"],
        content_hash=row["content_hash"],
        created_at=float(row["created_at"]),
    )
