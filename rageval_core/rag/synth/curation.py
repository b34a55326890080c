"""Curation of a test set: near-duplicates, flags a reviewer should look at, statuses and bulk decisions.

Flags (each pair's ``flags``, with a one-line ``flag_notes[flag]`` saying why):

- ``near_duplicate``: the question repeats an earlier one (``duplicate_of`` names the twin); such a pair is
  set aside as ``rejected`` at generation and shown beside its twin, so the reviewer can restore it;
- ``unsupported``: the ground truth is not supported by the pair's source chunks (the offline claim-support
  heuristic, the one faithfulness uses, below its language's threshold), so the "right answer" may be invented;
- ``answerable_out_of_scope``: an out-of-scope question whose words a chunk of the document covers
  (``answered_by`` names it): the right answer may not be "not in the documents" at all.

The checks are lexical heuristics (no model), labelled as such; they are for review, never a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from rageval_core.core.messages import say
from rageval_core.data.documents import Chunk
from rageval_core.offline.support import faithfulness_score, support_threshold
from rageval_core.rag.synth.kinds import OUT_OF_SCOPE, REASONING
from rageval_core.rag.synth.model import ACCEPTED, EDITED, REJECTED, STATUSES, TestItem, TestSet
from rageval_core.core.text import char_ngrams, detect_language, normalize, numbers, token_keys
from rageval_core.core.errors import ConfigError

DEFAULT_DEDUPE_THRESHOLD = 0.9
NEAR_DUPLICATE, UNSUPPORTED, ANSWERABLE_OUT_OF_SCOPE = "near_duplicate", "unsupported", "answerable_out_of_scope"
FLAGS: tuple[str, ...] = (NEAR_DUPLICATE, UNSUPPORTED, ANSWERABLE_OUT_OF_SCOPE)
# Share of an out-of-scope question's content words one chunk must hold to flag it as answerable. Measured on
# sample_data/company_policy_ja.md: the offline out-of-scope questions and hand-written unanswerable ones
# ("社員食堂の営業時間は…") cover at most 0.5 of their words in any chunk (the topic word), questions
# that reuse a sentence's words 0.8 to 1.0. A paraphrased answerable question ("新幹線はどの座席を…", 0.4)
# slips through: lexical, so a hint for review, not a verdict.
ANSWERABLE_COVERAGE = 0.6
_QUESTION_WORDS = {
    "何", "なに", "なん", "いつ", "どこ", "誰", "だれ", "どう", "どの", "どれ", "どちら", "いくら", "いくつ", "なぜ", "何故",
    "ある", "いる", "する", "なる", "できる", "れる", "られる", "ます", "です", "定める", "場合", "規定", "制度",
    "what", "when", "where", "who", "whom", "which", "why", "how", "many", "much", "does", "do", "say", "rule", "rules",
}


# ------------------------------------------------------------------------------------------ duplicates
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
    """The chunk that holds most of the answer (the first one on a tie)."""
    best: tuple[float, int] | None = None
    for i, c in enumerate(chunks):
        score = containment(answer, c.text)
        if best is None or score > best[0]:
            best = (score, i)
    return None if best is None else chunks[best[1]]


# ------------------------------------------------------------------------------------------ flags
def answer_support(question: str, answer: str, sources: Sequence[str], *, reasoning: bool = False) -> float | None:
    """How well the source chunks support the ground truth: the offline claim-support soft minimum, or for a
    reasoning pair its best-supported sentence (its conclusion is derived, so only the rule it rests on must
    be found in the sources)."""
    value, scores = faithfulness_score(question, list(sources), answer)
    if reasoning and scores:
        return max(s.score for s in scores)
    return value


def question_coverage(question: str, chunk_text: str) -> float:
    """Share of the question's content words (question words and generic verbs left out) found in a chunk."""
    lang = detect_language(question)
    words = token_keys(question, lang) - _QUESTION_WORDS
    if not words:
        return 0.0
    return len(words & token_keys(chunk_text, lang)) / len(words)


def answering_chunk(question: str, chunks: Sequence[Chunk]) -> tuple[Chunk | None, float]:
    """The chunk covering most of the question's content words, and that share."""
    best: tuple[Chunk | None, float] = (None, 0.0)
    for chunk in chunks:
        share = question_coverage(question, chunk.text)
        if share > best[1]:
            best = (chunk, share)
    return best


