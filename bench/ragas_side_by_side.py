"""Side by side with ragas 0.4.3: the 12 seed rows (sample_data/ml_qa_ja.json), the four seed metrics
(faithfulness, answer relevancy, context precision, answer correctness), both against the same fake server
(bench/fake_llm_server.py) at 200 ms a request, at concurrency 4, 8 and 16.

ragas is never a project dependency: it runs in its own virtual environment under bench/ (gitignored):

    python -m venv bench/.venv-ragas
    bench/.venv-ragas/bin/pip install ragas==0.4.3 langchain-openai langchain-community==0.4.1

(unpinned, pip backtracks for minutes). ragas writes its JSON schema into the prompt after "JSON Schema:"
and sends no response_format; the fake server answers it with a valid instance of that schema. Printed
per system and concurrency: LLM and embedding requests per row (counted by the server), prompt tokens by a real
tokenizer (o200k_base with OpenAI's chat framing, as gpt-4o-mini would bill them; bench/request_tokens.py), the
characters ÷ 4 this bench printed before, wall time, and wall ÷ ideal (ideal = requests × latency / concurrency).
Last line: ``ours_calls=<a> ragas_calls=<b> ours_tokens=<c> ragas_tokens=<d> ours_wall_s=<e> ragas_wall_s=<f>``
(requests per row, prompt tokens and wall time at the highest concurrency). DeepEval beside it:
bench/deepeval_side_by_side.py.

    python bench/ragas_side_by_side.py [--latency 0.2] [--concurrency 4 8 16]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fake_llm_server import start  # noqa: E402
from bench.request_tokens import Tally, tally  # noqa: E402
from bench.runner import SEED_METRICS, task_responder  # noqa: E402
from rageval_core.testing.fake_llm import FakeRequest, default_responder  # noqa: E402

VENV_PYTHON = ROOT / "bench" / ".venv-ragas" / "bin" / "python"

RAGAS_SCRIPT = r"""
import json, os, sys, time, warnings
warnings.filterwarnings("ignore")
os.environ["RAGAS_DO_NOT_TRACK"] = "true"
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from ragas import EvaluationDataset, RunConfig, evaluate
from ragas.embeddings import LangchainEmbeddingsWrapper
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import answer_correctness, answer_relevancy, context_precision, faithfulness

base_url, workers, data_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = json.load(open(data_path, encoding="utf-8"))
dataset = EvaluationDataset.from_list([
    {"user_input": r["question"], "retrieved_contexts": r["contexts"], "response": r["answer"], "reference": r["ground_truth"]}
    for r in rows
])
llm = LangchainLLMWrapper(ChatOpenAI(base_url=base_url, api_key="x", model="fake-judge", max_retries=0))
emb = LangchainEmbeddingsWrapper(OpenAIEmbeddings(base_url=base_url, api_key="x", model="fake-embed", check_embedding_ctx_length=False))
started = time.monotonic()
result = evaluate(dataset, metrics=[faithfulness, answer_relevancy, context_precision, answer_correctness], llm=llm,
                  embeddings=emb, run_config=RunConfig(max_workers=workers, max_retries=1), show_progress=False)
wall = time.monotonic() - started
frame = result.to_pandas()
nan = int(frame[[c for c in frame.columns if c in ("faithfulness", "answer_relevancy", "context_precision", "answer_correctness")]].isna().sum().sum())
print(json.dumps({"wall_s": wall, "nan": nan}))
"""


def responder(request: FakeRequest) -> Any:
    """Ours sends a response schema (answered by the bench's task-aware responder); ragas writes its schema
    into the prompt (answered with a valid instance of it)."""
    return task_responder(request) if request.schema else default_responder(request)


def run_ours(server: Any, concurrency: int, home: Path) -> tuple[float, int]:
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.session.for_run import build_and_run
    from rageval_core.run import RunSpec
    from rageval_core.store.runs import Store

    samples = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json").samples
    cfg = ProviderConfig(provider="openai-compatible", model="fake-judge", base_url=server.openai_base_url,
                         embedding_model="fake-embed", concurrency=concurrency, cache=False, max_retries=0)
    home.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    result = build_and_run(RunSpec(samples, list(build_scorers(SEED_METRICS, {})), provider=cfg, concurrency=concurrency),
                           Store(home / "side.sqlite"))
    wall = time.monotonic() - started
    return wall, sum(s["unscored"] for m in result.summary.values() for s in m.values())


def run_ragas(python: Path, server: Any, concurrency: int, data: Path) -> tuple[float, int]:
    out = subprocess.run([str(python), "-c", RAGAS_SCRIPT, server.openai_base_url, str(concurrency), str(data)],
                         capture_output=True, text=True, timeout=900, env={**os.environ, "RAGAS_DO_NOT_TRACK": "true"})
    if out.returncode != 0:
        raise RuntimeError(f"ragas failed: {out.stderr[-1500:]}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return float(report["wall_s"]), int(report["nan"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--python", type=Path, default=Path(os.environ.get("RAGEVAL_RAGAS_PYTHON") or VENV_PYTHON),
                        help="a python with ragas 0.4.3 (default bench/.venv-ragas, or RAGEVAL_RAGAS_PYTHON)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "fake-key-for-local-server")
    if not args.python.exists():
        print(f"ragas is not installed: create {args.python.parent.parent} as this file's docstring says, or pass --python",
              file=sys.stderr)
        return 2
    rows = json.loads((ROOT / "sample_data" / "ml_qa_ja.json").read_text(encoding="utf-8"))
    n = len(rows)
    last: dict[str, tuple[Tally, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "rows.json"
        data.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        print(f"{n} sample rows, metrics {', '.join(SEED_METRICS)}, fake server latency {args.latency:g}s")
        print("tokens: prompts by o200k_base with the chat framing; chars/4 as this bench counted before")
        print("system  conc  llm/row  embed/row  prompt_tokens  chars/4  unscored  wall_s  ideal_s  wall/ideal")
        for conc in args.concurrency:
            for name in ("ours", "ragas"):
                server = start(latency=args.latency, responder=responder)
                try:
                    if name == "ours":
                        wall, unscored = run_ours(server, conc, Path(tmp) / f"ours-{conc}")
                    else:
                        wall, unscored = run_ragas(args.python, server, conc, data)
                    log = server.requests
                finally:
                    server.stop()
                t = tally(log)
                ideal = len(log) * args.latency / conc
                print(f"{name:6}  {conc:4}  {t.chat / n:7.2f}  {t.embed / n:9.2f}  {t.prompt_tokens:13,}  {t.chars4:7,}  "
                      f"{unscored:8}  {wall:6.2f}  {ideal:7.2f}  {wall / ideal:10.2f}")
                last[name] = (t, wall)
    (ours, ours_wall), (ragas, ragas_wall) = last["ours"], last["ragas"]
    print(f"ours_calls={ours.requests / n:.2f} ragas_calls={ragas.requests / n:.2f} ours_tokens={ours.prompt_tokens} "
          f"ragas_tokens={ragas.prompt_tokens} ours_wall_s={ours_wall:.2f} ragas_wall_s={ragas_wall:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
