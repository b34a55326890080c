"""Synthetic QA test sets from documents (the synthetic-QA article's "data preparation" phase), with question types.

Each call sends one section (two passages for multi-chunk) to the LLM through its type's task and template
in the document's language, asking for ``n`` question/answer pairs; the answer is the ground truth. How many
of each type is set by shares (``kinds.plan_calls``). Every pair keeps its provenance (document, section,
source chunk ids, generator provider and model), type, status and flags; near-identical questions are set
aside as rejected beside their twin, and a call that fails marks its section with the reason while the
others go on. The offline provider's shapes are heuristics (``offline.generate`` for facts,
``offline.question_types`` for the rest) and the set says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from rageval_core.core.messages import say
from rageval_core.data.documents import Chunk, Document, Section, chunk_document
from rageval_core.core.jsonparse import ParseError, parse_json_object
from rageval_core.llm.base import LLM, Completion, LLMRequest, ProviderError
from rageval_core.scoring.prompts import PromptTemplate, TemplateError, resolve_template
from rageval_core.rag.synth.curation import (
    DEFAULT_DEDUPE_THRESHOLD,
    containment,
    flag_item,
    mark_duplicate,
    near_duplicates,
    source_chunk,
)
from rageval_core.rag.synth.kinds import (
    DEFAULT_SHARES,
    FACT,
    ID_PREFIX,
    MULTI_CHUNK,
    NOT_IN_DOCUMENTS,
    OUT_OF_SCOPE,
    QUESTION_TYPES,
    TASK_OF,
    Call,
    SharesError,
    normalise_shares,
    plan_calls,
)
from rageval_core.rag.synth.model import ACCEPTED, SectionReport, SynthError, TestItem, TestSet
from rageval_core.core.tasks import SYNTH_QA, schema_for

DEFAULT_PER_SECTION = 3
MAX_PER_SECTION = 20
OFFLINE_NOTE = (
    "offline provider: heuristic questions, no language model was used (facts: a sentence's key phrase and the "
    "section heading, the sentence as ground truth; reasoning: a numeric rule applied to a case; multi-chunk: "
    "one sentence from each of two sections; out-of-scope: fixed aspects the document never mentions)"
)

Progress = Callable[[int, int, str], None]  # (calls done, calls total, what was just done)
Templates = Mapping[str, PromptTemplate | str | None]


def parse_pairs(data: Mapping[str, Any], n: int) -> list[tuple[str, str]]:
    """Valid (question, answer) pairs from a ``synth_*`` answer, at most ``n``; a wrong shape is a ParseError."""
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


def synth_template(language: str, override: PromptTemplate | str | None = None, qtype: str = FACT) -> PromptTemplate:
    """The template of question type ``qtype`` in ``language``, or an edited one (raw text or a PromptTemplate)."""
    try:
        return resolve_template(TASK_OF[qtype], language, override)
    except TemplateError as exc:
        raise SynthError(f"{TASK_OF[qtype]} template: {exc}") from None


def _request(template: PromptTemplate, task: str, values: dict[str, Any], extra: dict[str, Any], language: str,
             temperature: float) -> LLMRequest:
    try:
        messages = template.to_messages(**values)
    except TemplateError as exc:
        raise SynthError(f"{task} template: {exc}") from None
    return LLMRequest(task=task, messages=messages, schema=schema_for(task), inputs={**values, **extra},
                      language=language, temperature=temperature)


def build_request(template: PromptTemplate, title: str, section: Section, n: int, language: str, temperature: float) -> LLMRequest:
    """The ``synth_qa`` (fact) request of one section: rendered prompt, schema and the structured inputs."""
    values = {"title": title, "heading": section.heading, "text": section.text, "n": n}
    return _request(template, SYNTH_QA, values, {}, language, temperature)


def _main_chunk(chunks: Sequence[Chunk], language: str) -> Chunk | None:
    """The chunk of a section with the most distinct content (what a multi-chunk question is built on)."""
    from rageval_core.core.text import token_keys

    return max(chunks, key=lambda c: len(token_keys(c.text, language)), default=None)  # type: ignore[arg-type]


def typed_request(
    call: Call, template: PromptTemplate, doc: Document, chunks: Mapping[int, Sequence[Chunk]], temperature: float,
    document_text: str,
) -> tuple[LLMRequest, list[Chunk]]:
    """The request of one planned call and the chunks its answers may come from."""
    first = doc.sections[call.sections[0]]
    task = TASK_OF[call.qtype]
    if call.qtype == MULTI_CHUNK:
        a_chunks, b_chunks = chunks[call.sections[0]], chunks[call.sections[-1]]
        if call.sections[0] == call.sections[-1]:  # a one-section document: its first two chunks
            a, b = (a_chunks[0], a_chunks[1]) if len(a_chunks) > 1 else (None, None)
        else:
            a, b = _main_chunk(a_chunks, doc.language), _main_chunk(b_chunks, doc.language)
        if a is None or b is None:
            raise SynthError("a multi-chunk question needs two chunks")
        second = doc.sections[b.section_index]
        values = {"title": doc.title, "heading_a": first.heading, "text_a": a.text, "heading_b": second.heading,
                  "text_b": b.text, "n": call.n}
        return _request(template, task, values, {}, doc.language, temperature), [a, b]
    values = {"title": doc.title, "heading": first.heading, "text": first.text, "n": call.n}
    extra: dict[str, Any] = {}
    if call.qtype == OUT_OF_SCOPE:
        values["not_found"] = NOT_IN_DOCUMENTS.get(doc.language, NOT_IN_DOCUMENTS["en"])
        extra["document_text"] = document_text
    return _request(template, task, values, extra, doc.language, temperature), list(chunks[call.sections[0]])


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


def _templates(language: str, template: PromptTemplate | str | None, templates: Templates | None,
               types: Sequence[str]) -> dict[str, PromptTemplate]:
    chosen = dict(templates or {})
    if template is not None:
        chosen[FACT] = template
    return {t: synth_template(language, chosen.get(t), t) for t in types}


def generate_testset(
    doc: Document,
    llm: LLM,
    *,
    per_section: int = DEFAULT_PER_SECTION,
    shares: Mapping[str, float] | None = None,
    chunks: Sequence[Chunk] | None = None,
    dedupe_threshold: float = DEFAULT_DEDUPE_THRESHOLD,
    temperature: float = 0.7,
    template: PromptTemplate | str | None = None,
    templates: Templates | None = None,
    sections: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> TestSet:
    """About ``per_section`` QA pairs per section of ``doc`` (or of the ``sections`` indices given), split
    over question types by ``shares`` (facts only by default). ``template`` overrides the fact template,
    ``templates`` any type's.

    Calls are sent one at a time (the runner is the project's only concurrency boundary); a provider or parse
    failure marks its section ``failed`` with the reason and the next call goes on. Raises ``SynthError`` only
    when nothing can be sent (bad template or shares, n out of range, no sections).
    """
    if not 1 <= per_section <= MAX_PER_SECTION:
        raise SynthError(f"questions per section must be between 1 and {MAX_PER_SECTION} (got {per_section})")
    try:
        norm = normalise_shares(shares or DEFAULT_SHARES)
    except SharesError as exc:
        raise SynthError(str(exc)) from None
    chosen = [s for s in doc.sections if sections is None or s.index in set(sections)]
    if not chosen:
        raise SynthError(f"{doc.name}: no sections to generate from")
    tmpls = _templates(doc.language, template, templates, list(norm))
    all_chunks = list(chunks) if chunks is not None else chunk_document(doc)
    doc_chunks = [c for c in all_chunks if c.document == doc.name]
    by_section = {s.index: [c for c in doc_chunks if c.section_index == s.index] for s in doc.sections}
    document_text = "\n".join(c.text for c in doc_chunks)
    reports = {s.index: SectionReport(s.index, s.heading, "ok", chunk_ids=[c.id for c in by_section[s.index]]) for s in chosen}
    calls = plan_calls([s.index for s in chosen], per_section, norm, MAX_PER_SECTION)
    offline_flags: list[bool] = []
    drafts: list[TestItem] = []
    counters: dict[tuple[int, str], int] = {}
    outcome: dict[int, list[str]] = {s.index: [] for s in chosen}
    used_provider, used_model = getattr(llm, "provider", "?"), getattr(llm, "model", "?")
    for done, call in enumerate(calls):
        section = doc.sections[call.sections[0]]
        report = reports[section.index]
        report.asked[call.qtype] = report.asked.get(call.qtype, 0) + call.n
        if cancel is not None and cancel.is_set():
            outcome[section.index].append("cancelled")
            continue
        try:
            request, sources = typed_request(call, tmpls[call.qtype], doc, by_section, temperature, document_text)
        except SynthError as exc:
            if "template" in str(exc):
                raise
            outcome[section.index].append(f"empty:{call.qtype}: {exc}")
            continue
        try:
            completion = llm.complete(request)
            pairs = parse_pairs(parse_json_object(completion.text), call.n)
            used_provider, used_model = completion.provider, completion.model
            offline_flags.append(offline_completion(completion))
        except (ProviderError, ParseError) as exc:
            outcome[section.index].append(f"failed:{failure_reason(exc)}")
        else:
            report.generated += len(pairs)
            outcome[section.index].append("ok" if pairs else f"empty:{call.qtype}")
            for question, answer in pairs:
                key = (section.index, call.qtype)
                counters[key] = counters.get(key, 0) + 1
                drafts.append(_draft_item(doc, call, sources, counters[key], question, answer, completion, offline_flags[-1]))
        if progress is not None:
            label = section.label if call.qtype == FACT else f"{section.label} ({call.qtype})"
            progress(done + 1, len(calls), label)
    for index, results in outcome.items():
        _settle(reports[index], results)
    items, rejected = _set_aside_duplicates(drafts, reports, dedupe_threshold)
    for item in items:
        flag_item(item, doc_chunks)
    offline = all(offline_flags) if offline_flags else getattr(llm, "provider", "") == "offline"
    fact_tmpl = tmpls.get(FACT) or synth_template(doc.language, template)
    generator = {
        "provider": used_provider,
        "model": used_model,
        "offline": offline,
        "task": SYNTH_QA,
        "template": f"{doc.language}/{SYNTH_QA}@{fact_tmpl.short_hash}",
        "templates": {t: f"{doc.language}/{TASK_OF[t]}@{tm.short_hash}" for t, tm in tmpls.items()},
        "shares": {t: round(v, 4) for t, v in norm.items()},
        "per_section": per_section,
        "temperature": temperature,
        "dedupe_threshold": dedupe_threshold,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if offline:
        generator["note"] = OFFLINE_NOTE
    return TestSet(doc.summary(), generator, [reports[s.index] for s in chosen], items, rejected)


def _settle(report: SectionReport, results: list[str]) -> None:
    """A section's status from its calls' outcomes: failed if any call failed, cancelled if none was sent,
    empty if no call returned a pair, else ok."""
    failed = [r.split(":", 1)[1] for r in results if r.startswith("failed:")]
    if failed:
        report.status, report.reason = "failed", "; ".join(failed)
    elif results and all(r == "cancelled" for r in results):
        report.status, report.reason = "cancelled", say("synth.cancelled")
    elif results and not any(r == "ok" for r in results):
        report.status, report.reason = "empty", say("synth.empty")


def _draft_item(
    doc: Document,
    call: Call,
    sources: Sequence[Chunk],
    k: int,
    question: str,
    answer: str,
    completion: Completion,
    offline: bool,
) -> TestItem:
    """The k-th pair of its type from a section as a test item, with provenance, type, status and sources."""
    section = doc.sections[call.sections[0]]
    section_chunks = [c for c in sources if c.section_index == section.index] or list(sources)
    if call.qtype == OUT_OF_SCOPE:
        source_ids: list[str] = []
    elif call.qtype == MULTI_CHUNK:
        source_ids = list(dict.fromkeys(c.id for c in sources))
    else:
        src = source_chunk(answer, section_chunks)
        source_ids = [src.id] if src else []
    source_text = "\n".join(c.text for c in sources if c.id in source_ids) or section.text
    section_indices = sorted({c.section_index for c in sources}) if call.qtype == MULTI_CHUNK else [section.index]
    return TestItem(
        id=f"s{section.index:02d}-{ID_PREFIX[call.qtype]}{k:02d}",
        question=question,
        ground_truth=answer,
        metadata={
            "category": section.label,
            "document": doc.name,
            "section_index": section.index,
            "section": section.heading,
            "section_path": " > ".join(section.path),
            "chunk_ids": [c.id for c in section_chunks] if call.qtype != MULTI_CHUNK else [c.id for c in sources],
            "question_type": call.qtype,
            "source_chunk_id": source_ids[0] if source_ids else None,
            "source_chunk_ids": source_ids,
            **({"section_indices": section_indices} if call.qtype == MULTI_CHUNK else {}),
            "grounding": None if call.qtype == OUT_OF_SCOPE else round(containment(answer, source_text), 3),
            "generator_provider": completion.provider,
            "generator_model": completion.model,
            "synthetic": True,
            "generator_offline": offline,
            "status": ACCEPTED,
            "flags": [],
        },
    )


def _set_aside_duplicates(drafts: list[TestItem], reports: Mapping[int, SectionReport], threshold: float
                          ) -> tuple[list[TestItem], list[TestItem]]:
    """(pairs kept, near-duplicates set aside as rejected beside their twin); each section's report counts
    what it kept (per type) and set aside."""
    dropped = near_duplicates([d.question for d in drafts], threshold)
    items: list[TestItem] = []
    rejected: list[TestItem] = []
    for i, item in enumerate(drafts):
        report = reports[item.metadata["section_index"]]
        if i in dropped:
            report.duplicates += 1
            rejected.append(mark_duplicate(item, drafts[dropped[i]]))
            continue
        report.kept += 1
        qtype = item.metadata["question_type"]
        report.by_type[qtype] = report.by_type.get(qtype, 0) + 1
        items.append(item)
    for report in reports.values():
        report.by_type = {t: report.by_type[t] for t in QUESTION_TYPES if t in report.by_type}
    return items, rejected
