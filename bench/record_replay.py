"""Re-record the real-model replay sample (sample_data/replay/) after a prompt, template, rubric or schema edit.

Needs the local llama.cpp server with Qwen2.5-Coder-1.5B (docs/providers.md, "A real small model (llama.cpp)"), so it is
run on demand, never in CI; `tests/llm/test_replay_sample.py` fails with this command when the recording is stale.

    python bench/record_replay.py --base-url http://127.0.0.1:8080/v1

It runs the recorded configuration (rows, metrics and judges from the `.expected.json` beside the log) against
the server with a fresh store and no cache, writes the call log (`--record-log`, duplicates by key dropped) and
the new `.expected.json` (scores and the prompt fingerprint the test compares). Answer correctness embeds with
the bundled offline encoder, as the replay provider does. Expect ~20 minutes for the 12 rows on 2 cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.data.datasets import load_dataset
from rageval_core.offline.encoder import OfflineEmbedder
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.session.for_run import build_and_run
from rageval_core.run import RunSpec
from rageval_core.store.runs import Store
from rageval_core.llm.base import canonical_json
from rageval_core.core.tasks import SCHEMAS

REPLAY = ROOT / "sample_data" / "replay"
LOG = REPLAY / "ml_qa_ja_qwen2.5-coder-1.5b.jsonl"
EXPECTED = REPLAY / "ml_qa_ja_qwen2.5-coder-1.5b.expected.json"


def prompt_fingerprint() -> str:
    """sha256 over what the recorded requests were rendered from: ja templates, rubric presets, task schemas
    (stored beside the recording; tests/llm/test_replay_sample.py compares it to tell a stale recording)."""
    core = ROOT / "rageval_core" / "scoring"  # paths hashed as before the regrouping: prompts/..., presets/...
    files = sorted((core / "prompts" / "templates" / "ja").glob("*.txt")) + sorted((core / "presets").rglob("*.json"))
    digest = hashlib.sha256(canonical_json(SCHEMAS).encode("utf-8"))
    for path in files:
        digest.update(path.relative_to(core).as_posix().encode("utf-8") + b"\0" + path.read_bytes())
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="the llama.cpp server, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="model name recorded with each call")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per call (a 1.5B model on 2 cores is slow)")
    parser.add_argument("--economy-rows", default="1,4,7", help="rows also recorded in economy mode (docs/metrics.md, calls per row)")
    args = parser.parse_args()

    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    dataset = load_dataset(ROOT / expected["dataset"])
    samples = [s for s in dataset.samples if s.id in set(expected["row_ids"])]
    scorers = list(build_scorers(expected["metrics"], {})) + [JudgeScorer(j) for j in expected["judges"]]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "calls.jsonl"
        cfg = ProviderConfig(provider="openai-compatible", model=args.model, base_url=args.base_url, concurrency=1,
                             cache=False, record_log=str(log), timeout_s=args.timeout)
        store = Store(Path(tmp) / "store.sqlite")
        result = build_and_run(RunSpec(samples, scorers, provider=cfg, concurrency=1, dataset_name=dataset.name), store,
                               embedder=OfflineEmbedder())
        economy_ids = {x.strip() for x in args.economy_rows.split(",") if x.strip()}
        if economy_ids:
            build_and_run(RunSpec([s for s in samples if s.id in economy_ids],
                                  list(build_scorers(expected["metrics"], {"economy": True})), provider=cfg, concurrency=1,
                                  dataset_name=dataset.name), store, embedder=OfflineEmbedder())
        by_key: dict[str, str] = {}
        for line in log.read_text(encoding="utf-8").splitlines():
            if line.strip():
                by_key.setdefault(json.loads(line)["key"], line)
        LOG.write_text("".join(line + "\n" for line in by_key.values()), encoding="utf-8")
    expected["results"] = {f"{r.sample_id}|{r.method}|{r.metric}": [r.value, r.unscored_reason] for r in result.results}
    expected["prompt_fingerprint"] = prompt_fingerprint()
    expected["model"] = args.model
    EXPECTED.write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    unscored = sum(1 for r in result.results if r.value is None)
    print(f"recorded {len(by_key)} calls, {len(result.results)} results ({unscored} unscored) → {LOG.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
