"""``python -m bench.trust_seeds`` (or ``python bench/trust_seeds.py``): is the quoted split a lucky one? 30 split seeds, each refitting on its own dev half.

For every seed the offline claim model (the encoder set, as the product runs by default) is fitted on that seed's
dev halves exactly as ``bench/fit_offline.py`` fits the shipped constants, then each file's test half is scored
once with them (from the per-claim features, the same values the decomposed faithfulness metric outputs; the
script checks that on the shipped seed's test halves). Printed per file: the shipped seed's test AUROC with its
bootstrap interval, and the median, minimum and maximum test AUROC over the seeds, with the shipped seed's rank.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: the repository root first

from bench.fit_offline import LANGUAGE, Row, claims_of, dev_ids_for, fit_language, full_vector, load_rows, _rescue
from bench.trust import BENCH_DIR, POINTWISE, SHORT, SPLIT_SEED, fmt

from rageval_core.core.stats import auroc, bootstrap_ci
from rageval_core.offline import fit
from rageval_core.offline.model import FEATURES


def test_values(rows: list[Row], entry: dict[str, Any]) -> np.ndarray:
    """The decomposed faithfulness values of ``rows`` under one language's fitted constants."""
    w = np.asarray([entry["weights"][n] for n in FEATURES])
    gates = (entry["frame_gate"], entry["negation_gate"], entry["paraphrase_gate"])
    return fit.answer_values(w, claims_of(rows, FEATURES, gates), _rescue(rows, gates[2]), full_vector(FEATURES))


def seed_aurocs(rows: dict[str, list[Row]], samples: dict[str, list[Any]], seed: int) -> dict[str, tuple[float | None, np.ndarray, list[Row]]]:
    """Per file: test-half AUROC, values and rows, with constants fitted on this seed's dev halves."""
    dev_ids = dev_ids_for(samples, seed)
    models = {}
    for lang in ("ja", "en"):
        dev = [r for n in POINTWISE if LANGUAGE[n] == lang for r in rows[n] if r.id in dev_ids[n]]
        models[lang] = fit_language(dev, embedded=True)
    out = {}
    for name in POINTWISE:
        test = [r for r in rows[name] if r.id not in dev_ids[name]]
        values = test_values(test, models[LANGUAGE[name]])
        out[name] = (auroc(values.tolist(), [r.label for r in test]), values, test)
    return out


def run_seeds(args: argparse.Namespace) -> int:
    if not BENCH_DIR.is_dir():
        print(f"skipped: {BENCH_DIR} not found")
        return 0
    started = time.perf_counter()
    rows, samples, _ = load_rows(args.cache)
    seeds = sorted({SPLIT_SEED, *range(args.seeds)}) if SPLIT_SEED < args.seeds else [*range(args.seeds - 1), SPLIT_SEED]
    per_seed = {seed: seed_aurocs(rows, samples, seed) for seed in seeds}
    print(f"{len(seeds)} split seeds (shipped seed {SPLIT_SEED} among them), each refitting the encoder set on its own "
          f"dev halves; {time.perf_counter() - started:.0f} s")
    print(f"{'file':<18} {'seed ' + str(SPLIT_SEED) + ' test AUROC':>22} {'95% CI':>16}  median   min    max   rank of seed {SPLIT_SEED}")
    for name in POINTWISE:
        a, values, test = per_seed[SPLIT_SEED][name]
        y = [r.label for r in test]
        groups = [r.group for r in test]
        def stat(idx: list[int], v: np.ndarray = values, lab: list[int] = y) -> float | None:
            return auroc([float(v[i]) for i in idx], [lab[i] for i in idx])

        interval = bootstrap_ci(stat, len(y), groups=groups, iterations=args.bootstrap)
        spread = [per_seed[s][name][0] for s in seeds if per_seed[s][name][0] is not None]
        rank = 1 + sum(v > (a or 0.0) for v in spread)
        print(f"{name:<18} {fmt(a):>22} {fmt(interval):>16}  {statistics.median(spread):.3f}  {min(spread):.3f}  "
              f"{max(spread):.3f}  {rank} of {len(spread)} (1 = best)")
    print(" ".join(f"{SHORT[n]}_median={statistics.median([per_seed[s][n][0] for s in seeds]):.3f}" for n in POINTWISE))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=30, help="split seeds, each refitting on its own dev half")
    parser.add_argument("--cache", type=Path, help="bench/fit_offline.py's feature cache")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    return run_seeds(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
