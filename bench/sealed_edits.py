"""Score the sealed suite (bench/data/sealed_edits.jsonl) once, and freeze its figures.

    python bench/sealed_edits.py            # check the suite's sha256, score it, print per type x form
    python bench/sealed_edits.py --write    # ... and freeze the figures in bench/data/sealed_edits_figures.json

The sealed suite (``bench/data/sealed_edits.README.md``) was written before issue 37's rule changes and never read
while rules were developed. This script is the one deliberate way to score it: it first checks the file against the
sha256 recorded beside it (``sealed_edits.sha256``) and stops if they differ, then scores every row with the
product's decomposed faithfulness metric on the offline provider (as ``evaluate --provider offline`` does, through
``bench/minimal_edits.run_suite``), a row right when its verdict at the calibrated answer threshold of its language
(``rageval_core/offline/fitted.json``) matches its label. Printed: per error type and form (plain / realistic) the
rows right, AUROC over the suite with a bootstrap interval (rows sharing contexts resampled together) and per
language, and per type the edits it missed (what names the forms it is blind to).

``--write`` freezes those figures, with the suite's hash, the commit and the model id, in
``bench/data/sealed_edits_figures.json`` (and an identical copy the package ships, ``rageval_core/offline/
sealed_figures.json``): what the offline banner, the Trust page, the ``trust`` command, the HTML
report and the README disclose (``rageval_core.offline.limits``). CI checks the hash and that the product shows the
frozen figures; it never re-scores. A change that re-scores the suite says so in its commit message.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.minimal_edits import meta, right, run_suite  # noqa: E402
from rageval_core.core.stats import auroc, bootstrap_ci  # noqa: E402
from rageval_core.core.types import Sample  # noqa: E402
from rageval_core.offline.limits import SEALED_FIGURES_PATH  # noqa: E402
from rageval_core.offline.model import answer_threshold  # noqa: E402

SUITE = ROOT / "bench" / "data" / "sealed_edits.jsonl"
RECORD = ROOT / "bench" / "data" / "sealed_edits.sha256"
FROZEN = ROOT / "bench" / "data" / "sealed_edits_figures.json"  # the frozen record; the package ships a copy
TYPES = ("control", "paraphrase", "number", "date", "negation", "entity", "unit", "invention")
FORMS = ("plain", "realistic")


def suite_sha256(path: Path = SUITE) -> str:
    """The suite's sha256 with line endings normalised (a CRLF checkout is not an edit), as its test computes it."""
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def recorded_sha256(path: Path = RECORD) -> str:
    digest, name = path.read_text(encoding="utf-8").split()
    if name != SUITE.name:
        raise SystemExit(f"{path}: records {name!r}, not {SUITE.name!r}")
    return digest


def _auroc_with_interval(samples: Sequence[Sample], values: dict[str, float | None],
                         iterations: int) -> tuple[float | None, tuple[float, float] | None, int]:
    kept = [s for s in samples if values.get(s.id) is not None]
    x = [float(values[s.id]) for s in kept]  # type: ignore[arg-type]
    y = [int(meta(s, "label_faithful")) for s in kept]  # type: ignore[call-overload]
    groups = [json.dumps(list(s.contexts), ensure_ascii=False) for s in kept]
    ci = bootstrap_ci(lambda idx: auroc([x[i] for i in idx], [y[i] for i in idx]), len(kept), groups=groups,
                      iterations=iterations, seed=0)
    return auroc(x, y), ci, len(kept)


