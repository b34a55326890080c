"""People against each other beside the offline judge, on real multi-annotator labels (../shared/benchmarks).

    python bench/annotators.py             # LFQA-Verification, the test half (bench/trust.py's split)
    python bench/annotators.py --limit 40  # a quick look

LFQA-Verification has three human labels per answer sentence (``meta.sentence_labels``). Two views:

- sentence level: Krippendorff's alpha over the three labels of every sentence (supported vs not; "partially"
  counts as not supported, as the file's answer label does). Alpha needs no annotator identity, so this is exact;
- answer level: annotator k's verdict on an answer is "faithful" when every sentence's k-th label is supported.
  That the k-th label of each sentence is the same person is an assumption the file does not state, so this
  view is an approximation; it feeds the workbench's annotators block (pairwise kappa, alpha, each method's
  kappa with every "annotator", the verdict) exactly as ``trust`` builds it.

Only the test half is reported: the offline heuristic's constants were chosen on the dev halves (bench/trust.py),
so a figure on them would be a figure on tuning data. The last line:
    sentence_alpha=<a> answer_alpha=<b> decomposed_mean_kappa=<c> verdict=<within|below|above|unknown>
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import trust as trust_bench  # noqa: E402  (bench/trust.py: loader, split, offline scoring)

from rageval_core.analysis.trust.annotator_report import build_annotators  # noqa: E402
from rageval_core.analysis.trust.annotators import alpha_with_interval  # noqa: E402

FILE = trust_bench.BENCH_DIR / "lfqa_verification.jsonl"


def supported(label: str) -> int:
    return int(label == "supported")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N rows of the test half")
    parser.add_argument("--iterations", type=int, default=1000)
    args = parser.parse_args(argv)
    if not FILE.is_file():
        print(f"needs {FILE} (../shared/benchmarks)", file=sys.stderr)
        return 2
    _, test = trust_bench.split_halves(trust_bench.load_samples(FILE))
    test = test[: args.limit] if args.limit else test
    sentences = [[supported(v) for v in labels] for s in test for labels in s.metadata["meta"]["sentence_labels"]]
    s_alpha, s_ci, s_n = alpha_with_interval({f"a{k}": {str(i): u[k] for i, u in enumerate(sentences)} for k in range(3)},
                                             iterations=args.iterations, seed=0)
    by_annotator: dict[str, dict[str, int]] = {f"annotator{k + 1}": {} for k in range(3)}
    rule_matches = 0
    for s in test:
        labels = s.metadata["meta"]["sentence_labels"]
        for k in range(3):
            by_annotator[f"annotator{k + 1}"][s.id] = int(all(supported(sent[k]) for sent in labels))
        majority = int(all(sum(supported(v) for v in sent) >= 2 for sent in labels))
        rule_matches += majority == s.metadata.get("label_faithful")
    started = time.perf_counter()
    scored = trust_bench.score_samples(test, trust_bench.build_methods(["faithfulness"], ("rubric5",), language="en"),
                                       trust_bench.offline_context())
    scores = {"faithfulness": {("decomposed" if m == "decomposed" else f"judge:{m}"): {r: v for r, v in vals.items() if v is not None}
                               for (m, metric), vals in scored.values.items() if metric == "faithfulness"}}
    block = build_annotators({"faithfulness": by_annotator}, scores, threshold=trust_bench.THRESHOLD,
                             iterations=args.iterations, seed=0)
    print(f"LFQA-Verification test half: {len(test)} answers, {len(sentences)} sentences x 3 labels; "
          f"majority-of-sentences rule reproduces label_faithful on {rule_matches}/{len(test)}; "
          f"scored in {time.perf_counter() - started:.1f} s")
    fmt = trust_bench.fmt
    print(f"sentence level: Krippendorff's alpha {fmt(s_alpha)} [{fmt(s_ci[0]) if s_ci else '-'}, {fmt(s_ci[1]) if s_ci else '-'}] "
          f"over {s_n} sentences")
    c = block.criteria[0]
    print(f"answer level (k-th label = annotator k, an assumption): alpha {fmt(c.people.value)} [{fmt(c.people.low)}, "
          f"{fmt(c.people.high)}] over {c.n_shared} answers; pairwise kappa " +
          ", ".join(f"{p.a}-{p.b} {fmt(p.kappa.value)}" for p in c.pairs))
    for j in c.judges:
        each = ", ".join(f"{a} {fmt(v['kappa'])}" for a, v in j.per_annotator.items())
        print(f"  {j.method}: kappa with each {each}; mean {fmt(j.mean)} -> {j.verdict}")
        print(f"    {j.sentence}")
    decomposed = next((j for j in c.judges if j.method == "decomposed"), None)
    print(f"sentence_alpha={fmt(s_alpha)} answer_alpha={fmt(c.people.value)} "
          f"decomposed_mean_kappa={fmt(decomposed.mean if decomposed else None)} verdict={decomposed.verdict if decomposed else 'unknown'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
