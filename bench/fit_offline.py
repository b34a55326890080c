"""Fit every constant of the offline claim model on the dev halves of ../shared/benchmarks, and write them.

    python bench/fit_offline.py                 # fit on the dev halves (split seed 9), print, write fitted.json
    python bench/fit_offline.py --dry-run       # fit and print only
    python bench/fit_offline.py --cache F.pkl   # keep the per-claim features between runs (they take ~2 min)

Per language (ja: jhars + jafaithsum; en: lfqa + halueval), with the bundled encoder and lexical only:
the logistic weights of the claim features (``rageval_core.offline.fit``), the frame gate of the
contradiction veto (a grid, the best mean dev AUROC, ties to the lower gate) and the answer threshold (the
best mean dev balanced accuracy). Only the dev rows are read for fitting; the test halves are scored once,
by ``bench/trust.py``. ``fitted.json`` records the commit, the date, the split seed and the sha256 of each
file it came from, and the sha256 of the feature code (``FEATURE_CODE``), so a refit written in the same commit as
a rule change still names the rules it was fitted with. WikiEval and jtruthfulqa are never used for fitting.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.trust import BENCH_DIR, POINTWISE, SPLIT_SEED, group_keys, label_of, load_samples, split_halves  # noqa: E402

from rageval_core.core.stats import auroc  # noqa: E402
from rageval_core.offline import fit  # noqa: E402
from rageval_core.offline.checks import faithfulness_precheck  # noqa: E402
from rageval_core.offline.model import (  # noqa: E402
    CONSTANTS_PATH,
    EMBEDDED,
    FEATURES,
    LEXICAL,
    LEXICAL_FEATURES,
    feature_vector,
)
from rageval_core.offline.steps import attribution_evidence  # noqa: E402
from rageval_core.offline.support import ClaimFeatures, answer_claims, claim_features  # noqa: E402
from rageval_core.core.text import detect_language  # noqa: E402

LANGUAGE = {"jhars": "ja", "jafaithsum": "ja", "lfqa_verification": "en", "halueval_qa": "en"}
GATES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)  # 1.01: contradictions never veto (units still do)
PARAPHRASE_GATES = (0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 1.01)  # 1.01: the cosine never carries a claim


if __name__ == "__main__":  # one module object either way, so a cached Row pickles as fit_offline.Row
    sys.modules.setdefault("fit_offline", sys.modules["__main__"])


@dataclass
class Row:
    """One labelled, scorable benchmark row with its claims' features."""

    id: str
    file: str
    group: str
    label: int
    features: list[ClaimFeatures]


if __name__ == "__main__":
    Row.__module__ = "fit_offline"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


FEATURE_CODE = ("rageval_core/offline/support.py", "rageval_core/offline/contradiction.py", "rageval_core/offline/polarity.py",
                "rageval_core/offline/units.py", "rageval_core/offline/numerals.py", "rageval_core/offline/antonyms.py", "rageval_core/offline/steps.py", "rageval_core/offline/injection.py",
                "rageval_core/core/text.py", "rageval_core/core/names.py")


def feature_code_hash() -> str:
    """The code the features come from: a cache written by other code is recomputed, never reused."""
    h = hashlib.sha256()
    for rel in FEATURE_CODE:
        h.update((ROOT / rel).read_bytes())
    return h.hexdigest()


def row_features(file: str, samples: Iterable[Any], embedder: Any) -> list[Row]:
    """Features of every labelled row the offline judge scores, computed as the provider does."""
    samples = list(samples)
    groups = group_keys(samples)
    out: list[Row] = []
    for s in samples:
        label = label_of(s, "label_faithful")
        if label is None or faithfulness_precheck(s.answer, s.contexts) is not None:
            continue
        claims = answer_claims(s.answer, detect_language(s.answer))
        if not claims:
            continue
        ev = attribution_evidence(claims, list(s.contexts))
        out.append(Row(s.id, file, groups[s.id], label, claim_features(claims, ev, question=s.question, embedder=embedder)))
    return out