def figures(samples: Sequence[Sample], values: dict[str, float | None], iterations: int) -> dict[str, Any]:
    """The frozen figures: per type and form the rows right, the missed rows' edits, AUROC with its interval."""
    types: dict[str, Any] = {}
    for typ in TYPES:
        entry: dict[str, Any] = {"label": "faithful" if typ in ("control", "paraphrase") else "unfaithful"}
        missed: list[dict[str, str]] = []
        for form in FORMS:
            rows = [s for s in samples if meta(s, "type") == typ and meta(s, "form") == form]
            hits = [right(s, values.get(s.id)) for s in rows]
            entry[form] = {"right": sum(hits), "rows": len(rows)}
            missed += [{"form": form, "language": str(meta(s, "language")), "edit": str(meta(s, "edit") or "")}
                       for s, ok in zip(rows, hits) if not ok]
        entry["missed"] = missed
        types[typ] = entry
    value, ci, scored = _auroc_with_interval(samples, values, iterations)
    by_language = {}
    for language in ("ja", "en"):
        rows = [s for s in samples if meta(s, "language") == language]
        a, lci, _ = _auroc_with_interval(rows, values, iterations)
        by_language[language] = {"auroc": _round(a), "auroc_ci": _round_pair(lci), "rows": len(rows)}
    return {
        "scored_by": "bench/sealed_edits.py --write",
        "scored_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": _commit(),
        "model": _model(),
        "suite": "bench/data/sealed_edits.jsonl",
        "suite_sha256": suite_sha256(),
        "cases": len(samples),
        "scored": scored,
        "faithful": sum(int(meta(s, "label_faithful")) for s in samples),  # type: ignore[call-overload]
        "verdict": {"ja": round(answer_threshold("ja"), 4), "en": round(answer_threshold("en"), 4)},
        "auroc": _round(value),
        "auroc_ci": _round_pair(ci),
        "bootstrap": {"iterations": iterations, "seed": 0, "groups": "rows sharing their contexts"},
        "by_language": by_language,
        "types": types,
    }


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _round_pair(p: tuple[float, float] | None) -> list[float] | None:
    return None if p is None else [round(p[0], 4), round(p[1], 4)]


def _commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head.stdout.strip() + ("+uncommitted" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _model() -> str:
    from rageval_core.providers.config import PROVIDERS

    return str(PROVIDERS["offline"].default_model)


def print_figures(data: dict[str, Any]) -> None:
    print(f"{data['cases']} rows of {data['suite']} (sha256 {data['suite_sha256'][:12]}…, as recorded), offline "
          f"{data['model']}, verdict at the calibrated threshold (ja {data['verdict']['ja']:.3f}, en {data['verdict']['en']:.3f})")
    print(f"{'type':<11} {'label':<10} {'plain':>7} {'realistic':>10}")
    for typ, f in data["types"].items():
        cells = [f"{f[form]['right']}/{f[form]['rows']}" for form in FORMS]
        print(f"{typ:<11} {f['label']:<10} {cells[0]:>7} {cells[1]:>10}")
    for typ, f in data["types"].items():
        for m in f["missed"]:
            print(f"  missed {typ} {m['form']} ({m['language']}): {m['edit'] or '-'}")
    ci = data["auroc_ci"]
    print(f"AUROC {data['auroc']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] over {data['scored']} scored rows; "
          + ", ".join(f"{k} {v['auroc']:.3f} [{v['auroc_ci'][0]:.3f}, {v['auroc_ci'][1]:.3f}]" for k, v in data["by_language"].items()))
    caught = sum(f[form]["right"] for f in data["types"].values() for form in FORMS if f["label"] == "unfaithful")
    errors = sum(f[form]["rows"] for f in data["types"].values() for form in FORMS if f["label"] == "unfaithful")
    print(f"sealed_auroc={data['auroc']:.3f} errors_caught={caught}/{errors}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"freeze the figures in {FROZEN.name} (and the copy the "
                        f"package ships, rageval_core/offline/{SEALED_FIGURES_PATH.name})")
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples of the AUROC interval")
    args = parser.parse_args(argv)
    digest, want = suite_sha256(), recorded_sha256()
    if digest != want:
        print(f"{SUITE}: sha256 {digest} is not the recorded {want}: the sealed suite changed; not scored", file=sys.stderr)
        return 2
    samples, result = run_suite(path=SUITE)
    data = figures(samples, result.values, args.bootstrap)
    print_figures(data)
    if args.write:
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        for path in (FROZEN, SEALED_FIGURES_PATH):
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
