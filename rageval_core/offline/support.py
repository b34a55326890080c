"""Claim support scoring: how well a piece of evidence (contexts, or a reference) backs each claim.

Per claim: character-trigram and content-token coverage, the encoder's best cosine, the numbers and names
missing from the evidence, combined by a small logistic model (``model``; every constant fitted on the
dev halves of ../shared/benchmarks by bench/fit_offline.py), and vetoed to 0 when a context sentence
contradicts the claim (``contradiction``: negation flipped, name, number or date swapped; ``units``: a unit
or currency changed). Aggregated over an answer with a soft minimum for the one-call judge; the decomposed
metric takes the length-weighted mean of the supports. Figures: docs/offline.md and
docs/benchmarks.md (bench/trust.py, bench/minimal_edits.py).

Pure functions: the embedder is passed in (anything with ``embed(texts) -> rows``) or omitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from rageval_core.offline import injection
from rageval_core.offline.contradiction import POLARITY, UNIT, Finding, fold, frame_overlap, sentence_findings
from rageval_core.offline.model import LanguageModel, feature_vector, language_model
from rageval_core.offline.numerals import number_words, with_digits
from rageval_core.offline.units import UnitCheck, check_units, quantities, show
from rageval_core.core.names import entities
from rageval_core.core.text import (
    Language,
    char_ngrams,
    content_tokens,
    detect_language,
    normalize,
    numbers,
    split_sentences,
)

# The squash below maps a cosine onto [0, 1] for callers outside claim support (answer correctness'
# similarity, the offline RAG's sentence pick); claim support itself uses the fitted model (``model``).
EMBED_LO, EMBED_HI = 0.2, 0.9
# A claim is "supported" when its modelled support (a probability) is at least one half; the fitted
# per-language bias sets where that falls (``model``, fitted by bench/fit_offline.py on the dev halves).
CLAIM_THRESHOLD = 0.5


def support_threshold(language: str) -> float:
    """The verdict threshold for a claim's support, in any language (the fitted bias differs instead)."""
    del language
    return CLAIM_THRESHOLD


class TextEmbedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass
class Evidence:
    """Pre-computed views of the evidence texts (contexts or a reference), built once per row."""

    texts: list[str]
    language: Language
    norm: str
    trigrams: set[str]
    keys: set[str]
    nums: set[str]
    sentences: list[str] = field(default_factory=list)
    sentence_source: list[int] = field(
        default_factory=list
    )  # index into texts per sentence
    sentence_trigrams: list[frozenset[str]] = field(default_factory=list)
    # Context text that is not evidence (``injection``): {context_index, sentence, why} each.
    ignored: list[dict[str, Any]] = field(default_factory=list)


def _screen(
    kept: list[tuple[int, str]], lang: Language, against: Sequence[str]
) -> tuple[list[tuple[int, str, list[str]]], list[dict[str, Any]]]:
    """Drop what speaks to the evaluator (``injection``): flagged sentences, passages that carry an
    instruction to the evaluator, and, in such a row, passages that only restate ``against``.
    Returns (index, text, sentences) per passage kept, each split once, and what was left out."""
    split = [(i, t, split_sentences(t, lang)) for i, t in kept]
    flags = [[injection.sentence_flag(s) for s in sentences] for _, _, sentences in split]
    if not any(any(f) for f in flags):
        return split, []
    ignored: list[dict[str, Any]] = []
    tainted = {i for (i, _, _), f in zip(split, flags) if injection.INSTRUCTION in f}
    grams = injection.answer_trigrams(against)
    out: list[tuple[int, str, list[str]]] = []
    for (i, t, sentences), f in zip(split, flags):
        rest, clean, exact = t, [], True
        for s, why in zip(sentences, f):
            if why is None:
                clean.append(s)
                continue
            ignored.append({"context_index": i, "sentence": s, "why": why})
            exact = exact and s in rest
            rest = rest.replace(s, " ")
        if not exact:  # the splitter rewrote a flagged sentence (markdown): keep only the clean ones
            rest = " ".join(clean)
        if i in tainted:
            ignored.append({"context_index": i, "sentence": None, "why": injection.TAINTED})
        elif tainted and grams and injection.is_echo(rest, grams):
            ignored.append({"context_index": i, "sentence": None, "why": injection.ECHO})
        elif clean:
            out.append((i, rest, clean))
    return out, ignored


