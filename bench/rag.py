"""Retrieval recall@k of each question's source chunk, offline embedder, on the sample policy document.

    python bench/rag.py                       # sample_data/company_policy_ja.md, k = 1, 3, 5
    python bench/rag.py --per-section 4 --no-heading

Two question sets, retrieved exactly as the built-in RAG retrieves (rageval_core.rag.simple.build_index: each chunk
embedded with its section heading unless --no-heading, cosine top k):

1. questions the offline generator writes, by type (fact, reasoning, multi-chunk; out-of-scope questions have
   no source chunk and are left out). A multi-chunk question counts each of its two source chunks as half.
2. hand-written questions (sample_data/policy_questions_ja.jsonl) that paraphrase the document instead of
   copying it; their source is every chunk holding the evidence sentence written beside each question.

Generated questions reuse the document's words (the offline heuristics are extractive), so their recall is an
upper bound; the hand-written set is the honest figure. The last line is ``recall_at_3=<r>`` for the
hand-written questions. State goes to a temporary RAGEVAL_HOME; a few seconds, most of it loading the model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
KS = (1, 3, 5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--document", default=str(ROOT / "sample_data" / "company_policy_ja.md"))
    parser.add_argument("--questions", default=str(ROOT / "sample_data" / "policy_questions_ja.jsonl"))
    parser.add_argument("--per-section", type=int, default=3)
    parser.add_argument("--types", default="fact=0.4,reasoning=0.3,multi_chunk=0.3")
    parser.add_argument("--no-heading", action="store_true", help="embed chunks without their section heading")
    args = parser.parse_args(argv)
    os.environ.setdefault("RAGEVAL_HOME", tempfile.mkdtemp(prefix="rageval-bench-rag-"))

    import numpy as np

    from rageval_core.data.documents import chunk_document, read_document
    from rageval_core.offline.provider import OfflineLLM
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.providers.registry import build_embedder
    from rageval_core.rag.simple import build_index, recall_at_k
    from rageval_core.rag.synth import generate_testset, parse_shares

    doc = read_document(args.document)
    chunks = chunk_document(doc)
    embedder = build_embedder(ProviderConfig())
    index = build_index(chunks, embedder, with_heading=not args.no_heading)

    def ranked(questions: list[str]) -> list[list[str]]:
        vectors = np.asarray(embedder.embed(questions), dtype=np.float32)
        return [[c.id for c, _ in hits] for hits in index.search(vectors, max(KS))]

    def line(label: str, questions: list[str], groups: list[list[set[str]]]) -> dict[int, float | None]:
        lists = ranked(questions)
        values = {k: recall_at_k(lists, groups, k) for k in KS}
        shown = "  ".join(f"recall@{k} {'-' if v is None else f'{v:.3f}'}" for k, v in values.items())
        print(f"{label:<32} n={len(questions):<3} {shown}")
        return values

    print(f"{doc.name}: {len(chunks)} chunks, embedder {index.embedder}, "
          f"{'without' if args.no_heading else 'with'} section headings")
    ts = generate_testset(doc, OfflineLLM(), per_section=args.per_section, shares=parse_shares(args.types), chunks=chunks)
    by_type: dict[str, list] = defaultdict(list)
    for item in ts.items:
        if item.metadata["source_chunk_ids"]:
            by_type[item.question_type].append(item)
    for qtype, items in sorted(by_type.items(), key=lambda kv: ("fact", "reasoning", "multi_chunk").index(kv[0])):
        line(f"generated {qtype} (offline)", [i.question for i in items],
             [[{c} for c in i.metadata["source_chunk_ids"]] for i in items])

    rows = [json.loads(x) for x in Path(args.questions).read_text(encoding="utf-8").splitlines() if x.strip()]
    groups = []
    for row in rows:
        holding = {c.id for c in chunks if row["evidence"] in c.text}
        if not holding:
            raise SystemExit(f"{row['id']}: its evidence sentence is in no chunk of {doc.name}")
        groups.append([holding])
    hand = line("hand-written (paraphrased)", [r["question"] for r in rows], groups)
    print(f"recall_at_3={hand[3]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