def _add_flag(item: TestItem, flag: str, note: str) -> None:
    flags = item.flags
    if flag not in flags:
        flags.append(flag)
    item.metadata["flags"] = flags
    item.metadata["flag_notes"] = {**(item.metadata.get("flag_notes") or {}), flag: note}


def flag_item(item: TestItem, chunks: Sequence[Chunk]) -> TestItem:
    """Set ``unsupported`` / ``answerable_out_of_scope`` on ``item`` (in place) from the document's chunks."""
    by_id = {c.id: c for c in chunks}
    if item.question_type == OUT_OF_SCOPE:
        chunk, share = answering_chunk(item.question, chunks)
        if chunk is not None and share >= ANSWERABLE_COVERAGE:
            item.metadata["answered_by"] = chunk.id
            _add_flag(item, ANSWERABLE_OUT_OF_SCOPE, say("synth.answerable", chunk=chunk.id, share=f"{share:.0%}"))
        return item
    sources = [by_id[c].text for c in item.metadata.get("source_chunk_ids") or [] if c in by_id]
    if not sources:
        return item
    support = answer_support(item.question, item.ground_truth, sources, reasoning=item.question_type == REASONING)
    language = detect_language(item.ground_truth)
    item.metadata["support"] = None if support is None else round(support, 3)
    if support is not None and support < support_threshold(language):
        _add_flag(item, UNSUPPORTED, say("synth.unsupported", support=f"{support:.2f}", threshold=support_threshold(language)))
    return item


def mark_duplicate(item: TestItem, twin: TestItem) -> TestItem:
    """``item`` set aside as a near-duplicate of ``twin`` (in place)."""
    item.metadata["status"] = REJECTED
    item.metadata["duplicate_of"] = twin.id
    _add_flag(item, NEAR_DUPLICATE, say("synth.repeats", twin=twin.id, question=twin.question))
    return item


# ------------------------------------------------------------------------------------------ review
def review_order(ts: TestSet) -> list[TestItem]:
    """Every pair for review: flagged ones first, each set-aside duplicate right after its twin, otherwise the
    generation order."""
    twins: dict[str, list[TestItem]] = {}
    loose: list[TestItem] = []
    ids = {i.id for i in ts.all_items}
    for item in ts.rejected:
        twin = item.metadata.get("duplicate_of")
        (twins.setdefault(twin, []) if twin in ids else loose).append(item)
    groups = [[item, *twins.get(item.id, [])] for item in ts.items] + [[i] for i in loose]
    flagged = [g for g in groups if any(i.flags for i in g)]
    plain = [g for g in groups if not any(i.flags for i in g)]
    return [i for g in flagged + plain for i in g]


def set_status(ts: TestSet, ids: Iterable[str], status: str) -> TestSet:
    """A new test set with the pairs ``ids`` given ``status`` (rejected ones are set aside, others come back
    in use). Accepting a pair keeps its flags: they record what the checks saw."""
    if status not in STATUSES:
        raise ConfigError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    chosen = set(ids)
    items: list[TestItem] = []
    for item in ts.all_items:
        if item.id in chosen:
            new_status = status
            if status == ACCEPTED and item.status == EDITED:
                new_status = EDITED  # accepting an edited pair keeps the record of the edit
            item = replace(item, metadata={**item.metadata, "status": new_status})
        items.append(item)
    order = {i.id: n for n, i in enumerate(ts.all_items)}
    items.sort(key=lambda i: order[i.id])
    return replace(ts, items=[i for i in items if i.status != REJECTED], rejected=[i for i in items if i.status == REJECTED])


def select(ts: TestSet, *, flag: str | None = None, qtype: str | None = None, status: str | None = None) -> list[str]:
    """Ids of the pairs with ``flag`` (``"any"`` for any flag), of type ``qtype`` and in ``status``."""
    out = []
    for item in ts.all_items:
        if flag == "any" and not item.flags:
            continue
        if flag not in (None, "any") and flag not in item.flags:
            continue
        if qtype is not None and item.question_type != qtype:
            continue
        if status is not None and item.status != status:
            continue
        out.append(item.id)
    return out
