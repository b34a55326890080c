"""Pure scoring math of the decomposed metrics: no I/O, no LLM, no embedder.

Each function turns the parsed verdicts of one row into a number with RAGAS's definitions (see
DESIGN.md "How RAGAS computes"), so the formulas can be unit-tested against hand-computed cases and
the metric modules stay about requests and parsing. ``None`` means "nothing to score": callers map it
to an unscored reason instead of inventing a 0 or a 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING
from rageval_core.core.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where it is used: this module is on every command's path (the parser's defaults), and
# numpy's ~0.1-0.2 s import is better paid after a run's first request than before it.

DEFAULT_CORRECTNESS_WEIGHTS: tuple[float, float] = (0.75, 0.25)


def _bits(values: Sequence[int | bool]) -> list[int]:
    out = []
    for v in values:
        if v not in (0, 1, True, False):
            raise ValueError(f"verdicts must be 0 or 1, got {v!r}")
        out.append(int(v))
    return out


def ratio(hits: int, total: int) -> float | None:
    """hits / total, or ``None`` when there is nothing to count."""
    if total < 0 or hits < 0 or hits > total:
        raise ValueError(f"need 0 <= hits <= total, got {hits}/{total}")
    return None if total == 0 else hits / total


def faithfulness(verdicts: Sequence[int | bool]) -> float | None:
    """Supported claims / extracted claims (RAGAS F = |V| / |S|); ``None`` when there are no claims."""
    bits = _bits(verdicts)
    return ratio(sum(bits), len(bits))


def graded_faithfulness(supports: Sequence[float], weights: Sequence[float] | None = None) -> float | None:
    """Faithfulness from graded claim support: the weighted mean of each claim's support in [0, 1].

    With 0/1 supports and equal weights this is RAGAS's |V| / |S|; the offline heuristic weights claims
    by their length, so a long unsupported sentence costs more than a short one. ``None`` for no claims.
    """
    if weights is not None and len(weights) != len(supports):
        raise ValueError("one weight per claim")
    if not supports:
        return None
    if any(not 0.0 <= float(s) <= 1.0 for s in supports):
        raise ValueError(f"supports must lie in [0, 1], got {list(supports)!r}")
    w = [1.0] * len(supports) if weights is None else [float(x) for x in weights]
    if any(x < 0 for x in w) or sum(w) <= 0:
        raise ValueError("weights must be non-negative and not all zero")
    return sum(float(s) * x for s, x in zip(supports, w)) / sum(w)


def average_precision(verdicts: Sequence[int | bool]) -> float:
    """Context precision: Σ_k (P@k · v_k) / Σ_k v_k over chunks in retrieval order.

    No useful chunk at all scores 0 (RAGAS divides by Σv + 1e-10, which gives 0); an empty list is an error
    because a row without contexts is unscored before any call.
    """
    bits = _bits(verdicts)
    if not bits:
        raise ValueError("average precision of an empty ranking is undefined")
    useful = sum(bits)
    if useful == 0:
        return 0.0
    total, hits = 0.0, 0
    for k, v in enumerate(bits, start=1):
        hits += v
        if v:
            total += hits / k
    return total / useful


def precision_at_k(verdicts: Sequence[int | bool]) -> list[float]:
    """P@k for k = 1..K, kept in details so the inspector can show how each rank contributes."""
    bits = _bits(verdicts)
    out, hits = [], 0
    for k, v in enumerate(bits, start=1):
        hits += v
        out.append(hits / k)
    return out


def recall(attributed: Sequence[int | bool]) -> float | None:
    """Context recall: reference sentences attributable to the contexts / reference sentences."""
    bits = _bits(attributed)
    return ratio(sum(bits), len(bits))


def context_relevance(extracted: int, total: int) -> float | None:
    """The paper's context relevance: needed sentences / all context sentences (extra extractions capped)."""
    if extracted < 0 or total < 0:
        raise ValueError("sentence counts cannot be negative")
    return None if total == 0 else min(extracted, total) / total


