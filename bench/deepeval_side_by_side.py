"""Side by side with DeepEval 4.3.1: the 12 seed rows (sample_data/ml_qa_ja.json by default), the four seed metrics,
both against the same fake server (bench/fake_llm_server.py) at the same latency (200 ms a request), each system in
a fresh server so the counts are its own.

- ours: faithfulness, answer relevancy, context precision, answer correctness through the ``openai`` provider
  (gpt-4o-mini, text-embedding-3-small) at concurrency C (requests in flight never above C).
- DeepEval: ``FaithfulnessMetric``, ``AnswerRelevancyMetric``, ``ContextualPrecisionMetric`` and ``GEval`` with a
  correctness criterion over the actual and expected output (DeepEval's recipe for answer correctness; it has no
  metric of that name), judged by ``OpenAIModel("gpt-4o-mini", base_url=...)``, reasons on as shipped. Two ways:
  ``held``: ``AsyncConfig(max_concurrent=C)`` and an HTTP client of C connections, since DeepEval runs a test
  case's metrics, and their steps, at once (``max_concurrent`` bounds test cases, not requests); ``shipped``: the
  defaults (``AsyncConfig()``: 20 test cases at once), run once. As shipped, DeepEval builds a new ``AsyncOpenAI``
  client for every request (``OpenAIModel.load_model``), ~0.2 s of CPU each on the loaded 2-core machine; given an
  HTTP client (``held``) it reuses it.

DeepEval is never a project dependency: it runs in its own virtual environment (gitignored), made by hand:

    python -m venv bench/.venv-deepeval && bench/.venv-deepeval/bin/pip install deepeval==4.3.1

or any python with deepeval 4.3.1 (``--python``; tests/support/external_venvs.py makes one for the tests under
~/.cache/rageval-test-venvs). The fake server answers DeepEval's json_schema requests with a valid instance of the
schema and GEval's plain-text score request with a score and a reason (its logprob-weighted score falls back to the
plain score, as DeepEval does when a server sends no logprobs).

Printed per system: LLM and embedding requests per row (counted by the server), prompt tokens by a real tokenizer
(o200k_base with OpenAI's chat framing, as gpt-4o-mini bills them; embedding inputs by cl100k_base), the characters
÷ 4 the benches counted before, the peak of requests in flight (server side), unscored results, wall time and wall
÷ ideal (ideal = requests × latency / C). Last line, at the highest C: ``ours_calls=… deepeval_calls=…
ours_tokens=… deepeval_tokens=… ours_wall_s=… deepeval_wall_s=…``.

    python -m bench.deepeval_side_by_side [--data sample_data/ml_qa_ja.json] [--latency 0.2] [--concurrency 4 8 16]
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
from bench.request_tokens import Tally, peak_in_flight, tally  # noqa: E402
from bench.runner import SEED_METRICS, task_responder  # noqa: E402
from rageval_core.testing.fake_llm import FakeRequest, default_responder  # noqa: E402

DEFAULT_PYTHON = ROOT / "bench" / ".venv-deepeval" / "bin" / "python"
JUDGE, EMBEDDER = "gpt-4o-mini", "text-embedding-3-small"

DEEPEVAL_SCRIPT = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import openai
from openai._base_client import DEFAULT_CONNECTION_LIMITS
from deepeval import evaluate
from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig
from deepeval.metrics import AnswerRelevancyMetric, ContextualPrecisionMetric, FaithfulnessMetric, GEval
from deepeval.models import OpenAIModel
from deepeval.test_case import LLMTestCase, SingleTurnParams

base_url, workers, data_path, mode, judge = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rows = json.load(open(data_path, encoding="utf-8"))
cases = [LLMTestCase(input=r["question"], actual_output=r["answer"], expected_output=r["ground_truth"],
                     retrieval_context=list(r["contexts"])) for r in rows]
extra = {}
if mode == "held":  # at most `workers` requests in flight: DeepEval's max_concurrent bounds test cases only
    limits = type(DEFAULT_CONNECTION_LIMITS)(max_connections=workers, max_keepalive_connections=workers)
    extra["async_http_client"] = openai.DefaultAsyncHttpxClient(limits=limits)
model = OpenAIModel(model=judge, base_url=base_url, api_key="fake-key-for-local-server", **extra)
metrics = [FaithfulnessMetric(model=model), AnswerRelevancyMetric(model=model), ContextualPrecisionMetric(model=model),
           GEval(name="Correctness", criteria="Determine whether the actual output is factually correct based on the expected output.",
                 evaluation_params=[SingleTurnParams.ACTUAL_OUTPUT, SingleTurnParams.EXPECTED_OUTPUT], model=model)]
started = time.monotonic()
result = evaluate(cases, metrics, async_config=AsyncConfig(max_concurrent=workers) if mode == "held" else AsyncConfig(),
                  display_config=DisplayConfig(show_indicator=False, print_results=False, inspect_after_run=False),
                  cache_config=CacheConfig(write_cache=False, use_cache=False), error_config=ErrorConfig(ignore_errors=True))
wall = time.monotonic() - started
scores = [m for t in result.test_results for m in (t.metrics_data or [])]
bad = [m for m in scores if m.score is None or m.error]
import deepeval
print(json.dumps({"wall_s": wall, "unscored": len(bad), "results": len(scores), "version": deepeval.__version__,
                  "errors": sorted({f"{m.name}: {str(m.error)[:100]}" for m in bad})[:3]}))
"""


def ours_responder(request: FakeRequest) -> Any:
    """The workbench sends a response schema, answered by the bench's task-aware responder."""
    return task_responder(request) if request.schema else default_responder(request)