def load_rows(cache: Path | None) -> tuple[dict[str, list[Row]], dict[str, list[Any]], dict[str, str]]:
    """Features per file (from ``cache`` when it holds the same data hashes), the samples and the hashes."""
    hashes = {name: file_sha256(BENCH_DIR / f"{name}.jsonl") for name in POINTWISE}
    samples = {name: load_samples(BENCH_DIR / f"{name}.jsonl") for name in POINTWISE}
    if cache and cache.exists():
        saved = pickle.loads(cache.read_bytes())
        if saved.get("hashes") == hashes and saved.get("code") == feature_code_hash():
            return saved["rows"], samples, hashes
    from bench.trust import offline_context

    embedder = offline_context().embedder
    rows = {name: row_features(name, samples[name], embedder) for name in POINTWISE}
    if cache:
        cache.write_bytes(pickle.dumps({"hashes": hashes, "code": feature_code_hash(), "rows": rows}))
    return rows, samples, hashes


def claims_of(rows: Sequence[Row], names: Sequence[str], gates: tuple[float, float, float]) -> fit.Claims:
    """The flattened claims of ``rows`` for the fitter (vetoed claims kept with ``keep`` 0)."""
    x, answer, length, keep = [], [], [], []
    for a, row in enumerate(rows):
        for f in row.features:
            vec = f.vector()
            x.append([vec.get(n, 0.0) for n in names])
            answer.append(a)
            length.append(float(max(1, len(f.claim))))
            keep.append(0.0 if f.veto(gates[0], gates[1]) is not None else 1.0)
    return fit.Claims(np.asarray(x, dtype=float), np.asarray(answer), np.asarray(length), np.asarray(keep), len(rows))


def mean_auroc(values: np.ndarray, rows: Sequence[Row]) -> float:
    by_file: dict[str, tuple[list[float], list[int]]] = {}
    for v, r in zip(values, rows):
        by_file.setdefault(r.file, ([], []))
        by_file[r.file][0].append(float(v))
        by_file[r.file][1].append(r.label)
    scores = [auroc(x, y) for x, y in by_file.values()]
    kept = [s for s in scores if s is not None]
    return sum(kept) / len(kept) if kept else 0.0


PENALTIES = ("missing_numbers", "missing_names")  # fitted at or below 0: missing evidence never raises support


def _fit_at(rows: Sequence[Row], names: Sequence[str], gates: tuple[float, float, float]) -> tuple[float, np.ndarray]:
    labels = [r.label for r in rows]
    c = claims_of(rows, names, gates)
    penalties = [i for i, n in enumerate(names) if n in PENALTIES]
    w = fit.fit_weights(c, labels, fit.balanced_weights(labels, [r.file for r in rows]), nonpositive=penalties)
    return mean_auroc(fit.answer_values(w, c, _rescue(rows, gates[2]), full_vector(names)), rows), w


def full_vector(names: Sequence[str]) -> np.ndarray:
    """The features of a claim the evidence holds word for word (the product's support scale's 1.0)."""
    full = feature_vector(1.0, 1.0, 1.0 if "cosine" in names else None, 0, 0)
    return np.asarray([full.get(n, 0.0) for n in names])


def _rescue(rows: Sequence[Row], gate: float) -> np.ndarray:
    """Per claim, the cosine floor of its support (0 where the paraphrase rule does not apply)."""
    return np.asarray([f.cosine if f.paraphrase(gate) and f.cosine is not None else 0.0
                       for r in rows for f in r.features], dtype=float)


def mean_se(rows: Sequence[Row], score: float) -> float:
    """Standard error of the mean of the files' AUROCs (Hanley-McNeil per file, at the mean AUROC)."""
    files = sorted({r.file for r in rows})
    var = 0.0
    for name in files:
        pos = sum(1 for r in rows if r.file == name and r.label == 1)
        var += fit.auroc_se(score, pos, sum(1 for r in rows if r.file == name) - pos) ** 2
    return float(np.sqrt(var)) / len(files)


