"""How fast ``import-traces`` reads an export: N traces made from tests/data/traces/otel.json's three (two RAG answers
and a plain chat, each copy under new trace and span ids), written as one OTLP/JSON document and as JSON Lines.

    python bench/traces_import.py                 # 3,000 and 15,000 traces (15,000 is ~45 MB, under the 50 MB limit)
    python bench/traces_import.py --traces 3000

The last line: traces=<n> json_s=<s> jsonl_s=<s> rows=<rows> skipped=<skipped> mb=<size of the JSON document>
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.data.traces import import_traces  # noqa: E402

SAMPLE = ROOT / "tests" / "data" / "traces" / "otel.json"


def export(n_traces: int) -> list[dict]:
    """One ExportTraceServiceRequest per copy of the sample's three traces (ids made unique per copy)."""
    base = json.loads(SAMPLE.read_text(encoding="utf-8"))
    out = []
    for copy_no in range((n_traces + 2) // 3):
        doc = copy.deepcopy(base)
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["traceId"] = f"{copy_no:08x}" + span["traceId"][8:]
        out.append(doc)
    return out


def timed(data: bytes, name: str) -> tuple[float, object]:
    started = time.perf_counter()
    got = import_traces(data, name)
    return time.perf_counter() - started, got


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, action="append", help="traces in the export (repeatable; default 3000, 15000)")
    args = parser.parse_args(argv)
    line = ""
    for n in args.traces or [3000, 15000]:
        docs = export(n)
        merged = {"resourceSpans": [rs for d in docs for rs in d["resourceSpans"]]}
        as_json = json.dumps(merged).encode()
        as_jsonl = "".join(json.dumps(d) + "\n" for d in docs).encode()
        json_s, got = timed(as_json, "bench.json")
        jsonl_s, _ = timed(as_jsonl, "bench.jsonl")
        print(f"{got.n_traces} traces, {got.n_spans} spans, {len(as_json) / 1e6:.1f} MB: OTLP JSON {json_s:.2f} s "
              f"({got.n_traces / json_s:,.0f} traces/s), JSON Lines {jsonl_s:.2f} s; {len(got.rows)} rows, skipped {got.skip_counts()}")
        line = (f"traces={got.n_traces} json_s={json_s:.2f} jsonl_s={jsonl_s:.2f} rows={len(got.rows)} "
                f"skipped={len(got.skipped)} mb={len(as_json) / 1e6:.1f}")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