def build_evidence(
    texts: Sequence[str], language: Language | None = None, *, against: Sequence[str] = ()
) -> Evidence:
    """Index the non-blank evidence texts for coverage look-ups (the original indices are kept).

    Text addressed to the evaluator is left out first (see ``injection``); ``against`` is what will be
    checked (the claims), so a passage that merely echoes it in an injected row is left out too.
    Memoised: one row's contexts are indexed by several criteria (faithfulness, recall, the judge), so
    the same texts return the same ``Evidence`` (callers only read it)."""
    texts = tuple(texts)
    lang = language or detect_language(" ".join(t for t in texts if t and t.strip()))
    return _build_evidence(texts, lang, tuple(against))


@lru_cache(maxsize=256)
def _build_evidence(texts: tuple[str, ...], lang: Language, against: tuple[str, ...]) -> Evidence:
    kept = [(i, t) for i, t in enumerate(texts) if t and t.strip()]
    screened, ignored = _screen(kept, lang, against)
    joined = " ".join(t for _, t, _ in screened)
    digits = with_digits(joined, lang)  # numbers as digits too: 「三回」 in a claim meets 「3回」 in a context
    keys: set[str] = set()
    for tok in content_tokens(joined, lang) + (content_tokens(digits, lang) if digits != joined else []):
        keys.add(tok.key)
        keys.add(tok.surface)
    ev = Evidence(
        texts=list(texts),
        language=lang,
        norm=normalize(joined),
        # per passage, so no trigram spans two passages (the joined text's would change with their order)
        trigrams=set().union(*(char_ngrams(t, 3) | char_ngrams(with_digits(t, lang), 3) for _, t, _ in screened)),
        keys=keys,
        nums=numbers(joined) | numbers(digits),
        ignored=ignored,
    )
    for i, _, sentences in screened:
        for s in sentences:
            ev.sentences.append(s)
            ev.sentence_source.append(i)
            ev.sentence_trigrams.append(_trigrams(s))
    return ev


@lru_cache(maxsize=8192)
def _trigrams(text: str) -> frozenset[str]:
    """``char_ngrams(text, 3)``, memoised: each claim's trigrams are read once per sentence compared."""
    return frozenset(char_ngrams(text, 3))


def coverage(part: set[str] | frozenset[str], whole: set[str] | frozenset[str]) -> float:
    """|part ∩ whole| / |part|; 1.0 for an empty part (nothing to miss)."""
    return 1.0 if not part else len(part & whole) / len(part)


def trigram_coverage(text: str, ev: Evidence) -> float:
    """Share of the text's character trigrams in the evidence, numbers read as digits on both sides."""
    grams = _trigrams(with_digits(text, ev.language))
    if (
        len(grams) == 1 and len(next(iter(grams))) < 3
    ):  # a one- or two-char text: substring test
        return 1.0 if next(iter(grams)) in ev.norm else 0.0
    return coverage(grams, ev.trigrams)


def token_coverage(text: str, ev: Evidence) -> tuple[float, list[str]]:
    """Share of the text's content tokens found in the evidence (numbers read as digits on both sides), and
    the tokens that were not."""
    tokens = content_tokens(with_digits(text, ev.language), ev.language)
    if not tokens:
        return 1.0, []
    missing = [
        t.surface
        for t in tokens
        if not (t.key in ev.keys or t.surface in ev.keys or t.surface in ev.norm)
    ]
    return 1.0 - len(missing) / len(tokens), missing


def missing_numbers(text: str, ev: Evidence) -> list[str]:
    """The text's numbers as written (digits, kanji numerals before a counter) the evidence lacks, the
    evidence's read with number words as digits too (``numerals``): "14 days" against "fourteen days" is
    not missing. A claim's number words are left to the swap checks (counted here they fitted worse on dev)."""
    return sorted(numbers(text) - ev.nums)


def missing_entities(text: str, ev: Evidence, question: str = "") -> list[str]:
    """Names of the text that neither the evidence nor the question mentions, spellings folded (Alemanía,
    ヴェネズエラ, P-waves)."""
    q = fold(normalize(question))
    folded = _folded_norm(ev.norm)
    return sorted(
        e for e in entities(text, ev.language)
        if fold(e) not in q and fold(e) not in folded
    )


@lru_cache(maxsize=256)
def _folded_norm(norm: str) -> str:
    return fold(norm)