def cosine(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cosine similarity; 0 when either vector is all zeros (an empty text embeds to nothing)."""
    import numpy as np

    va = np.asarray(a, dtype=np.float64).ravel()
    vb = np.asarray(b, dtype=np.float64).ravel()
    if va.shape != vb.shape:
        raise ValueError(f"vectors differ in length: {va.shape[0]} vs {vb.shape[0]}")
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(va, vb) / (na * nb))


def answer_relevancy(cosines: Sequence[float], noncommittal: Sequence[int | bool]) -> float | None:
    """RAGAS answer relevancy: mean cosine of the question with each generated question, 0 only when
    every generated question is flagged noncommittal (``np.all`` in both ragas APIs).

    Negative cosines are kept in the mean (as RAGAS does) and the final value is clipped to [0, 1].
    ``None`` when no question was generated.
    """
    if len(cosines) != len(noncommittal):
        raise ValueError("one noncommittal flag per generated question")
    if not cosines:
        return None
    flags = _bits(noncommittal)
    if all(flags):
        return 0.0
    import numpy as np

    mean = float(np.mean(np.asarray(cosines, dtype=np.float64)))
    return min(1.0, max(0.0, mean))


def f1(tp: int, fp: int, fn: int) -> float | None:
    """F1 from statement counts: 2TP / (2TP + FP + FN); ``None`` when all three are 0."""
    if min(tp, fp, fn) < 0:
        raise ValueError("counts cannot be negative")
    denominator = 2 * tp + fp + fn
    return None if denominator == 0 else 2 * tp / denominator


def check_weights(weights: Sequence[float]) -> tuple[float, float]:
    """Validate answer-correctness weights (factuality, similarity): two finite, non-negative, not both 0."""
    if len(weights) != 2:
        raise ValueError("answer correctness takes two weights: (factuality, semantic similarity)")
    w = (float(weights[0]), float(weights[1]))
    if any(not math.isfinite(x) or x < 0 for x in w) or sum(w) == 0:
        raise ValueError(f"weights must be finite, non-negative and not both zero, got {weights!r}")
    return w


def answer_correctness(
    f1_score: float, similarity: float, weights: Sequence[float] = DEFAULT_CORRECTNESS_WEIGHTS
) -> float:
    """Weighted mean of factual F1 and semantic similarity (RAGAS default 0.75·F1 + 0.25·sim).

    Weights are normalised by their sum, so (3, 1) equals (0.75, 0.25); a similarity below 0 counts as 0.
    """
    w_f, w_s = check_weights(weights)
    sim = min(1.0, max(0.0, float(similarity)))
    value = (w_f * float(f1_score) + w_s * sim) / (w_f + w_s)
    return min(1.0, max(0.0, value))


# ---- repeats: one way to combine several scores of the same row -------------------------------------------
AGGREGATES: tuple[str, ...] = ("mean", "median", "majority", "majority_or_median")


def aggregate_repeats(values: Sequence[float], how: str) -> float | None:
    """Combine repeated scores of one row (judge repeats, run repeats); the project's one implementation.

    ``mean`` and ``median`` as named. ``majority`` is the value held by strictly more than half of the
    scores, and ``None`` when no value has that many (5 / 2 / 4 or 5 / 1: the caller records it as unscored
    ``no_majority`` rather than pick a side); ``majority_or_median`` falls back to the median instead.
    Values are compared after rounding to 9 decimals, so float noise never splits a vote.
    """
    if how not in AGGREGATES:
        raise ConfigError(f"aggregate must be one of {', '.join(AGGREGATES)}, not {how!r}")
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("no scores to aggregate")
    if how == "mean":
        return sum(vals) / len(vals)
    import numpy as np

    if how == "median":
        return float(np.median(vals))
    counts: dict[float, int] = {}
    for v in vals:
        counts[round(v, 9)] = counts.get(round(v, 9), 0) + 1
    top, n = max(counts.items(), key=lambda kv: kv[1])
    if 2 * n > len(vals):
        return top
    return float(np.median(vals)) if how == "majority_or_median" else None
