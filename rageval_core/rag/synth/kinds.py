"""Question types and how many of each a generation asks for (pure: no I/O, no model).

Four types, each its own task and template per language:

- ``fact``: a simple lookup answerable from one chunk (``synth_qa``, the synthetic-QA article's shape);
- ``reasoning``: needs one step beyond a lookup, e.g. applying a rule or threshold to a case (``synth_reasoning``);
- ``multi_chunk``: needs two chunks from two sections, both kept as sources (``synth_multi_chunk``);
- ``out_of_scope``: on the document's topic but not answered by it; the right answer is "not in the
  documents" (``synth_out_of_scope``), which is what the synthetic-QA article's one failure was about.

The user sets shares (``fact=0.4,reasoning=0.3,multi_chunk=0.2,out_of_scope=0.1``); the total is
``per_section`` × sections, split by largest remainder and spread over sections (pairs of neighbouring
sections for multi-chunk) so every section gets its turn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rageval_core.core.tasks import SYNTH_MULTI_CHUNK, SYNTH_OUT_OF_SCOPE, SYNTH_QA, SYNTH_REASONING
from rageval_core.core.errors import ConfigError

FACT, REASONING, MULTI_CHUNK, OUT_OF_SCOPE = "fact", "reasoning", "multi_chunk", "out_of_scope"
QUESTION_TYPES: tuple[str, ...] = (FACT, REASONING, MULTI_CHUNK, OUT_OF_SCOPE)
TASK_OF: dict[str, str] = {
    FACT: SYNTH_QA,
    REASONING: SYNTH_REASONING,
    MULTI_CHUNK: SYNTH_MULTI_CHUNK,
    OUT_OF_SCOPE: SYNTH_OUT_OF_SCOPE,
}
ID_PREFIX: dict[str, str] = {FACT: "q", REASONING: "r", MULTI_CHUNK: "m", OUT_OF_SCOPE: "o"}
DEFAULT_SHARES: dict[str, float] = {FACT: 1.0}
NOT_IN_DOCUMENTS: dict[str, str] = {
    "ja": "文書には記載がありません。",
    "en": "The documents do not say.",
}


class SharesError(ConfigError):
    """Shares that cannot be used (unknown type, negative or all zero)."""


def normalise_shares(shares: Mapping[str, float]) -> dict[str, float]:
    """Shares scaled to sum to 1 (weights like ``fact=4,reasoning=1`` are fine), in ``QUESTION_TYPES`` order."""
    unknown = sorted(set(shares) - set(QUESTION_TYPES))
    if unknown:
        raise SharesError(f"unknown question type {unknown[0]!r}; known: {', '.join(QUESTION_TYPES)}")
    values = {k: float(v) for k, v in shares.items()}
    if any(not math.isfinite(v) or v < 0 for v in values.values()):
        raise SharesError("question type shares must be finite and >= 0")
    total = sum(values.values())
    if total <= 0:
        raise SharesError("at least one question type needs a share above 0")
    return {k: values[k] / total for k in QUESTION_TYPES if values.get(k, 0) > 0}


def parse_shares(text: str) -> dict[str, float]:
    """``"fact=0.4,reasoning=0.3,multi_chunk=0.2,out_of_scope=0.1"`` (or percentages ``fact=40%``) → shares."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep:
            raise SharesError(f"{part!r}: expected TYPE=SHARE, e.g. fact=0.4")
        value = value.strip()
        try:
            number = float(value[:-1]) / 100 if value.endswith("%") else float(value)
        except ValueError:
            raise SharesError(f"{part!r}: {value!r} is not a number") from None
        out[name.strip().replace("-", "_")] = number
    return normalise_shares(out)


def allocate(total: int, shares: Mapping[str, float]) -> dict[str, int]:
    """``total`` questions split by ``shares`` with the largest-remainder method (ties go to the earlier type)."""
    norm = normalise_shares(shares)
    exact = {k: total * v for k, v in norm.items()}
    counts = {k: int(math.floor(x)) for k, x in exact.items()}
    left = total - sum(counts.values())
    order = sorted(norm, key=lambda k: (-(exact[k] - counts[k]), QUESTION_TYPES.index(k)))
    for k in order[:left]:
        counts[k] += 1
    return {k: counts[k] for k in QUESTION_TYPES if k in counts}


@dataclass(frozen=True)
class Call:
    """One generation call: ``n`` questions of ``qtype`` from one section (two for multi-chunk)."""

    qtype: str
    sections: tuple[int, ...]
    n: int


def _spread(count: int, slots: int, offset: int) -> list[int]:
    """``count`` split over ``slots`` as evenly as possible, the extras starting at ``offset``."""
    base, extra = divmod(count, slots)
    return [base + (1 if (i - offset) % slots < extra else 0) for i in range(slots)]


def plan_calls(sections: Sequence[int], per_section: int, shares: Mapping[str, float], max_n: int) -> list[Call]:
    """The calls of one generation, in section order (fact, reasoning, multi-chunk, out-of-scope within one).

    With the default shares (facts only) this is one call per section asking ``per_section`` pairs, as before
    question types existed. A multi-chunk call pairs a section with the next one (a one-section document
    pairs two chunks of that section). No call asks more than ``max_n`` pairs.
    """
    if not sections:
        return []
    counts = allocate(per_section * len(sections), shares)
    calls: list[Call] = []
    for t_index, qtype in enumerate(QUESTION_TYPES):
        count = counts.get(qtype, 0)
        if not count:
            continue
        if qtype == MULTI_CHUNK:
            slots: list[tuple[int, ...]] = (
                [(a, b) for a, b in zip(sections, sections[1:])] if len(sections) > 1 else [(sections[0], sections[0])]
            )
        else:
            slots = [(s,) for s in sections]
        for slot, n in zip(slots, _spread(count, len(slots), t_index * 2)):
            while n > 0:
                calls.append(Call(qtype, slot, min(n, max_n)))
                n -= min(n, max_n)
    position = {s: i for i, s in enumerate(sections)}
    return sorted(calls, key=lambda c: (position[c.sections[0]], QUESTION_TYPES.index(c.qtype)))
