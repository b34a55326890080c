"""LLM requests, embedding requests and tokens per row of the four metrics of the RAGAS-vs-judge article, beside RAGAS.

    python bench/calls_per_row.py                      # sample_data/ml_qa_ja.json, offline provider
    python bench/calls_per_row.py --data sample_data/ml_qa_en.json

Runs faithfulness, answer relevancy, context precision and answer correctness (decomposed, default
options) through counting wrappers around the offline provider and its bundled embedder: every
``complete`` is one HTTP request to an LLM, every ``embed`` one embedding request. RAGAS 0.4.3 sends,
per row with K contexts, 2 + 1 + K + 3 LLM requests (faithfulness 2, answer relevancy 1 with n=3,
context precision 1 per context, answer correctness 3) and 4 embedding requests; that count is
computed here from each row's structure (a later side-by-side benchmark with ragas installed measures
it for real). Then the same in economy mode, and how economy scores differ from the default.
Tokens are estimated from the prompt and response text (~4 ASCII chars or ~1 Japanese char a token),
since the offline provider reports none. The last line is machine-readable:
``calls_per_row=<x> ragas_calls_per_row=<y>``.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from rageval_core.data.datasets import load_dataset  # noqa: E402
from rageval_core.llm.base import LLM, Completion, Embedder, LLMRequest  # noqa: E402
from rageval_core.scoring.metrics.base import EvalContext  # noqa: E402
from rageval_core.scoring.metrics.registry import build_scorers  # noqa: E402
from rageval_core.scoring.metrics.steps import approx_tokens  # noqa: E402
from rageval_core.core.types import SEED_METRICS, MetricResult, Sample  # noqa: E402


def ragas_llm_requests(sample: Sample) -> int:
    """RAGAS 0.4.3 on the four seed metrics: faithfulness 2, answer relevancy 1 (n=3), context precision K, answer correctness 3."""
    return 2 + 1 + len(sample.contexts) + 3


RAGAS_EMBEDDING_REQUESTS = 4  # answer relevancy: question + generated questions; answer correctness: answer + reference


@dataclass
class Count:
    llm: int = 0
    embed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class CountingLLM:
    """Counts requests and estimated tokens per row (``row`` is set by the caller before each row).

    It names itself ``counting``, not ``offline``, so the metrics take the path they take with an API
    provider (answer relevancy sends its generate_questions request) while the offline heuristics answer:
    the counts are what a real LLM would receive.
    """

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.provider, self.model = "counting", inner.model
        self.counts: dict[str, Count] = {}
        self.row = ""
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> Completion:
        completion = self.inner.complete(request)
        with self._lock:
            c = self.counts.setdefault(self.row, Count())
            c.llm += 1
            c.input_tokens += approx_tokens(request.prompt_text)
            c.output_tokens += sum(approx_tokens(t) for t in completion.texts)
        return completion


class CountingEmbedder:
    def __init__(self, inner: Embedder, llm: CountingLLM) -> None:
        self.inner, self.llm = inner, llm
        self.provider, self.model = inner.provider, inner.model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.inner.embed(texts)
        with self.llm._lock:
            self.llm.counts.setdefault(self.llm.row, Count()).embed += 1
        return vectors


def offline_pair() -> tuple[LLM, Embedder]:
    from rageval_core.offline.encoder import OfflineEmbedder
    from rageval_core.offline.provider import OfflineLLM

    embedder = OfflineEmbedder()
    return OfflineLLM(embedder=embedder), embedder


def run(samples: Sequence[Sample], options: dict[str, Any], llm: LLM, embedder: Embedder) -> tuple[CountingLLM, dict[str, list[MetricResult]]]:
    """Score every row with the seed metrics; counts per row and results per row id."""
    counting = CountingLLM(llm)
    ctx = EvalContext(counting, CountingEmbedder(embedder, counting))
    scorers = build_scorers(SEED_METRICS, options)
    results: dict[str, list[MetricResult]] = {}
    for sample in samples:
        counting.row = sample.id
        counting.counts.setdefault(sample.id, Count())
        results[sample.id] = [r for s in scorers for r in s.score(sample, ctx)]
    return counting, results


def table(samples: Sequence[Sample], counting: CountingLLM) -> list[str]:
    lines = [
        f"{'row':>4} {'K':>2} {'llm':>4} {'embed':>5} {'in tok':>7} {'out tok':>7} | {'ragas llm':>9} {'ragas embed':>11}",
    ]
    for s in samples:
        c = counting.counts[s.id]
        lines.append(
            f"{s.id:>4} {len(s.contexts):>2} {c.llm:>4} {c.embed:>5} {c.input_tokens:>7} {c.output_tokens:>7} | "
            f"{ragas_llm_requests(s):>9} {RAGAS_EMBEDDING_REQUESTS:>11}"
        )
    return lines


def per_row(samples: Sequence[Sample], counting: CountingLLM, attr: str) -> float:
    return mean(getattr(counting.counts[s.id], attr) for s in samples)


def score_diffs(samples: Sequence[Sample], default: dict[str, list[MetricResult]], economy: dict[str, list[MetricResult]]) -> list[str]:
    """Per metric: mean default and economy score, mean |difference| and rows that changed by > 0.05."""
    lines = [f"{'metric':<20} {'default':>8} {'economy':>8} {'mean |d|':>9} {'rows |d|>0.05':>14}"]
    for metric in SEED_METRICS:
        pairs = []
        for s in samples:
            a = next(r for r in default[s.id] if r.metric == metric)
            b = next(r for r in economy[s.id] if r.metric == metric)
            if a.value is not None and b.value is not None:
                pairs.append((a.value, b.value))
        if not pairs:
            lines.append(f"{metric:<20} {'-':>8} {'-':>8}")
            continue
        diffs = [abs(a - b) for a, b in pairs]
        lines.append(
            f"{metric:<20} {mean(a for a, _ in pairs):>8.3f} {mean(b for _, b in pairs):>8.3f} {mean(diffs):>9.3f} "
            f"{sum(d > 0.05 for d in diffs):>8}/{len(pairs)}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT / "sample_data" / "ml_qa_ja.json"))
    args = parser.parse_args(argv)
    samples = load_dataset(args.data).samples
    llm, embedder = offline_pair()

    counting, default = run(samples, {}, llm, embedder)
    print(f"# {Path(args.data).name}: {len(samples)} rows; metrics: {', '.join(SEED_METRICS)}; provider {llm.provider}/{llm.model}")
    print("## default mode (claims shared, all chunks in one call, n=3 questions in one call)")
    print("\n".join(table(samples, counting)))
    x = per_row(samples, counting, "llm")
    y = mean(ragas_llm_requests(s) for s in samples)
    emb = per_row(samples, counting, "embed")
    print(f"per row: {x:.2f} LLM requests vs RAGAS {y:.2f} ({x / y:.0%}); {emb:.2f} embedding requests vs RAGAS "
          f"{RAGAS_EMBEDDING_REQUESTS}; ~{per_row(samples, counting, 'input_tokens'):.0f} input / "
          f"~{per_row(samples, counting, 'output_tokens'):.0f} output tokens")
    print(f"target x <= 0.75 * y: {'met' if x <= 0.75 * y + 1e-9 else 'MISSED'} ({x:.2f} <= {0.75 * y:.2f})")

    eco_counting, economy = run(samples, {"economy": True}, llm, embedder)
    ex = per_row(samples, eco_counting, "llm")
    print()
    print("## economy mode (answer claims verified against contexts and ground truth in one call; ground-truth sentences as its claims)")
    print(f"per row: {ex:.2f} LLM requests vs RAGAS {y:.2f} ({ex / y:.0%}); {per_row(samples, eco_counting, 'embed'):.2f} "
          f"embedding requests; ~{per_row(samples, eco_counting, 'input_tokens'):.0f} input / "
          f"~{per_row(samples, eco_counting, 'output_tokens'):.0f} output tokens")
    print("score differences, economy vs default (offline provider; economy changes only faithfulness and answer"
          " correctness; answer_relevancy here is cos(question, answer) because the counting wrapper takes the API"
          " path and the offline provider answers generate_questions with the answer itself):")
    print("\n".join(score_diffs(samples, default, economy)))
    print(f"economy_calls_per_row={ex:.2f}")
    print(f"calls_per_row={x:.2f} ragas_calls_per_row={y:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
