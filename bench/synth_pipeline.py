"""Figures of the synthetic-QA article's pipeline on a document: questions generated, retrieval hit rate per k, binary judges.

    python bench/synth_pipeline.py                                  # offline, sample_data/company_policy_ja.md
    python bench/synth_pipeline.py DOC.md --provider gemini --per-section 2 --k 1 2 3

Prints one line per k: questions, retrieval hit rate (share of questions whose source section's chunk is in
the top k) and the mean faithfulness / answer correctness of the lenient ``binary`` and ``binary-strict``
judges. With ``--changed OLD=NEW`` (repeatable) it also answers the same test set over a copy of the document
with those replacements (the synthetic-QA article's regression check on a document change) and prints the same line.
docs/synth.md quotes the offline figures. State goes to a temporary RAGEVAL_HOME.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("document", nargs="?", default=str(ROOT / "sample_data" / "company_policy_ja.md"))
    parser.add_argument("--provider", default="offline")
    parser.add_argument("--model")
    parser.add_argument("--per-section", type=int, default=3)
    parser.add_argument("--k", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--changed", action="append", default=[], metavar="OLD=NEW", help="a replacement for the changed-document run")
    args = parser.parse_args(argv)
    os.environ.setdefault("RAGEVAL_HOME", tempfile.mkdtemp(prefix="rageval-bench-"))

    from rageval_core.data.documents import parse_document, read_document
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.providers.registry import build_embedder, build_llm
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.rag.simple import run_rag
    from rageval_core.run import RunSpec, run
    from rageval_core.store.runs import Store
    from rageval_core.rag.synth import generate_testset

    cfg = ProviderConfig(provider=args.provider, model=args.model)
    llm, embedder = build_llm(cfg), build_embedder(cfg)
    doc = read_document(args.document)
    testset = generate_testset(doc, llm, per_section=args.per_section)
    ok = sum(1 for s in testset.sections if s.status == "ok")
    dupes = sum(s.duplicates for s in testset.sections)
    print(
        f"{doc.name}: {len(doc.sections)} sections, {len(testset.items)} questions from {ok} sections "
        f"({dupes} near-duplicates dropped) by {testset.generator['provider']}/{testset.generator['model']}"
        + (" [offline heuristic]" if testset.offline else "")
    )
    judges = [JudgeScorer("binary"), JudgeScorer("binary-strict")]

    def line(label: str, docs: list, k: int) -> None:
        result = run_rag(testset.items, docs, llm, embedder, k=k)
        scored = run(RunSpec(result.samples, judges, concurrency=4), llm, embedder, Store())
        means = {
            (method, metric): s["mean"] for method, metrics in scored.summary.items() for metric, s in metrics.items()
        }

        def fmt(key: tuple[str, str]) -> str:
            value = means.get(key)
            return "-" if value is None else f"{value:.3f}"

        hit = "-" if result.hit_rate is None else f"{result.hit_rate:.3f}"
        print(
            f"{label:<10} k={k}  questions {len(result.samples)}  hit rate {hit}  "
            f"binary faithfulness {fmt(('judge:binary', 'faithfulness'))} correctness {fmt(('judge:binary', 'answer_correctness'))}  "
            f"strict faithfulness {fmt(('judge:binary-strict', 'faithfulness'))} correctness {fmt(('judge:binary-strict', 'answer_correctness'))}"
        )

    for k in args.k:
        line("document", [doc], k)
    if args.changed:
        text = doc.text
        for pair in args.changed:
            old, _, new = pair.partition("=")
            if old not in text:
                print(f"--changed {pair!r}: {old!r} is not in the document", file=sys.stderr)
                return 2
            text = text.replace(old, new)
        line("changed", [parse_document(text, doc.name)], args.k[min(1, len(args.k) - 1)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