def deepeval_responder(request: FakeRequest) -> Any:
    """DeepEval's json_schema requests get a valid instance of their schema; GEval's score request (plain text
    asking for JSON with "score" and "reason") gets a score and a reason."""
    if request.schema:
        return default_responder(request)
    if '"score"' in request.prompt and '"reason"' in request.prompt:
        return {"score": 8, "reason": "The actual output agrees with the expected output on the main facts."}
    return default_responder(request)


def run_ours(server: Any, concurrency: int, home: Path, data: Path) -> tuple[float, int, int]:
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.run import RunSpec
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.session.for_run import build_and_run
    from rageval_core.store.runs import Store

    samples = load_dataset(data).samples
    cfg = ProviderConfig(provider="openai", model=JUDGE, base_url=server.openai_base_url, embedding_model=EMBEDDER,
                         concurrency=concurrency, cache=False, max_retries=0)
    home.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    result = build_and_run(RunSpec(samples, list(build_scorers(SEED_METRICS, {})), provider=cfg, concurrency=concurrency),
                           Store(home / "side.sqlite"))
    wall = time.monotonic() - started
    unscored = sum(s["unscored"] for m in result.summary.values() for s in m.values())
    return wall, unscored, len(samples) * len(SEED_METRICS)


def run_deepeval(python: Path, server: Any, concurrency: int, data: Path, mode: str, cwd: Path) -> tuple[float, int, int, str]:
    env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "YES", "DEEPEVAL_NO_INSPECT_PROMPT": "1", "PYTHONWARNINGS": "ignore",
           "OPENAI_API_KEY": "fake-key-for-local-server"}
    out = subprocess.run([str(python), "-c", DEEPEVAL_SCRIPT, server.openai_base_url, str(concurrency), str(data), mode, JUDGE],
                         capture_output=True, text=True, timeout=1800, env=env, cwd=cwd)
    if out.returncode != 0:
        raise RuntimeError(f"deepeval failed: {out.stderr[-1500:]}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    if report["errors"]:
        print(f"  deepeval unscored: {report['errors']}", file=sys.stderr)
    return float(report["wall_s"]), int(report["unscored"]), int(report["results"]), str(report["version"])


def line(name: str, conc: int, t: Tally, n: int, peak: int, unscored: int, results: int, wall: float, latency: float) -> str:
    ideal = t.requests * latency / conc
    return (f"{name:17}  {conc:4}  {t.chat / n:7.2f}  {t.embed / n:9.2f}  {t.prompt_tokens:13,}  {t.embed_tokens:12,}  "
            f"{t.chars4:8,}  {peak:4}  {unscored:4}/{results:<4}  {wall:6.2f}  {ideal:6.2f}  {wall / ideal:5.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "sample_data" / "ml_qa_ja.json")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--python", type=Path, default=Path(os.environ.get("RAGEVAL_DEEPEVAL_PYTHON") or DEFAULT_PYTHON),
                        help="a python with deepeval 4.3.1 (default bench/.venv-deepeval, or RAGEVAL_DEEPEVAL_PYTHON)")
    parser.add_argument("--no-shipped", action="store_true", help="skip DeepEval's as-shipped run")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "fake-key-for-local-server")
    if not args.python.exists():
        print(f"deepeval is not installed: make {args.python.parent.parent} as this file's docstring says, or pass --python",
              file=sys.stderr)
        return 2
    rows = json.loads(args.data.read_text(encoding="utf-8"))
    n = len(rows)
    last: dict[str, tuple[Tally, float]] = {}
    version = "?"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "rows.json"
        data.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        print(f"{n} rows of {args.data.name}, metrics {', '.join(SEED_METRICS)} (DeepEval: Faithfulness, AnswerRelevancy, "
              f"ContextualPrecision, GEval correctness), judge {JUDGE}, fake server latency {args.latency:g}s")
        print("tokens: prompts by o200k_base with the chat framing; embedding inputs by cl100k_base; chars/4 as before")
        print("system             conc  llm/row  embed/row  prompt_tokens  embed_tokens   chars/4  peak  unscored   "
              "wall_s  ideal_s  w/i")
        runs = [(conc, name) for conc in args.concurrency for name in ("ours", "deepeval-held")]
        if not args.no_shipped:
            runs.append((20, "deepeval-shipped"))  # DeepEval's default AsyncConfig: 20 test cases at once
        for conc, name in runs:
            ours = name == "ours"
            server = start(latency=args.latency, responder=ours_responder if ours else deepeval_responder)
            try:
                if ours:
                    wall, unscored, results = run_ours(server, conc, Path(tmp) / f"ours-{conc}", data)
                else:
                    wall, unscored, results, version = run_deepeval(args.python, server, conc, data, name.split("-")[1],
                                                                   Path(tmp))
                log = server.requests
            finally:
                server.stop()
            t = tally(log)
            print(line(name, conc, t, n, peak_in_flight(log, args.latency), unscored, results, wall, args.latency))
            if name != "deepeval-shipped":
                last["ours" if ours else "deepeval"] = (t, wall)
    (ours_t, ours_wall), (de_t, de_wall) = last["ours"], last["deepeval"]
    print(f"deepeval {version}; ratios ours/deepeval at C={args.concurrency[-1]}: requests {ours_t.requests / de_t.requests:.2f}, "
          f"prompt tokens {ours_t.prompt_tokens / de_t.prompt_tokens:.2f} (chars/4 said {ours_t.chars4 / de_t.chars4:.2f}), "
          f"wall {ours_wall / de_wall:.2f}")
    print(f"ours_calls={ours_t.requests / n:.2f} deepeval_calls={de_t.requests / n:.2f} ours_tokens={ours_t.prompt_tokens} "
          f"deepeval_tokens={de_t.prompt_tokens} ours_wall_s={ours_wall:.2f} deepeval_wall_s={de_wall:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