@dataclass
class ClaimScore:
    """One claim's support score and everything that went into it (shown in the inspector)."""

    claim: str
    score: float  # modelled support in [0, 1] (0 when a contradiction vetoes the claim)
    lexical: float
    trigram_coverage: float
    token_coverage: float
    embedding_cosine: float | None
    embedding_weight: float  # the fitted weight of the cosine terms (0 without an embedder)
    penalty: float  # what the missing numbers and names took off the logit
    missing_numbers: list[str]
    missing_entities: list[str]
    missing_tokens: list[str]
    context_index: int | None
    supporting_sentence: str | None

    threshold: float = CLAIM_THRESHOLD
    ignored_context: int = 0  # context sentences / passages left out as addressed to the evaluator
    contradiction: dict[str, Any] | None = None  # the finding that vetoed the claim (``contradiction``)

    @property
    def supported(self) -> bool:
        return self.score >= self.threshold

    @property
    def support(self) -> float:
        """Graded support in [0, 1]: the model's probability, >= 0.5 exactly when supported."""
        return self.score

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["support"] = round(self.support, 4)
        for key in (
            "score",
            "lexical",
            "trigram_coverage",
            "token_coverage",
            "embedding_cosine",
            "embedding_weight",
            "penalty",
        ):
            if data[key] is not None:
                data[key] = round(float(data[key]), 4)
        return data


def squash(cos: float, lo: float = EMBED_LO, hi: float = EMBED_HI) -> float:
    """Cosine mapped linearly from [lo, hi] onto [0, 1], clipped."""
    return float(min(1.0, max(0.0, (cos - lo) / (hi - lo))))


def _best_sentence(claim: str, ev: Evidence, sims: np.ndarray | None) -> int | None:
    """Index of the evidence sentence sharing most of the claim's trigrams (cosine breaks ties)."""
    if not ev.sentences:
        return None
    grams = _trigrams(claim)
    best, best_key = None, (-1.0, -1.0)
    for j, st in enumerate(ev.sentence_trigrams):
        lex = coverage(grams, st) if grams else 0.0
        key = (round(lex, 6), float(sims[j]) if sims is not None else 0.0)
        if key > best_key:
            best, best_key = j, key
    return best


@dataclass
class ClaimFeatures:
    """What the model reads for one claim, computed once (the fit script caches these per row)."""

    claim: str
    trigram: float
    tokens: float
    cosine: float | None
    missing_numbers: list[str]
    missing_names: list[str]
    missing_tokens: list[str]
    findings: list[Finding]
    best: int | None  # index of the best-matching evidence sentence

    def vector(self) -> dict[str, float]:
        return feature_vector(self.trigram, self.tokens, self.cosine, len(self.missing_numbers), len(self.missing_names))

    def veto(self, frame_gate: float, negation_gate: float) -> Finding | None:
        """The contradiction that vetoes the claim: a unit changed at the same number always; a negation flip when the
        sentence and the claim share at least ``negation_gate`` of each other's words; a swapped name,
        number or date, or a unit changed with another number, when the sentence shares at least ``frame_gate``
        of the claim's words."""
        for f in self.findings:
            gate = negation_gate if f.kind == POLARITY else frame_gate
            if (f.kind == UNIT and f.overlap >= 1.0) or f.overlap >= gate:
                return f
        return None


    def paraphrase(self, gate: float) -> bool:
        """True when the cosine alone may carry the claim: it reaches ``gate`` and nothing in the claim
        contradicts the evidence or is missing from it (no finding, no missing number or name)."""
        return (self.cosine is not None and self.cosine >= gate and not self.findings
                and not self.missing_numbers and not self.missing_names)


def claim_features(
    claims: Sequence[str],
    ev: Evidence,
    *,
    question: str = "",
    embedder: TextEmbedder | None = None,
) -> list[ClaimFeatures]:
    """Every claim's features against the evidence (one embedding batch for claims + evidence sentences)."""
    claims = list(claims)
    if not claims:
        return []
    sims: np.ndarray | None = None
    if embedder is not None and ev.sentences:
        # numbers as digits on both sides (the encoder reads 「三回」 and 「3回」 as different words)
        texts = [with_digits(t, ev.language) for t in claims + ev.sentences]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        sims = vectors[: len(claims)] @ vectors[len(claims) :].T
    evidence_text = " ".join(ev.sentences)
    out: list[ClaimFeatures] = []
    for i, claim in enumerate(claims):
        units = check_units(claim, evidence_text)
        nums = [n for n in missing_numbers(claim, ev) if n not in units.converted]
        findings = sentence_findings(
            claim, ev.sentences, ev.language, evidence_norm=ev.norm, evidence_text=evidence_text,
            evidence_numbers=ev.nums - units.unmatched, exempt_numbers=set(units.converted), question=question,
        )
        findings = unit_findings(claim, units, ev) + findings
        tok, miss_tok = token_coverage(claim, ev)
        out.append(ClaimFeatures(
            claim=claim,
            trigram=trigram_coverage(claim, ev),
            tokens=tok,
            cosine=float(sims[i].max()) if sims is not None else None,
            missing_numbers=nums,
            missing_names=missing_entities(claim, ev, question),
            missing_tokens=miss_tok,
            findings=findings,
            best=_best_sentence(claim, ev, sims[i] if sims is not None else None),
        ))
    return out


