"""A small retrieve-and-answer pipeline to evaluate (the synthetic-QA article's SimpleRAG without a vector database).

Chunks are embedded once with the active embedder (kept in a small in-process index cache keyed by the
embedder and the chunk texts; API embedders also cache vectors in SQLite), each question is embedded,
the top-k chunks by cosine similarity are retrieved (k = 2 as in the synthetic-QA article) and the ``rag_answer`` task
answers from them. The result is a list of evaluation ``Sample`` rows: question, retrieved contexts,
answer, ground truth = the synthetic answer, and metadata with the retrieved chunk ids, their scores and
whether the question's source section came back (the retrieval hit).

``cosine_matrix``, ``top_k`` and ``hit_rate`` are the pure math; ``run_rag`` does the I/O.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rageval_core.data.documents import Chunk, Document, chunk_document
from rageval_core.core.jsonparse import ParseError, parse_json_object
from rageval_core.llm.base import LLM, Embedder, LLMRequest, ProviderError
from rageval_core.scoring.prompts import PromptTemplate, TemplateError, resolve_template
from rageval_core.rag.synth import TestItem, failure_reason, offline_completion
from rageval_core.core.tasks import RAG_ANSWER, schema_for
from rageval_core.core.text import detect_language
from rageval_core.core.types import Sample
from rageval_core.core.errors import ConfigError

DEFAULT_K = 2
Progress = Callable[[int, int], None]  # (questions answered, questions total)


class RagError(ConfigError):
    """The pipeline cannot run at all (no chunks, k < 1, embedding failed, bad template)."""


# ------------------------------------------------------------------------------------------ pure math
def cosine_matrix(queries: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Cosine similarity of every query row with every document row (rows need not be normalised;
    a zero row scores 0 against everything)."""
    q = np.asarray(queries, dtype=np.float64)
    d = np.asarray(docs, dtype=np.float64)
    if q.ndim != 2 or d.ndim != 2 or (q.size and d.size and q.shape[1] != d.shape[1]):
        raise ValueError(f"cannot compare vectors of shapes {q.shape} and {d.shape}")
    qn = np.linalg.norm(q, axis=1, keepdims=True)
    dn = np.linalg.norm(d, axis=1, keepdims=True)
    qn[qn == 0] = 1.0
    dn[dn == 0] = 1.0
    return (q / qn) @ (d / dn).T


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first; ties keep the earlier index first."""
    if k < 1:
        raise ConfigError("k must be at least 1")
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [int(i) for i in order[:k]]


def hit_rate(retrieved: Sequence[Sequence[str]], relevant: Sequence[set[str] | None]) -> float | None:
    """Share of questions with at least one relevant id among the retrieved ones; questions whose
    relevant set is unknown (None) are left out; None when no question can be judged."""
    judged = [(set(r), rel) for r, rel in zip(retrieved, relevant) if rel is not None]
    if not judged:
        return None
    return sum(1 for r, rel in judged if r & rel) / len(judged)


def recall_at_k(ranked: Sequence[Sequence[str]], sources: Sequence[Sequence[set[str]]], k: int) -> float | None:
    """Mean share of each question's sources found in its top ``k`` ids. A source is a set of equivalent
    chunk ids (any of them counts: the chunks that hold the evidence sentence when chunks overlap), so a
    multi-chunk question with two sources scores 0.5 when one is retrieved. Questions without sources are
    left out; None when none is left."""
    if k < 1:
        raise ConfigError("k must be at least 1")
    shares = []
    for ids, groups in zip(ranked, sources):
        if not groups:
            continue
        top = set(list(ids)[:k])
        shares.append(sum(1 for g in groups if top & set(g)) / len(groups))
    return sum(shares) / len(shares) if shares else None


# ------------------------------------------------------------------------------------------ index
@dataclass
class ChunkIndex:
    """Chunks and their unit vectors from one embedder."""

    chunks: list[Chunk]
    vectors: np.ndarray
    embedder: str
    with_heading: bool = True

    def search(self, query_vectors: np.ndarray, k: int) -> list[list[tuple[Chunk, float]]]:
        """The top-``k`` chunks and cosine scores for every query vector."""
        sims = cosine_matrix(query_vectors, self.vectors)
        return [[(self.chunks[i], float(row[i])) for i in top_k(row, min(k, len(self.chunks)))] for row in sims]


_INDEX_CACHE: OrderedDict[str, ChunkIndex] = OrderedDict()
_INDEX_LOCK = threading.Lock()
_INDEX_CACHE_SIZE = 8


def _index_key(embedder: Embedder, texts: Sequence[str], chunks: Sequence[Chunk]) -> str:
    h = hashlib.sha256()
    h.update(f"{embedder.provider}\x00{embedder.model}\x00".encode())
    for c, text in zip(chunks, texts):
        h.update(c.id.encode("utf-8") + b"\x00" + text.encode("utf-8") + b"\x01")
    return h.hexdigest()


def build_index(
    chunks: Sequence[Chunk], embedder: Embedder, *, with_heading: bool = True, use_cache: bool = True
) -> ChunkIndex:
    """Embed ``chunks`` (or reuse the index built for the same chunks and embedder in this process)."""
    if not chunks:
        raise RagError("no chunks to retrieve from")
    texts = [c.embed_text(with_heading) for c in chunks]
    key = _index_key(embedder, texts, chunks)
    if use_cache:
        with _INDEX_LOCK:
            if key in _INDEX_CACHE:
                _INDEX_CACHE.move_to_end(key)
                return _INDEX_CACHE[key]
    try:
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    except ProviderError as exc:
        raise RagError(f"embedding the chunks failed ({exc.kind}): {exc}") from None
    if vectors.ndim != 2 or vectors.shape[0] != len(chunks):
        raise RagError(f"the embedder returned {vectors.shape[0] if vectors.ndim else 0} vectors for {len(chunks)} chunks")
    index = ChunkIndex(list(chunks), vectors, f"{embedder.provider}/{embedder.model}", with_heading)
    if use_cache:
        with _INDEX_LOCK:
            _INDEX_CACHE[key] = index
            while len(_INDEX_CACHE) > _INDEX_CACHE_SIZE:
                _INDEX_CACHE.popitem(last=False)
    return index


# ------------------------------------------------------------------------------------------ pipeline
@dataclass
class RagRun:
    """The evaluation rows and what the retrieval did."""

    samples: list[Sample]
    k: int
    provider: str
    model: str
    embedder: str
    chunks: int
    hit_rate: float | None
    errors: int = 0
    offline: bool = False
    settings: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "questions": len(self.samples),
            "k": self.k,
            "chunks": self.chunks,
            "retrieval_hit_rate": self.hit_rate,
            "answer_errors": self.errors,
            "provider": self.provider,
            "model": self.model,
            "embedder": self.embedder,
            "offline": self.offline,
            **self.settings,
        }


def rag_template(language: str, override: PromptTemplate | str | None = None) -> PromptTemplate:
    """The ``rag_answer`` template in ``language``, or an edited one."""
    try:
        return resolve_template(RAG_ANSWER, language, override)
    except TemplateError as exc:
        raise RagError(f"rag_answer template: {exc}") from None


def answer_request(template: PromptTemplate, question: str, contexts: Sequence[str], language: str) -> LLMRequest:
    """The ``rag_answer`` request: rendered prompt, schema and the structured inputs (temperature 0)."""
    values = {"question": question, "contexts": list(contexts)}
    try:
        messages = template.to_messages(**values)
    except TemplateError as exc:
        raise RagError(f"rag_answer template: {exc}") from None
    return LLMRequest(task=RAG_ANSWER, messages=messages, schema=schema_for(RAG_ANSWER), inputs=values, language=language)


def relevant_chunks(item: TestItem, chunks: Sequence[Chunk]) -> set[str] | None:
    """Ids of the chunks of the item's source section, or sections for a multi-chunk question (None when the
    item has no provenance or is out of scope: no chunk is supposed to answer it)."""
    doc, section = item.metadata.get("document"), item.metadata.get("section_index")
    if doc is None or section is None or item.metadata.get("question_type") == "out_of_scope":
        return None
    sections = set(item.metadata.get("section_indices") or [section])
    return {c.id for c in chunks if c.document == doc and c.section_index in sections}


def _answer(llm: LLM, request: LLMRequest) -> tuple[str, str | None, str, str, bool]:
    """(answer, error reason or None, provider, model, offline-generated) of one question."""
    offline = llm.provider == "offline"
    try:
        completion = llm.complete(request)
        data = parse_json_object(completion.text)
    except (ProviderError, ParseError) as exc:
        return "", failure_reason(exc), llm.provider, llm.model, offline
    offline = offline_completion(completion)
    answer = data.get("answer")
    if not isinstance(answer, str):
        return "", "parse_error: expected a string under 'answer'", completion.provider, completion.model, offline
    return answer.strip(), None, completion.provider, completion.model, offline


def run_rag(
    items: Sequence[TestItem],
    documents: Sequence[Document],
    llm: LLM,
    embedder: Embedder,
    *,
    k: int = DEFAULT_K,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    include_heading: bool = True,
    template: PromptTemplate | str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RagRun:
    """Retrieve the top-``k`` chunks of ``documents`` for every item and answer from them
    (``include_heading``: embed each chunk with its section heading in front).

    A failed answer (provider or parse error) leaves that row's answer empty with ``rag_error`` in its
    metadata (evaluation then marks it ``empty_answer``) and the next question goes on; a cancelled run
    returns the rows answered so far.
    """
    if k < 1:
        raise RagError("k must be at least 1")
    if not items:
        raise RagError("no questions to answer")
    chunks = [c for d in documents for c in chunk_document(d, size=chunk_size, overlap=chunk_overlap)]
    index = build_index(chunks, embedder, with_heading=include_heading)
    try:
        query_vectors = np.asarray(embedder.embed([i.question for i in items]), dtype=np.float32)
    except ProviderError as exc:
        raise RagError(f"embedding the questions failed ({exc.kind}): {exc}") from None
    hits = index.search(query_vectors, k)
    templates: dict[str, PromptTemplate] = {}
    samples: list[Sample] = []
    errors = 0
    provider, model = llm.provider, llm.model
    retrieved_ids: list[list[str]] = []
    offline_rows: list[bool] = []
    relevant: list[set[str] | None] = []
    for n, (item, found) in enumerate(zip(items, hits)):
        if cancel is not None and cancel.is_set():
            break
        language = detect_language(item.question + " " + (found[0][0].text if found else ""))
        if language not in templates:
            templates[language] = rag_template(language, template)
        contexts = [c.text for c, _ in found]
        answer, error, provider, model, offline = _answer(llm, answer_request(templates[language], item.question, contexts, language))
        ids = [c.id for c, _ in found]
        rel = relevant_chunks(item, chunks)
        retrieved_ids.append(ids)
        relevant.append(rel)
        metadata: dict[str, Any] = {
            **item.metadata,
            "retrieved_chunk_ids": ids,
            "retrieval_scores": [round(s, 4) for _, s in found],
            "retrieval_hit": None if rel is None else bool(set(ids) & rel),
            "rag_k": k,
            "rag_provider": provider,
            "rag_model": model,
            "rag_embedder": index.embedder,
        }
        if offline:
            metadata["rag_offline"] = True
        offline_rows.append(offline)
        if error:
            errors += 1
            metadata["rag_error"] = error
        samples.append(Sample(item.id, item.question, tuple(contexts), answer, item.ground_truth, metadata))
        if progress is not None:
            progress(n + 1, len(items))
    return RagRun(
        samples=samples,
        k=k,
        provider=provider,
        model=model,
        embedder=index.embedder,
        chunks=len(chunks),
        hit_rate=hit_rate(retrieved_ids, relevant),
        errors=errors,
        offline=bool(offline_rows) and all(offline_rows),
        settings={"chunk_size": chunk_size, "chunk_overlap": chunk_overlap, "include_heading": include_heading},
    )