def fit_language(rows: Sequence[Row], embedded: bool) -> dict[str, Any]:
    """Weights, the three gates and the answer threshold for one language's dev rows. Each gate in turn
    (frame, negation, paraphrase; the later ones off while an earlier one is chosen) is the most sensitive
    one whose dev mean AUROC stays within one standard error of the all-checks-off fit; the weights are
    refitted at the chosen gates."""
    names = FEATURES if embedded else LEXICAL_FEATURES
    off = GATES[-1]
    chosen = [off, off, off]
    tried: dict[str, dict[str, float]] = {}
    best_off = _fit_at(rows, names, (off, off, off))[0]
    floor = best_off - mean_se(rows, best_off)
    for k, label in enumerate(("frame", "negation", "paraphrase")):
        if label == "paraphrase" and not embedded:
            break
        scores = {}
        for g in GATES if label != "paraphrase" else PARAPHRASE_GATES:
            gates = list(chosen)
            gates[k] = g
            scores[g] = _fit_at(rows, names, (gates[0], gates[1], gates[2]))[0]
        chosen[k] = fit.most_sensitive_within(scores, floor)
        tried[label] = {str(g): round(v, 4) for g, v in scores.items()}
    gates = (chosen[0], chosen[1], chosen[2])
    score, w = _fit_at(rows, names, gates)
    values = fit.answer_values(w, claims_of(rows, names, gates), _rescue(rows, gates[2]), full_vector(names))
    threshold = fit.choose_threshold(values, [r.label for r in rows], [r.file for r in rows])
    return {
        "weights": {n: round(float(v), 4) for n, v in zip(names, w)},
        "frame_gate": gates[0],
        "negation_gate": gates[1],
        "paraphrase_gate": gates[2],
        "answer_threshold": round(threshold, 4),
        "dev": {"rows": len(rows), "mean_auroc": round(score, 4), "mean_auroc_se": round(mean_se(rows, score), 4),
                "mean_auroc_checks_off": round(best_off, 4), "floor": round(floor, 4),
                "auroc_by_gate": tried},
    }


def fit_models(rows: dict[str, list[Row]], dev_ids: dict[str, set[str]]) -> dict[str, Any]:
    """Both constant sets (with the encoder, lexical only), each per language, from the dev rows only."""
    models: dict[str, Any] = {}
    for mode, embedded in ((EMBEDDED, True), (LEXICAL, False)):
        models[mode] = {}
        for lang in ("ja", "en"):
            dev = [r for name in POINTWISE if LANGUAGE[name] == lang for r in rows[name] if r.id in dev_ids[name]]
            models[mode][lang] = fit_language(dev, embedded)
    return models


def dev_ids_for(samples: dict[str, list[Any]], seed: int) -> dict[str, set[str]]:
    return {name: {s.id for s in split_halves(samples[name], seed)[0]} for name in samples}


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out.stdout.strip() + ("+uncommitted" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=SPLIT_SEED, help="split seed of the dev halves")
    parser.add_argument("--cache", type=Path, help="pickle of the per-claim features (reused when the data and the "
                        "feature code match)")
    parser.add_argument("--dry-run", action="store_true", help="print the fit, do not write fitted.json")
    parser.add_argument("--out", type=Path, default=CONSTANTS_PATH)
    args = parser.parse_args(argv)
    if not BENCH_DIR.is_dir():
        print(f"skipped: {BENCH_DIR} not found (the labelled benchmarks live beside the project in ../shared/benchmarks)")
        return 0
    started = time.perf_counter()
    rows, samples, hashes = load_rows(args.cache)
    models = fit_models(rows, dev_ids_for(samples, args.seed))
    print(f"fitted on the dev halves (split seed {args.seed}) in {time.perf_counter() - started:.0f} s")
    for mode, langs in models.items():
        for lang, entry in langs.items():
            weights = " ".join(f"{k}={v:+.3f}" for k, v in entry["weights"].items())
            print(f"{mode:<8} {lang}: {weights} frame_gate={entry['frame_gate']} "
                  f"negation_gate={entry['negation_gate']} paraphrase_gate={entry['paraphrase_gate']} "
                  f"answer_threshold={entry['answer_threshold']:.3f}")
            dev = entry["dev"]
            print(f"         dev rows {dev['rows']}, dev mean AUROC {dev['mean_auroc']:.3f} (se {dev['mean_auroc_se']:.3f}); "
                  f"dev mean AUROC by gate {dev['auroc_by_gate']}")
    data = {
        "fitted_by": "bench/fit_offline.py",
        "commit": git_commit(),
        "fitted_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "split_seed": args.seed,
        "fitted_on": "dev halves only: " + ", ".join(f"{n} ({LANGUAGE[n]})" for n in POINTWISE),
        "data_sha256": hashes,
        "feature_code_sha256": feature_code_hash(),
        "features": list(FEATURES),
        "models": models,
    }
    if not args.dry_run:
        args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
