"""Synthetic QA test sets from documents (seed 003's "data preparation" phase).

Each section of a document goes to the LLM once, through the ``synth_qa`` task and its template in the
document's language, asking for ``n`` question/answer pairs answerable from that section alone; the
answer is the ground truth. Near-identical questions are dropped across the whole set, every question
keeps its provenance (document, section, chunk ids, generator provider and model), and a section whose
call fails is marked with the reason while the others go on. The offline provider answers extractively
(a sentence's key phrase and the heading as the question, the sentence as the answer) and the set says so.

A test set file is a JSON object ``{"format": "rageval-testset", "document", "generator", "sections",
"rows"}``; its ``rows`` (id, question, ground_truth, provenance keys) also load as a dataset.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rageval_core.documents import Chunk, Document, Section, chunk_document
from rageval_core.jsonparse import ParseError, parse_json_object
from rageval_core.llm.base import LLM, Completion, LLMRequest, ProviderError
from rageval_core.prompts import PromptTemplate, TemplateError, resolve_template
from rageval_core.tasks import SYNTH_QA, schema_for
from rageval_core.text import char_ngrams, normalize, numbers

TESTSET_FORMAT = "rageval-testset"
TESTSET_VERSION = 1
DEFAULT_PER_SECTION = 3
DEFAULT_DEDUPE_THRESHOLD = 0.9
MAX_PER_SECTION = 20
OFFLINE_NOTE = (
    "offline provider: extractive heuristic (a sentence's key phrase and the section heading make the question, "
    "the sentence is the ground truth); no language model was used"
)

Progress = Callable[[int, int, str], None]  # (sections done, sections total, heading just done)


class SynthError(ValueError):
    """The generation cannot start (bad template, no sections, n out of range)."""


@dataclass
class SectionReport:
    """What happened to one section: ``status`` ok / failed / empty / cancelled, with a reason unless ok."""

    index: int
    heading: str
    status: str
    reason: str | None = None
    generated: int = 0
    kept: int = 0
    duplicates: int = 0
    chunk_ids: list[str] = field(default_factory=list)


@dataclass
class TestItem:
    """One synthetic question with its ground truth and provenance (``metadata``)."""

    __test__ = False  # not a pytest class

    id: str
    question: str
    ground_truth: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_row(self) -> dict[str, Any]:
        return {"id": self.id, "question": self.question, "ground_truth": self.ground_truth, **self.metadata}


@dataclass
class TestSet:
    """A generated test set: the document it came from, how it was generated, per-section outcome, rows."""

    __test__ = False

    document: dict[str, Any]
    generator: dict[str, Any]
    sections: list[SectionReport]
    items: list[TestItem]

    @property
    def offline(self) -> bool:
        return bool(self.generator.get("offline"))

    @property
    def failed_sections(self) -> list[SectionReport]:
        return [s for s in self.sections if s.status == "failed"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": TESTSET_FORMAT,
            "version": TESTSET_VERSION,
            "document": self.document,
            "generator": self.generator,
            "sections": [asdict(s) for s in self.sections],
            "rows": [i.to_row() for i in self.items],
        }

    def dumps(self) -> bytes:
        return (json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.dumps())
        return target


# ------------------------------------------------------------------------------------------ pure helpers
def question_key(question: str) -> str:
    """The form two questions are compared in: normalised, without punctuation or spaces."""
    return "".join(ch for ch in normalize(question) if ch.isalnum())


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_duplicates(questions: Sequence[str], threshold: float = DEFAULT_DEDUPE_THRESHOLD) -> dict[int, int]:
    """Index of each question to drop → index of the earlier question it repeats.

    Two questions are near-identical when their keys are equal or their character-trigram Jaccard
    similarity is at least ``threshold`` with the same numbers in both (0.9 by default: the same question
    with a word changed, not two questions about neighbouring facts that share a template such as
    "According to <heading>, what about X?"; "5,000円未満" and "5,000円以上50,000円未満" stay apart).
    """
    grams = [char_ngrams(question_key(q)) for q in questions]
    keys = [question_key(q) for q in questions]
    nums = [numbers(q) for q in questions]
    dropped: dict[int, int] = {}
    kept: list[int] = []

    def same(i: int, j: int) -> bool:
        return keys[i] == keys[j] or (nums[i] == nums[j] and jaccard(grams[i], grams[j]) >= threshold)

    for i in range(len(questions)):
        match = next((j for j in kept if same(i, j)), None)
        if match is None:
            kept.append(i)
        else:
            dropped[i] = match
    return dropped


def containment(part: str, whole: str) -> float:
    """Share of ``part``'s character trigrams found in ``whole`` (how much of an answer a text holds)."""
    p = char_ngrams(part)
    if not p:
        return 0.0
    return len(p & char_ngrams(whole)) / len(p)


