"""How fast and how small ``import-traces`` reads an export.

    python bench/traces_import.py                 # 1,000 and 2,500 traces (2,500 is ~47 MB, under the 50 MB limit)
    python bench/traces_import.py --traces 3000
    python bench/traces_import.py --million       # 1M one-span traces (37 MB, one OTLP document and JSON Lines) and a
                                                  # 200 MB file over the limit: seconds and peak RSS of the CLI
    python bench/traces_import.py --hostile       # each hostile file of tests/data/test_trace_hostile.py: exit, peak RSS

Speed: N traces made from tests/data/traces/sdk/openinference_langchain.otlp.json's three (two RAG answers and one that
ended in an error: LangChain traced by OpenInference, protobuf JSON; each copy under new trace ids), written as one
OTLP/JSON document and as JSON Lines. The last line:
traces=<n> json_s=<s> jsonl_s=<s> rows=<rows> skipped=<skipped> mb=<size of the JSON document>

Memory (``--million``, ``--hostile``): ``python -m rageval_core import-traces FILE --out OUT`` in a child process,
its peak RSS from ``os.wait4`` (what the issue's budget, 10 x the file + 100 MB, is about).
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.data.traces import import_traces  # noqa: E402

SAMPLE = ROOT / "tests" / "data" / "traces" / "sdk" / "openinference_langchain.otlp.json"


def export(n_traces: int) -> list[dict]:
    """One ExportTraceServiceRequest per copy of the sample's three traces (ids made unique per copy, still base64)."""
    base = json.loads(SAMPLE.read_text(encoding="utf-8"))
    out = []
    for copy_no in range((n_traces + 2) // 3):
        doc = copy.deepcopy(base)
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            raw = base64.b64decode(span["traceId"])
            span["traceId"] = base64.b64encode(copy_no.to_bytes(4, "big") + raw[4:]).decode()
        out.append(doc)
    return out


def timed(data: bytes, name: str) -> tuple[float, object]:
    started = time.perf_counter()
    got = import_traces(data, name)
    return time.perf_counter() - started, got


def speed(sizes: list[int]) -> None:
    line = ""
    for n in sizes:
        docs = export(n)
        merged = {"resourceSpans": [rs for d in docs for rs in d["resourceSpans"]]}
        as_json = json.dumps(merged).encode()
        as_jsonl = "".join(json.dumps(d) + "\n" for d in docs).encode()
        json_s, got = timed(as_json, "bench.json")
        jsonl_s, _ = timed(as_jsonl, "bench.jsonl")
        print(f"{got.n_traces} traces, {got.n_spans} spans, {len(as_json) / 1e6:.1f} MB: OTLP JSON {json_s:.2f} s "
              f"({got.n_traces / json_s:,.0f} traces/s), JSON Lines {jsonl_s:.2f} s; {len(got.rows)} rows, skipped {got.skip_counts()}")
        line = (f"traces={got.n_traces} json_s={json_s:.2f} jsonl_s={jsonl_s:.2f} rows={len(got.rows)} "
                f"skipped={sum(got.skip_counts().values())} mb={len(as_json) / 1e6:.1f}")
    print(line)


TIME = Path("/usr/bin/time")  # GNU time: the child's own peak, not this process's pages copied at fork


def run_cli(path: Path, out: Path) -> tuple[int, float, float, str]:
    """``(exit code, seconds, peak RSS MB, stderr's first line)`` of import-traces on ``path`` in a child process."""
    command = [sys.executable, "-m", "rageval_core", "import-traces", str(path), "--out", str(out)]
    if TIME.exists():
        command = [str(TIME), "-f", "PEAK_KB %M", *command]
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = child.stderr.read() if child.stderr else ""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    lines = err.strip().splitlines()
    peak = usage.ru_maxrss / 1024  # without GNU time: an upper bound (counts the pages of this process at fork)
    if lines and lines[-1].startswith("PEAK_KB "):
        peak = int(lines.pop().split()[1]) / 1024
    lines = [line for line in lines if not line.startswith("Command exited")]
    return os.waitstatus_to_exitcode(status), seconds, peak, (lines or [""])[0]


def million(folder: Path, n: int = 1_000_000) -> None:
    """1M one-span traces (no RAG answer among them: every trace skipped, the worst case for what is kept per span)."""
    as_json = folder / "million.json"
    with as_json.open("w", encoding="utf-8") as handle:
        handle.write('{"resourceSpans":[{"scopeSpans":[{"spans":[')
        handle.write(",".join('{"traceId":"%08x","spanId":"01"}' % i for i in range(n)))
        handle.write("]}]}]}")
    as_jsonl = folder / "million.jsonl"
    with as_jsonl.open("w", encoding="utf-8") as handle:
        handle.writelines('{"context":{"trace_id":"%08x","span_id":"01"}}\n' % i for i in range(n))
    over = folder / "over.json"
    with over.open("wb") as handle:  # 200 MB of real bytes: the limit is checked before any is read
        chunk = b'{"traceId":"0123456789abcdef0123456789abcdef","spanId":"0123456789abcdef"},' * 13_000
        handle.write(b'{"resourceSpans":[{"scopeSpans":[{"spans":[')
        while handle.tell() < 200 * 1024 * 1024:
            handle.write(chunk)
        handle.write(b'{"traceId":"0","spanId":"0"}]}]}]}')
    for path in (as_json, as_jsonl, over):
        mb = path.stat().st_size / 1e6
        code, seconds, peak, first = run_cli(path, folder / "out.jsonl")
        budget = 10 * mb + 100
        print(f"{path.name}: {mb:.1f} MB, exit {code}, {seconds:.1f} s, peak RSS {peak:.0f} MB (budget {budget:.0f} MB); {first[:110]}")
        print(f"file={path.name} mb={mb:.1f} exit={code} seconds={seconds:.1f} peak_mb={peak:.0f} budget_mb={budget:.0f}")


def hostile(folder: Path) -> None:
    """Each hostile file of the tests through the CLI: exit code, peak RSS and the first line said."""
    from bench.hostile_traces import FILE_ATTACKS, SPAN_ATTACKS

    attacks = {**{k: v[0] for k, v in SPAN_ATTACKS.items()}, **{k: v[0] for k, v in FILE_ATTACKS.items()}}
    for name, data in attacks.items():
        path = folder / f"{name}.json"
        path.write_bytes(data.encode("utf-8", "surrogatepass"))
        code, seconds, peak, first = run_cli(path, folder / "out.jsonl")
        print(f"| {name} | {len(data) / 1e3:,.0f} KB | exit {code} | {peak:.0f} MB | {first.replace(str(folder) + '/', '')[:150]} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, action="append", help="traces in the export (repeatable; default 1000, 2500)")
    parser.add_argument("--million", action="store_true", help="1M one-span traces and a 200 MB file: seconds and peak RSS")
    parser.add_argument("--hostile", action="store_true", help="the tests' hostile files: exit code and peak RSS")
    args = parser.parse_args(argv)
    if args.million or args.hostile:
        with tempfile.TemporaryDirectory() as tmp:
            if args.hostile:
                hostile(Path(tmp))
            if args.million:
                million(Path(tmp))
        return 0
    speed(args.traces or [1000, 2500])
    return 0


if __name__ == "__main__":
    sys.exit(main())
