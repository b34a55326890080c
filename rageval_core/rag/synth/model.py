"""The test set file: pairs with provenance, type, review status and flags, and how they were generated.

A test set file is a JSON object ``{"format": "rageval-testset", "document", "generator", "sections",
"rows", "rejected"}``. ``rows`` are the pairs in use (status ``accepted`` or ``edited``) and load as a
dataset too; ``rejected`` are the pairs set aside (near-duplicates dropped at generation, pairs the user
rejected), kept so the review can show a dropped duplicate beside its twin and restore it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rageval_core.core.private import write_private_bytes
from rageval_core.core.errors import ConfigError

TESTSET_FORMAT = "rageval-testset"
TESTSET_VERSION = 2

ACCEPTED, EDITED, REJECTED = "accepted", "edited", "rejected"
STATUSES: tuple[str, ...] = (ACCEPTED, EDITED, REJECTED)


class SynthError(ConfigError):
    """The generation cannot start (bad template, no sections, n out of range) or a file is unreadable."""


@dataclass
class SectionReport:
    """What happened to one section: ``status`` ok / failed / empty / cancelled, with a reason unless ok.
    ``asked`` and ``by_type`` count the pairs asked for and kept per question type (calls of several types may
    touch one section; the offline heuristics may find fewer than asked)."""

    index: int
    heading: str
    status: str
    reason: str | None = None
    generated: int = 0
    kept: int = 0
    duplicates: int = 0
    chunk_ids: list[str] = field(default_factory=list)
    asked: dict[str, int] = field(default_factory=dict)
    by_type: dict[str, int] = field(default_factory=dict)


@dataclass
class TestItem:
    """One synthetic question with its ground truth and provenance, type, status and flags (``metadata``)."""

    __test__ = False  # not a pytest class

    id: str
    question: str
    ground_truth: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return str(self.metadata.get("status") or ACCEPTED)

    @property
    def flags(self) -> list[str]:
        return list(self.metadata.get("flags") or [])

    @property
    def question_type(self) -> str | None:
        value = self.metadata.get("question_type")
        return str(value) if value else None

    def to_row(self) -> dict[str, Any]:
        return {"id": self.id, "question": self.question, "ground_truth": self.ground_truth, **self.metadata}


@dataclass
class TestSet:
    """A generated test set: the document it came from, how it was generated, per-section outcome, the pairs
    in use (``items``) and the pairs set aside (``rejected``)."""

    __test__ = False

    document: dict[str, Any]
    generator: dict[str, Any]
    sections: list[SectionReport]
    items: list[TestItem]
    rejected: list[TestItem] = field(default_factory=list)

    @property
    def offline(self) -> bool:
        return bool(self.generator.get("offline"))

    @property
    def failed_sections(self) -> list[SectionReport]:
        return [s for s in self.sections if s.status == "failed"]

    @property
    def all_items(self) -> list[TestItem]:
        return [*self.items, *self.rejected]

    def counts(self) -> dict[str, dict[str, int]]:
        """Pairs in use by question type, all pairs by status, and flags over all pairs."""
        types = Counter(i.question_type or "unknown" for i in self.items)
        order = ("fact", "reasoning", "multi_chunk", "out_of_scope")
        return {
            "type": {t: types[t] for t in sorted(types, key=lambda t: (order.index(t) if t in order else len(order), t))},
            "status": dict(Counter(i.status for i in self.all_items)),
            "flag": dict(Counter(f for i in self.all_items for f in i.flags)),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": TESTSET_FORMAT,
            "version": TESTSET_VERSION,
            "document": self.document,
            "generator": self.generator,
            "sections": [asdict(s) for s in self.sections],
            "rows": [i.to_row() for i in self.items],
            "rejected": [i.to_row() for i in self.rejected],
        }

    def dumps(self) -> bytes:
        return (json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_private_bytes(target, self.dumps())
        return target


# ------------------------------------------------------------------------------------------ reading
_SKIP = {"id", "question", "user_input", "ground_truth", "reference", "answer", "contexts", "retrieved_contexts"}


def _item(row: Any, n: int, name: str) -> TestItem:
    if not isinstance(row, Mapping):
        raise SynthError(f"{name} row {n}: expected an object, got {type(row).__name__}")
    question = row.get("question", row.get("user_input"))
    truth = row.get("ground_truth", row.get("reference"))
    if truth is None and "ground_truth" not in row:
        truth = row.get("answer")  # the synthetic-QA article's synthetic_qa.json: the generated answer is the ground truth
    if not isinstance(question, str) or not question.strip():
        raise SynthError(f"{name} row {n}: missing question")
    if not isinstance(truth, str) or not truth.strip():
        raise SynthError(f"{name} row {n}: missing ground_truth (or answer)")
    status = row.get("status")
    if status is not None and status not in STATUSES:
        raise SynthError(f"{name} row {n}: status {status!r} is not one of {', '.join(STATUSES)}")
    flags = row.get("flags")
    if flags is not None and not (isinstance(flags, list) and all(isinstance(f, str) for f in flags)):
        raise SynthError(f"{name} row {n}: flags must be a list of strings")
    metadata = {k: v for k, v in row.items() if k not in _SKIP}
    return TestItem(str(row.get("id") or f"q{n:03d}"), question.strip(), truth.strip(), metadata)


def parse_testset(data: Any, name: str = "testset") -> TestSet:
    """A test set from parsed JSON: this module's format, a dataset-like ``rows`` list, or the synthetic-QA article's
    ``[{"question", "answer"}]`` list (there the answer is the synthetic ground truth). A row whose status is
    ``rejected`` goes to ``rejected`` wherever it was written."""
    header: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    rows = data.get("rows", data.get("pairs", data.get("items"))) if isinstance(data, Mapping) else data
    if not isinstance(rows, list):
        raise SynthError(f"{name}: expected a test set object with 'rows' or a list of {{question, answer}} objects")
    set_aside = header.get("rejected") or []
    if not isinstance(set_aside, list):
        raise SynthError(f"{name}: 'rejected' must be a list of rows")
    items = [_item(row, n, name) for n, row in enumerate(rows, 1)]
    rejected = [_item(row, len(rows) + n, name) for n, row in enumerate(set_aside, 1)]
    for item in rejected:
        item.metadata["status"] = REJECTED
    ids = [i.id for i in items + rejected]
    if len(set(ids)) != len(ids):
        raise SynthError(f"{name}: duplicate row ids")
    sections = [SectionReport(**s) for s in header.get("sections", []) if isinstance(s, Mapping)]
    kept = [i for i in items if i.status != REJECTED]
    rejected = [i for i in items if i.status == REJECTED] + rejected
    return TestSet(dict(header.get("document") or {}), dict(header.get("generator") or {}), sections, kept, rejected)


def load_testset(source: str | Path | bytes, name: str | None = None) -> TestSet:
    """Read a test set file (or bytes); unreadable JSON or rows without question / ground truth raise SynthError."""
    if isinstance(source, (bytes, bytearray)):
        label = name or "testset"
        raw = bytes(source)
    else:
        label = name or Path(source).name
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise SynthError(f"{label}: cannot read the file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
        if Path(label).suffix.lower() in (".jsonl", ".ndjson"):
            data: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SynthError(f"{label}: not a JSON test set ({exc})") from None
    return parse_testset(data, label)