def source_chunk(answer: str, chunks: Sequence[Chunk]) -> Chunk | None:
    """The chunk of a section that holds most of the answer (the first one on a tie)."""
    best: tuple[float, int] | None = None
    for i, c in enumerate(chunks):
        score = containment(answer, c.text)
        if best is None or score > best[0]:
            best = (score, i)
    return None if best is None else chunks[best[1]]


def parse_pairs(data: Mapping[str, Any], n: int) -> list[tuple[str, str]]:
    """Valid (question, answer) pairs from a ``synth_qa`` answer, at most ``n``; a wrong shape is a ParseError."""
    pairs = data.get("pairs")
    if isinstance(pairs, dict):
        pairs = [pairs]
    if not isinstance(pairs, list):
        raise ParseError("expected a list under 'pairs'", json.dumps(data, ensure_ascii=False)[:500])
    out: list[tuple[str, str]] = []
    for item in pairs:
        if not isinstance(item, Mapping):
            continue
        q = item.get("question")
        a = item.get("answer", item.get("ground_truth"))
        if isinstance(q, str) and isinstance(a, str) and q.strip() and a.strip():
            out.append((" ".join(q.split()), a.strip()))
    return out[:n]


# ------------------------------------------------------------------------------------------ generation
def synth_template(language: str, override: PromptTemplate | str | None = None) -> PromptTemplate:
    """The ``synth_qa`` template in ``language``, or an edited one (raw text or a PromptTemplate)."""
    try:
        return resolve_template(SYNTH_QA, language, override)
    except TemplateError as exc:
        raise SynthError(f"synth_qa template: {exc}") from None


def build_request(template: PromptTemplate, title: str, section: Section, n: int, language: str, temperature: float) -> LLMRequest:
    """The ``synth_qa`` request of one section: rendered prompt, schema and the structured inputs."""
    values = {"title": title, "heading": section.heading, "text": section.text, "n": n}
    try:
        messages = template.to_messages(**values)
    except TemplateError as exc:
        raise SynthError(f"synth_qa template: {exc}") from None
    return LLMRequest(
        task=SYNTH_QA,
        messages=messages,
        schema=schema_for(SYNTH_QA),
        inputs=values,
        language=language,
        temperature=temperature,
    )


def offline_completion(completion: Completion) -> bool:
    """Whether an answer came from the offline heuristics, directly or replayed from a recorded offline run."""
    raw = completion.raw if isinstance(completion.raw, Mapping) else {}
    return completion.provider == "offline" or raw.get("replayed_from") == "offline"


def failure_reason(exc: Exception) -> str:
    """Why a model step failed, as stored with the section or row: ``<unscored reason> (<kind>): …``."""
    if isinstance(exc, ProviderError):
        return f"{exc.unscored_reason} ({exc.kind}): {exc}"
    if isinstance(exc, ParseError):
        return f"parse_error: {exc}"
    return f"error: {type(exc).__name__}: {exc}"


