"""Record a real local model judging the labelled sample's dev rows with two rubric versions, for the Prompts page's
"vs people" panel with no key (sample_data/replay/trust_labelled_ja_qwen2.5-coder-1.5b.*).

Needs the local llama.cpp server with Qwen2.5-Coder-1.5B (docs/judges.md, "The prompt loop with no key"), so it is
run by hand, never in CI; `tests/llm/test_replay_prompt_loop.py` replays the recording and fails with this command
when a prompt, template or schema change made it stale.

    python bench/record_prompt_loop.py --base-url http://127.0.0.1:8080/v1

The versions: v1 is the `binary` preset (faithfulness, answer correctness; 0/1) with every reason capped at
REASON_CAP characters (a 1.5B model sometimes loops without a maxLength); v2 is v1 plus one clear-cut pass and
one clear-cut fail drawn from the train split of the default split (seed 0, train 0.2 / dev 0.4 / test 0.4).
Both judge the Japanese dev rows (the English ones are in another language than the rubric) through
`versus_run.run_versus`, the same path the page takes, with the call log recorded (`--record-log`, one call a
line, duplicates by key dropped). The versions file beside the log holds both rubrics, the rows, the model, the
date and the figures, which the replay must reproduce.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.analysis.trust.run_report import merged_labels
from rageval_core.analysis.trust.splits import TRAIN
from rageval_core.session.versus_run import Version, dataset_split, run_versus
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring import few_shot
from rageval_core.scoring.metrics.judge import REASON_CAP_KEY
from rageval_core.scoring.rubric import load_rubric
from rageval_core.store.runs import Store

DATASET = "sample_data/trust_labelled.jsonl"
REPLAY = ROOT / "sample_data" / "replay"
LOG = REPLAY / "trust_labelled_ja_qwen2.5-coder-1.5b.jsonl"
VERSIONS = REPLAY / "trust_labelled_ja_qwen2.5-coder-1.5b.versions.json"
REASON_CAP = 60
ITERATIONS = 1000


def versions(samples, labels, assignment) -> tuple[Version, Version]:
    """v1 (the capped binary preset) and v2 (v1 with one pass and one fail from train)."""
    base = load_rubric("binary", "ja")
    capped = replace(base, id="binary-short", name="binary, reasons ≤ 60 characters",
                     metadata={REASON_CAP_KEY: REASON_CAP})
    train = [r for r, s in assignment.items() if s == TRAIN]
    shots = few_shot.choose_examples(samples, {c: labels.for_criterion(c) for c in capped.ids}, capped, train)
    return Version("v1 no examples", capped), Version("v2 two train examples", few_shot.with_examples(capped, shots))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="the llama.cpp server, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct-q4_k_m", help="model name recorded with each call")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per call (a 1.5B model on one thread is slow)")
    parser.add_argument("--out-dir", type=Path, default=REPLAY, help="where the log and the versions file go")
    args = parser.parse_args()
    log_out, versions_out = args.out_dir / LOG.name, args.out_dir / VERSIONS.name

    dataset = load_dataset(ROOT / DATASET)
    labels = merged_labels(dataset.samples, {})
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store.sqlite")
        split = dataset_split(store, dataset.content_hash, dataset.samples, labels)
        old, new = versions(dataset.samples, labels, split.assignment)
        log = Path(tmp) / "calls.jsonl"
        cfg = ProviderConfig(provider="openai-compatible", model=args.model, base_url=args.base_url, concurrency=1,
                             cache=False, record_log=str(log), timeout_s=args.timeout, max_retries=1)
        got = run_versus(dataset.samples, labels, old, new, config=cfg, store=store, assignment=split.assignment,
                         dataset_name=dataset.name, dataset_digest=dataset.content_hash, iterations=ITERATIONS,
                         language="ja", calibrate=False,  # the Japanese dev rows, figures at 0.5 as recorded
                         progress=lambda label, p: print(f"{label}: {p.done}/{p.total}", file=sys.stderr, flush=True))
        if not log.is_file():
            print("no call reached the server: nothing recorded (is it running at --base-url?)", file=sys.stderr)
            return 2
        by_key: dict[str, str] = {}
        for line in log.read_text(encoding="utf-8").splitlines():
            if line.strip():
                by_key.setdefault(json.loads(line)["key"], line)
        log_out.write_text("".join(line + "\n" for line in by_key.values()), encoding="utf-8")
        results = {label: {f"{r.sample_id}|{r.metric}": [r.value, r.unscored_reason] for r in run.results}
                   for label, run in got.runs.items()}
    versions_out.write_text(json.dumps({
        "model": args.model,
        "server": "llama-cpp-python 0.3.36 (llama.cpp), Q4_K_M GGUF, --n_threads 1, --n_ctx 4096, temperature 0",
        "recorded_on": datetime.now(UTC).date().isoformat(),
        "dataset": DATASET,
        "dataset_hash": dataset.content_hash,
        "split": {"seed": split.seed, "fractions": split.fractions},
        "rows": got.rows,
        "iterations": ITERATIONS,
        "versions": [{"label": v.label, "rubric": v.rubric.to_dict()} for v in (old, new)],
        "results": results,
        "report": got.report.to_dict(),
    }, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    unscored = sum(1 for per in results.values() for v, _ in per.values() if v is None)
    print(f"recorded {len(by_key)} calls on {len(got.rows)} rows x 2 versions ({unscored} results unscored) → "
          f"{log_out}")
    for d in got.report.differences:
        b = d.differences["balanced_accuracy"]
        print(f"{d.criterion}: balanced accuracy v2 - v1 = {b.value} [{b.low}, {b.high}] on {d.n} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
