"""The project's own minimal-edit suite: does the offline judge see what people see?

    python bench/minimal_edits.py            # per-type pass rates of the decomposed faithfulness verdict
    python bench/minimal_edits.py --show     # also every row's value
    python bench/minimal_edits.py --suite bench/data/realistic_dev.jsonl   # the realistic development cases

``bench/data/minimal_edits.jsonl`` (written for this project, never derived from the benchmarks): 12
scenarios, 6 English and 6 Japanese, each a question, two short contexts and nine answers, one per type:
``control`` (faithful, reworded little), ``paraphrase`` (faithful, few shared words), ``copied`` (context
text copied verbatim that answers another question: faithful, though not relevant), and six unfaithful
edits of a faithful answer: ``number``, ``date``, ``negation``, ``entity``, ``unit`` and ``invention`` (a
faithful sentence with an invented one appended). Every row runs through the product's decomposed
faithfulness metric on the offline provider (as ``evaluate --provider offline`` does); a row passes when
the value's verdict at the calibrated answer threshold (``rageval_core/offline/fitted.json``, fitted on the
benchmarks' dev halves, never on this suite) matches its label.

A type passes at >= 3/4 of its rows (paraphrase: >= 3/5). Rows with a ``form`` (``plain`` / ``realistic``, as in
``bench/data/realistic_dev.jsonl``, this issue's development cases) are also tallied per type x form. Last line:
    minimal_edits_auroc=<a> types_passing=<k>/<n>
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.core.stats import auroc  # noqa: E402
from rageval_core.core.types import Sample  # noqa: E402
from rageval_core.data.datasets import load_dataset  # noqa: E402
from rageval_core.offline.limits import FIGURES_PATH  # noqa: E402
from rageval_core.offline.model import answer_threshold  # noqa: E402
from rageval_core.scoring.metrics.base import EvalContext  # noqa: E402

SUITE = ROOT / "bench" / "data" / "minimal_edits.jsonl"
TYPES = ("control", "paraphrase", "copied", "number", "date", "negation", "entity", "unit", "invention")
PASS_SHARE = {"paraphrase": 3 / 5}
DEFAULT_PASS_SHARE = 3 / 4


@dataclass
class TypeResult:
    type: str
    right: int
    rows: int
    need: float

    @property
    def passing(self) -> bool:
        return self.rows > 0 and self.right / self.rows >= self.need


@dataclass
class SuiteResult:
    values: dict[str, float | None]
    types: list[TypeResult]
    auroc: float | None

    @property
    def types_passing(self) -> int:
        return sum(t.passing for t in self.types)


def meta(sample: Sample, key: str) -> object:
    return sample.metadata.get(key, (sample.metadata.get("meta") or {}).get(key))


def summarise(samples: Sequence[Sample], values: dict[str, float | None]) -> SuiteResult:
    """Per type, the rows whose verdict at the calibrated threshold matches the label; overall AUROC.
    An unscored row counts as wrong (a user would see no verdict)."""
    types = []
    for typ in TYPES:
        rows = [s for s in samples if meta(s, "type") == typ]
        hits = sum(right(s, values.get(s.id)) for s in rows)
        types.append(TypeResult(typ, hits, len(rows), PASS_SHARE.get(typ, DEFAULT_PASS_SHARE)))
    scored = [s for s in samples if values.get(s.id) is not None]
    a = auroc([float(values[s.id]) for s in scored], [int(meta(s, "label_faithful")) for s in scored])  # type: ignore[arg-type,call-overload]
    return SuiteResult(values, types, a)


def right(sample: Sample, value: float | None) -> bool:
    """The verdict at the calibrated threshold matches the label (an unscored row is wrong)."""
    if value is None:
        return False
    verdict = int(value >= answer_threshold(str(meta(sample, "language"))))
    return verdict == int(meta(sample, "label_faithful"))  # type: ignore[call-overload]


def by_form(samples: Sequence[Sample], values: dict[str, float | None]) -> dict[tuple[str, str], tuple[int, int]]:
    """Per (type, form) of rows that carry a ``form``: (rows right, rows)."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for s in samples:
        form = meta(s, "form")
        if not form:
            continue
        key = (str(meta(s, "type")), str(form))
        r, n = out.get(key, (0, 0))
        out[key] = (r + right(s, values.get(s.id)), n + 1)
    return dict(sorted(out.items()))


def run_suite(ctx: EvalContext | None = None, path: Path = SUITE) -> tuple[list[Sample], SuiteResult]:
    """Score every suite row with the decomposed faithfulness metric on the offline provider."""
    from rageval_core.scoring.metrics.registry import build_scorers

    if ctx is None:
        from rageval_core.offline.encoder import OfflineEmbedder
        from rageval_core.offline.provider import OfflineLLM

        embedder = OfflineEmbedder()
        ctx = EvalContext(OfflineLLM(embedder=embedder), embedder)
    samples = list(load_dataset(path).samples)
    scorer = build_scorers(["faithfulness"])[0]
    values = {s.id: scorer.score(s, ctx)[0].value for s in samples}
    return samples, summarise(samples, values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="print every row's value")
    parser.add_argument("--write", action="store_true",
                        help="record the per-type figures in rageval_core/offline/minimal_edits_figures.json "
                             "(the suite's development figures; the product discloses the sealed suite's: bench/sealed_edits.py)")
    parser.add_argument("--suite", type=Path, default=SUITE, help="another suite file in the same format")
    args = parser.parse_args(argv)
    if args.write and args.suite.resolve() != SUITE.resolve():
        parser.error("--write records the minimal-edit suite's figures only")
    samples, result = run_suite(path=args.suite)
    print(f"{len(samples)} rows from {args.suite}; verdict: value >= answer threshold "
          f"(ja {answer_threshold('ja'):.3f}, en {answer_threshold('en'):.3f}; fitted on the benchmarks' dev halves)")
    if args.show:
        for s in samples:
            v = result.values.get(s.id)
            print(f"  {s.id:<28} label {meta(s, 'label_faithful')} value {'unscored' if v is None else f'{v:.3f}'}  {s.answer[:70]}")
    print(f"{'type':<11} {'label':<10} {'right':>7}  need   pass")
    for t in result.types:
        if not t.rows:
            continue
        label = "faithful" if t.type in ("control", "paraphrase", "copied") else "unfaithful"
        print(f"{t.type:<11} {label:<10} {t.right:>3}/{t.rows:<3}  {t.need:.2f}   {'yes' if t.passing else 'NO'}")
    forms = by_form(samples, result.values)
    if forms:
        print("per type x form (right / rows): " + ", ".join(f"{t} {f} {r}/{n}" for (t, f), (r, n) in forms.items()))
    a = "n/a" if result.auroc is None else f"{result.auroc:.3f}"
    if args.write:
        FIGURES_PATH.write_text(json.dumps(figures(samples, result), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {FIGURES_PATH.relative_to(ROOT)}")
    print(f"minimal_edits_auroc={a} types_passing={result.types_passing}/{len(result.types)}")
    return 0


def figures(samples: Sequence[Sample], result: SuiteResult) -> dict[str, object]:
    """What ``rageval_core.offline.limits`` reads: per type right / rows / pass share, and the overall AUROC."""
    return {
        "measured_by": "bench/minimal_edits.py --write",
        "measured_at": time.strftime("%Y-%m-%d", time.gmtime()),
        "cases": len(samples),
        "auroc": None if result.auroc is None else round(result.auroc, 4),
        "types": {t.type: {"right": t.right, "rows": t.rows, "need": round(t.need, 4)} for t in result.types},
    }


if __name__ == "__main__":
    raise SystemExit(main())