def unit_findings(claim: str, units: UnitCheck, ev: Evidence) -> list[Finding]:
    """A unit changed at the same number (4 g for 4 mg) always contradicts (overlap 1.0); a quantity of the
    family with another number may be about something else, so it carries the wording the claim shares with
    the sentence holding it (the frame gate decides, as for a swapped number)."""
    out = []
    for (mine, theirs), same in zip(units.mismatches, units.same_value or (True,) * len(units.mismatches)):
        level = 1.0
        if not same:
            skip = frozenset(numbers(with_digits(claim, ev.language))) | number_words(claim)
            level = max((frame_overlap(claim, s, ev.language, skip) for s in ev.sentences
                         if any(show(q) == theirs for q in quantities(s))), default=0.0)
        out.append(Finding(UNIT, mine, theirs, level))
    return out


def score_features(f: ClaimFeatures, ev: Evidence, model: LanguageModel) -> ClaimScore:
    """One claim's ClaimScore from its features and the language's fitted model."""
    x = f.vector()
    veto = f.veto(model.frame_gate, model.negation_gate)
    value = 0.0 if veto is not None else model.support(x)
    if f.paraphrase(model.paraphrase_gate) and f.cosine is not None:
        value = max(value, f.cosine)
    w = model.weights
    penalty = -(w.get("missing_numbers", 0.0) * x["missing_numbers"] + w.get("missing_names", 0.0) * x["missing_names"])
    j = f.best
    return ClaimScore(
        claim=f.claim,
        score=value,
        lexical=0.5 * f.trigram + 0.5 * f.tokens,
        trigram_coverage=f.trigram,
        token_coverage=f.tokens,
        embedding_cosine=f.cosine,
        embedding_weight=(w.get("cosine", 0.0) + w.get("cosine_gap", 0.0)) if f.cosine is not None else 0.0,
        penalty=penalty,
        missing_numbers=f.missing_numbers,
        missing_entities=f.missing_names,
        missing_tokens=f.missing_tokens,
        context_index=ev.sentence_source[j] if j is not None else None,
        supporting_sentence=ev.sentences[j] if j is not None else None,
        threshold=CLAIM_THRESHOLD,
        ignored_context=len(ev.ignored),
        contradiction=veto.to_dict() if veto is not None else None,
    )


def score_claims(
    claims: Sequence[str],
    ev: Evidence,
    *,
    question: str = "",
    embedder: TextEmbedder | None = None,
) -> list[ClaimScore]:
    """Score each claim against the evidence with the fitted model of the evidence's language."""
    features = claim_features(claims, ev, question=question, embedder=embedder)
    model = language_model(ev.language, embedded=embedder is not None and bool(ev.sentences))
    return [score_features(f, ev, model) for f in features]


def soft_min(
    values: Sequence[float], weights: Sequence[float] | None = None
) -> float | None:
    """Half the minimum plus half the weighted mean; ``None`` for no values."""
    if not values:
        return None
    w = list(weights) if weights is not None else [1.0] * len(values)
    total = sum(w)
    mean = (
        sum(v * x for v, x in zip(values, w)) / total
        if total > 0
        else sum(values) / len(values)
    )
    return 0.5 * min(values) + 0.5 * mean


def aggregate_support(scores: Sequence[ClaimScore]) -> float | None:
    """Soft minimum of claim scores weighted by claim length in characters."""
    return soft_min([s.score for s in scores], [float(len(s.claim)) for s in scores])


def answer_claims(answer: str, language: Language | None = None) -> list[str]:
    """Claims of an answer as the offline heuristic sees them: its sentences (the whole text if none)."""
    sentences = split_sentences(answer, language)
    return sentences or ([answer.strip()] if answer and answer.strip() else [])


def faithfulness_score(
    question: str,
    contexts: Sequence[str],
    answer: str,
    *,
    embedder: TextEmbedder | None = None,
    language: Language | None = None,
) -> tuple[float | None, list[ClaimScore]]:
    """Soft-min support of the answer's sentences by the contexts. Callers check ``checks`` first;
    here a blank answer or no contexts gives ``(None, [])``."""
    kept = [c for c in contexts if c and c.strip()]
    if not answer or not answer.strip() or not kept:
        return None, []
    lang = language or detect_language(answer + " " + kept[0])
    claims = answer_claims(answer, lang)
    ev = build_evidence(list(contexts), lang, against=claims)
    scores = score_claims(claims, ev, question=question, embedder=embedder)
    return aggregate_support(scores), scores