def generate_testset(
    doc: Document,
    llm: LLM,
    *,
    per_section: int = DEFAULT_PER_SECTION,
    chunks: Sequence[Chunk] | None = None,
    dedupe_threshold: float = DEFAULT_DEDUPE_THRESHOLD,
    temperature: float = 0.7,
    template: PromptTemplate | str | None = None,
    sections: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> TestSet:
    """``per_section`` QA pairs for every section of ``doc`` (or the ``sections`` indices given).

    Sections are sent one at a time (the runner is the project's only concurrency boundary); a provider
    or parse failure marks its section ``failed`` with the reason and the next section goes on. Raises
    ``SynthError`` only when nothing can be sent (bad template, n out of range, no sections).
    """
    if not 1 <= per_section <= MAX_PER_SECTION:
        raise SynthError(f"questions per section must be between 1 and {MAX_PER_SECTION} (got {per_section})")
    chosen = [s for s in doc.sections if sections is None or s.index in set(sections)]
    if not chosen:
        raise SynthError(f"{doc.name}: no sections to generate from")
    tmpl = synth_template(doc.language, template)
    all_chunks = list(chunks) if chunks is not None else chunk_document(doc)
    offline_flags: list[bool] = []
    reports: list[SectionReport] = []
    drafts: list[TestItem] = []
    used_provider, used_model = getattr(llm, "provider", "?"), getattr(llm, "model", "?")
    for done, section in enumerate(chosen):
        section_chunks = [c for c in all_chunks if c.document == doc.name and c.section_index == section.index]
        report = SectionReport(section.index, section.heading, "ok", chunk_ids=[c.id for c in section_chunks])
        reports.append(report)
        if cancel is not None and cancel.is_set():
            report.status, report.reason = "cancelled", "cancelled before this section was sent"
            continue
        request = build_request(tmpl, doc.title, section, per_section, doc.language, temperature)
        try:
            completion = llm.complete(request)
            pairs = parse_pairs(parse_json_object(completion.text), per_section)
            used_provider, used_model = completion.provider, completion.model
            offline_flags.append(offline_completion(completion))
        except (ProviderError, ParseError) as exc:
            report.status, report.reason = "failed", failure_reason(exc)
        else:
            report.generated = len(pairs)
            if not pairs:
                report.status, report.reason = "empty", "the model returned no usable question/answer pair"
            drafts.extend(
                _draft_item(doc, section, section_chunks, k, question, answer, completion, offline_flags[-1])
                for k, (question, answer) in enumerate(pairs)
            )
        if progress is not None:
            progress(done + 1, len(chosen), section.label)
    items = _drop_duplicates(drafts, reports, dedupe_threshold)
    offline = all(offline_flags) if offline_flags else getattr(llm, "provider", "") == "offline"
    generator = {
        "provider": used_provider,
        "model": used_model,
        "offline": offline,
        "task": SYNTH_QA,
        "template": f"{doc.language}/{SYNTH_QA}@{tmpl.short_hash}",
        "per_section": per_section,
        "temperature": temperature,
        "dedupe_threshold": dedupe_threshold,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if offline:
        generator["note"] = OFFLINE_NOTE
    return TestSet(doc.summary(), generator, reports, items)


def _draft_item(
    doc: Document,
    section: Section,
    section_chunks: Sequence[Chunk],
    k: int,
    question: str,
    answer: str,
    completion: Completion,
    offline: bool,
) -> TestItem:
    """The k-th generated pair of a section as a test item, with its provenance (section, chunks, generator)."""
    src = source_chunk(answer, section_chunks)
    return TestItem(
        id=f"s{section.index:02d}-q{k + 1:02d}",
        question=question,
        ground_truth=answer,
        metadata={
            "category": section.label,
            "document": doc.name,
            "section_index": section.index,
            "section": section.heading,
            "section_path": " > ".join(section.path),
            "chunk_ids": [c.id for c in section_chunks],
            "source_chunk_id": src.id if src else None,
            "grounding": round(containment(answer, section.text), 3),
            "generator_provider": completion.provider,
            "generator_model": completion.model,
            "synthetic": True,
            "generator_offline": offline,
        },
    )


def _drop_duplicates(drafts: list[TestItem], reports: list[SectionReport], threshold: float) -> list[TestItem]:
    """The drafts without near-duplicate questions; each section's report counts what it kept and dropped."""
    dropped = near_duplicates([d.question for d in drafts], threshold)
    items: list[TestItem] = []
    by_section = {r.index: r for r in reports}
    for i, item in enumerate(drafts):
        report = by_section[item.metadata["section_index"]]
        if i in dropped:
            report.duplicates += 1
            continue
        report.kept += 1
        items.append(item)
    return items


# ------------------------------------------------------------------------------------------ reading
def parse_testset(data: Any, name: str = "testset") -> TestSet:
    """A test set from parsed JSON: this module's format, a dataset-like ``rows`` list, or seed 003's
    ``[{"question", "answer"}]`` list (there the answer is the synthetic ground truth)."""
    header: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    rows = data.get("rows", data.get("pairs", data.get("items"))) if isinstance(data, Mapping) else data
    if not isinstance(rows, list):
        raise SynthError(f"{name}: expected a test set object with 'rows' or a list of {{question, answer}} objects")
    items: list[TestItem] = []
    for n, row in enumerate(rows, 1):
        if not isinstance(row, Mapping):
            raise SynthError(f"{name} row {n}: expected an object, got {type(row).__name__}")
        question = row.get("question", row.get("user_input"))
        truth = row.get("ground_truth", row.get("reference"))
        if truth is None and "ground_truth" not in row:
            truth = row.get("answer")  # seed 003 synthetic_qa.json: the generated answer is the ground truth
        if not isinstance(question, str) or not question.strip():
            raise SynthError(f"{name} row {n}: missing question")
        if not isinstance(truth, str) or not truth.strip():
            raise SynthError(f"{name} row {n}: missing ground_truth (or answer)")
        skip = {"id", "question", "user_input", "ground_truth", "reference", "answer", "contexts", "retrieved_contexts"}
        metadata = {k: v for k, v in row.items() if k not in skip}
        items.append(TestItem(str(row.get("id") or f"q{n:03d}"), question.strip(), truth.strip(), metadata))
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise SynthError(f"{name}: duplicate row ids")
    sections = [SectionReport(**s) for s in header.get("sections", []) if isinstance(s, Mapping)]
    return TestSet(dict(header.get("document") or {}), dict(header.get("generator") or {}), sections, items)


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
