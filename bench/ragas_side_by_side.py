"""Side by side with ragas 0.4.3: the 12 seed rows (sample_data/ml_qa_ja.json), the four seed metrics
(faithfulness, answer relevancy, context precision, answer correctness), both against the same fake server
(bench/fake_llm_server.py) at 200 ms a request, at concurrency 4, 8 and 16.

ragas is never a project dependency: it runs in its own virtual environment under bench/ (gitignored):

    python -m venv bench/.venv-ragas
    bench/.venv-ragas/bin/pip install ragas==0.4.3 langchain-openai langchain-community==0.4.1

(unpinned, pip backtracks for minutes). ragas writes its JSON schema into the prompt after "JSON Schema:"
and sends no response_format; the fake server answers it with a valid instance of that schema. Printed
per system and concurrency: LLM and embedding requests per row (counted by the server), prompt tokens
(the server's chars/4 estimate, the same measure for both), wall time, and wall ÷ ideal (ideal = requests ×
latency / concurrency). Last line: ``ours_calls=<a> ragas_calls=<b> ours_wall_s=<c> ragas_wall_s=<d>``
(requests per row and wall time at concurrency 16).

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

from bench.fake_llm_server import is_chat, start  # noqa: E402
from bench.runner import SEED_METRICS, task_responder  # noqa: E402
from rageval_core.testing.fake_llm import FakeRequest, LoggedRequest, default_responder  # noqa: E402

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


def _tokens(entry: LoggedRequest) -> int:
    body = entry.body if isinstance(entry.body, dict) else {}
    if is_chat(entry):
        text = "".join(str(m.get("content", "")) for m in body.get("messages") or [])
    else:
        items = body.get("input")
        text = "".join(map(str, items)) if isinstance(items, list) else str(items or "")
    return max(1, len(text) // 4)


def _counts(log: list[LoggedRequest]) -> tuple[int, int, int]:
    chat = sum(1 for e in log if is_chat(e))
    return chat, len(log) - chat, sum(_tokens(e) for e in log)


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


def run_ragas(server: Any, concurrency: int, data: Path) -> tuple[float, int]:
    out = subprocess.run([str(VENV_PYTHON), "-c", RAGAS_SCRIPT, server.openai_base_url, str(concurrency), str(data)],
                         capture_output=True, text=True, timeout=900, env={**os.environ, "RAGAS_DO_NOT_TRACK": "true"})
    if out.returncode != 0:
        raise RuntimeError(f"ragas failed: {out.stderr[-1500:]}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return float(report["wall_s"]), int(report["nan"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 8, 16])
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "fake-key-for-local-server")
    if not VENV_PYTHON.exists():
        print(f"ragas is not installed: create {VENV_PYTHON.parent.parent} as this file's docstring says", file=sys.stderr)
        return 2
    rows = json.loads((ROOT / "sample_data" / "ml_qa_ja.json").read_text(encoding="utf-8"))
    n = len(rows)
    last: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "rows.json"
        data.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        print(f"{n} sample rows, metrics {', '.join(SEED_METRICS)}, fake server latency {args.latency:g}s")
        print("system  conc  llm/row  embed/row  prompt_tokens  unscored  wall_s  ideal_s  wall/ideal")
        for conc in args.concurrency:
            for name in ("ours", "ragas"):
                server = start(latency=args.latency, responder=responder)
                try:
                    if name == "ours":
                        wall, unscored = run_ours(server, conc, Path(tmp) / f"ours-{conc}")
                    else:
                        wall, unscored = run_ragas(server, conc, data)
                    log = server.requests
                finally:
                    server.stop()
                chat, embed, tokens = _counts(log)
                ideal = len(log) * args.latency / conc
                print(f"{name:6}  {conc:4}  {chat / n:7.2f}  {embed / n:9.2f}  {tokens:13}  {unscored:8}  {wall:6.2f}  "
                      f"{ideal:7.2f}  {wall / ideal:10.2f}")
                last[name] = (len(log) / n, wall)
    ours, ragas = last["ours"], last["ragas"]
    print(f"ours_calls={ours[0]:.2f} ragas_calls={ragas[0]:.2f} ours_wall_s={ours[1]:.2f} ragas_wall_s={ragas[1]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
