"""Runner throughput: 48 distinct rows (the seed rows with each row's number in its question and answer, so no
two rows share a claim extraction), the four seed metrics and rubric5, against the local fake server at 200 ms a
request, 16 requests in flight.

Prints the requests made (chat + embeddings, counted by the server), the ideal wall time (requests x
latency / concurrency), the critical-path bound (the deepest chain of dependent requests in one row x latency,
read from the task graph: each scorer's declared ``chain_length``, the dependent steps it sends one after
another) and the measured wall time, then the same rows re-run with the response cache on (no request
expected). Last line: ``ideal_s=<a> wall_s=<b> ratio=<b/a>`` with a = the larger bound. Target ratio <= 1.2.

The fake server sees only the wire request, so ``task_responder`` answers from the prompt and the
response schema: it counts the numbered items (``<claims count="3">``) the templates render and returns
that many schema-valid verdicts, so every metric scores instead of failing on a count mismatch.

    python bench/runner.py [--latency 0.2] [--concurrency 16] [--rows 48]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fake_llm_server import ChildServer  # noqa: E402
from rageval_core.testing.fake_llm import FakeLLMServer, FakeRequest, schema_instance  # noqa: E402

SEED_METRICS = ["faithfulness", "answer_relevancy", "context_precision", "answer_correctness"]
_SPLIT = re.compile(r"(?<=[。．！？!?.])\s*")


def _block(prompt: str, tag: str) -> str:
    """The text inside the last ``<tag>…</tag>`` of the prompt (the data part, after the examples)."""
    found = re.findall(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    return found[-1].strip() if found else ""


def _count(prompt: str, tag: str) -> int:
    found = re.findall(rf'<{tag} count="(\d+)">', prompt)
    return int(found[-1]) if found else 0


def _items(prompt: str, tag: str) -> list[str]:
    found = re.findall(rf'<{tag} count="\d+">\n(.*?)</{tag}>', prompt, re.S)
    if not found:
        return []
    return [m.strip() for m in re.findall(r'<\w+ index="\d+">\n(.*?)\n</\w+>', found[-1], re.S)]


def _sentences(text: str) -> list[str]:
    return [s for s in _SPLIT.split(text) if s.strip()] or ([text] if text else [])


def task_responder(request: FakeRequest) -> Any:
    """A schema-valid answer for each evaluation task, sized from the counts in the prompt."""
    schema = request.schema or {}
    props = set((schema.get("properties") or {}).keys())
    prompt = request.prompt
    if props == {"claims"}:
        text = _block(prompt, "answer") or _block(prompt, "reference") or "claim"
        return {"claims": _sentences(text)[:4]}
    if props == {"verdicts"} or props == {"verdicts", "missing_reference_claims"}:
        item = ((schema["properties"]["verdicts"].get("items") or {}).get("properties") or {})
        if "claim_index" in item:
            verdicts = [
                {"claim_index": i, "verdict": 1, "reason": "supported", "context_index": 0, "supporting_sentence": None}
                for i in range(_count(prompt, "claims"))
            ]
            if "reference_verdict" in item:
                for v in verdicts:
                    v["reference_verdict"] = 1
                return {"verdicts": verdicts, "missing_reference_claims": []}
            return {"verdicts": verdicts}
        return {"verdicts": [{"context_index": i, "useful": 1, "reason": "useful"} for i in range(_count(prompt, "contexts"))]}
    if props == {"questions"}:
        question = _block(prompt, "answer") or "question"
        m = re.search(r"(\d+)\s*(?:件|questions?)", prompt[-400:])
        n = int(m.group(1)) if m else 3
        return {"questions": [{"question": question, "noncommittal": 0} for _ in range(n)]}
    if props == {"attributions"}:
        return {"attributions": [{"sentence_index": i, "attributed": 1, "reason": "found"} for i in range(_count(prompt, "reference_sentences"))]}
    if props == {"sentences"}:
        return {"sentences": _sentences(" ".join(_items(prompt, "contexts")))[:1]}
    if props == {"TP", "FP", "FN"}:
        claims = _items(prompt, "answer_claims")
        return {"TP": [{"statement": c, "reason": "in the reference"} for c in claims], "FP": [], "FN": []}
    return schema_instance(schema)


def bench_samples(n: int = 48) -> list[Any]:
    """``n`` distinct rows (bench/soak.py's generator: the seed rows, each row's number in its texts)."""
    import json

    from bench.rows import soak_rows
    from rageval_core.data.datasets import load_dataset

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.json"
        path.write_text(json.dumps(soak_rows(n), ensure_ascii=False), encoding="utf-8")
        return list(load_dataset(path).samples)


def _scorers() -> list[Any]:
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers

    return list(build_scorers(SEED_METRICS, {})) + [JudgeScorer("rubric5")]


def chain_depth(scorers: list[Any]) -> int:
    """The deepest chain of dependent requests in one row, from the task graph: each scorer's declared
    ``chain_length`` (its steps that wait for the one before). Scorers of one row run side by side."""
    from rageval_core.run.plan import scorer_chain_length

    return max((scorer_chain_length(s) for s in scorers), default=1)


def breakdown(received: list[float], run_start: float, run_end: float, latency: float, concurrency: int) -> dict[str, float]:
    """Where the wall time over the ideal went, from when each request reached the server (one wall clock):
    ``head_s`` from the run's start to the first request, ``tail_s`` from the last answer to the run's end,
    ``span_s`` between them, ``idle_slot_s`` the slot-seconds of that span no request held (capacity
    ``concurrency`` x span minus requests x latency), and per quarter of the span the mean slots busy."""
    times = sorted(received)
    if not times:
        return {"head_s": run_end - run_start, "tail_s": 0.0, "span_s": 0.0, "idle_slot_s": 0.0}
    first, last_end = times[0], times[-1] + latency
    span = last_end - first
    out = {
        "head_s": first - run_start, "tail_s": run_end - last_end, "span_s": span,
        "idle_slot_s": concurrency * span - len(times) * latency,
    }
    for q in range(4):  # slot-seconds held in each quarter of the span / its length
        lo, hi = first + q * span / 4, first + (q + 1) * span / 4
        held = sum(max(0.0, min(hi, t + latency) - max(lo, t)) for t in times)
        out[f"busy_q{q + 1}"] = held / (hi - lo) if hi > lo else 0.0
    return out


def _run(
    server: FakeLLMServer | ChildServer, samples: list[Any], concurrency: int, home: Path, cache: bool = False
) -> tuple[float, int, Any, float]:
    """Wall time, requests the server saw, the run, and when (``time.time()``) the run's clock started: read from
    its first progress report (elapsed ~0), since the run's return also reads its summary back after the wall."""
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.session.for_run import build_and_run
    from rageval_core.run import RunSpec
    from rageval_core.store.runs import Store

    cfg = ProviderConfig(
        provider="openai-compatible", model="fake-judge", base_url=server.openai_base_url,
        embedding_model="fake-embed", concurrency=concurrency, cache=cache, max_retries=0,
    )
    before = server.total_requests
    home.mkdir(parents=True, exist_ok=True)
    started: list[float] = []

    def first_report(p: Any) -> None:
        if not started:
            started.append(time.time() - p.elapsed_s)

    result = build_and_run(RunSpec(samples, _scorers(), provider=cfg, concurrency=concurrency), Store(home / "bench.sqlite"),
                           progress=first_report)
    return result.wall_s, server.total_requests - before, result, started[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rows", type=int, default=48)
    parser.add_argument(
        "--in-process", action="store_true",
        help="serve from this process (its CPU then competes with the client's for the interpreter)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "fake-key-for-local-server")

    samples = bench_samples(args.rows)
    depth = chain_depth(_scorers())
    critical = depth * args.latency
    server_cm = (
        FakeLLMServer(latency=args.latency, responder=task_responder) if args.in_process
        else ChildServer(latency=args.latency, responder="bench.runner:task_responder")
    )
    with tempfile.TemporaryDirectory() as tmp, server_cm as server:
        cpu0 = time.process_time()
        wall, calls, result, run_start = _run(server, samples, args.concurrency, Path(tmp) / "main")
        cpu = time.process_time() - cpu0
        received = (server.received_times() if isinstance(server, ChildServer)
                    else sorted(e.received_at for e in server.requests))
        parts = breakdown(received, run_start, run_start + wall, args.latency, args.concurrency)
        # The same evaluation twice with the response cache on: the second pass must cost nothing.
        _run(server, samples, args.concurrency, Path(tmp) / "cached", cache=True)
        cached_wall, cached_requests, cached, _ = _run(server, samples, args.concurrency, Path(tmp) / "cached", cache=True)
        stored = result.results
    ideal = calls * args.latency / args.concurrency
    unscored = sum(1 for r in stored if r.value is None)
    bound = max(ideal, critical)
    print(f"rows={len(samples)} (distinct) scorers={len(SEED_METRICS) + 1} tasks={result.total_tasks} results={len(stored)} unscored={unscored}")
    print(f"server: {'in this process' if args.in_process else 'its own process'}")
    print(f"requests={calls} (chat {result.provider_calls}, embeddings {calls - result.provider_calls}) latency_s={args.latency} concurrency={args.concurrency}")
    print(f"ideal_s (requests x latency / concurrency) = {ideal:.2f}")
    print(f"critical_path_s (deepest chain in the task graph: {depth} dependent requests x latency) = {critical:.2f}")
    print(f"wall_s = {wall:.2f} ({len(samples) / wall:.1f} rows/s; process CPU {cpu:.2f} s, {1000 * cpu / max(1, result.total_tasks):.2f} ms a task)")
    print(
        f"breakdown: head_s={parts['head_s']:.2f} (run start to the first request at the server) "
        f"span_s={parts['span_s']:.2f} tail_s={parts['tail_s']:.2f} (last answer to the run's end) "
        f"idle_slot_s={parts['idle_slot_s']:.2f} (= {parts['idle_slot_s'] / args.concurrency:.2f} s of all slots); "
        f"slots busy by quarter of the span: "
        + " ".join(f"{parts.get(f'busy_q{q}', 0.0):.1f}" for q in range(1, 5))
    )
    print(
        f"cached re-run: requests={cached_requests} cache_hits={cached.cache_hits} "
        f"wall_s={cached_wall:.2f} ({len(samples) / cached_wall:.1f} rows/s)"
    )
    print(f"peak_rss_mb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
    print(f"ideal_s={bound:.2f} wall_s={wall:.2f} ratio={wall / bound:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
