"""Where Compare's time goes in a real browser on a 1,000-row run: `python bench/browser_compare.py`.

The browser test (tests/e2e/test_browser.py) prints the times; this breaks two of them down: the first open
from History's sidebar and a new tab. Per step it records the websocket's messages from the server (each
ForwardMsg decoded: its kind, the element it carries, its bytes and when it arrived after the click), the
scripts and styles the page fetched, Chromium's own counters (script, layout and style time) and the number of
DOM elements drawn. Needs /usr/bin/chromium and playwright, like the browser tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.browser import CHROMIUM, CHROMIUM_ARGS, SHOWN, streamlit_app  # noqa: E402  (SHOWN: the browser test's timer too)

FIRST_TAB = ["Category × criterion × method", "[data-testid=stHtml] img"]
# Each message from the server, time-stamped in the page (performance.now(), the clock of the click's timeStamp).
_WS_TIMES = """(() => {
  window.__ws = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); this.addEventListener('message', () => window.__ws.push(performance.now())); }
  };
})()"""
COUNTERS = ("ScriptDuration", "LayoutDuration", "RecalcStyleDuration", "TaskDuration")


def _stored_run(home: Path) -> str:
    """The browser test's run: 4 offline rows (seed metrics + rubric5) cloned to 1,000 rows in SQL."""
    os.environ["RAGEVAL_HOME"] = str(home)
    import rageval_core as r
    from bench.big_run import clone_run
    from rageval_core.core.types import SEED_METRICS

    ds = r.load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
    small = r.evaluate(ds.samples[:4], metrics=list(SEED_METRICS), judges=["rubric5"], store=r.Store())
    return clone_run(r.Store(), small.run_id, 250, dataset_hash="browser-1000", dataset_name="browser_1000_rows")


def _describe(payload: bytes) -> tuple[str, str]:
    """A ForwardMsg's kind and, for a delta, the element or block it carries."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    msg.ParseFromString(payload)
    kind = msg.WhichOneof("type") or "?"
    if kind != "delta":
        return kind, ""
    delta = msg.delta
    part = delta.WhichOneof("type") or "?"
    if part == "new_element":
        return kind, delta.new_element.WhichOneof("type") or "?"
    if part == "add_block":
        return kind, "block:" + (delta.add_block.WhichOneof("type") or "?")
    return kind, part


class Recorder:
    """The page's websocket messages from the server (decoded, in order) and the files it fetched."""

    def __init__(self, page: Any) -> None:
        self.frames: list[tuple[int, str, str]] = []
        self.files: list[tuple[str, int]] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        page.on("requestfinished", self._file)

    def _frame(self, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        self.frames.append((len(data), *_describe(data)))

    def _file(self, request: Any) -> None:
        self.files.append((request.url.rsplit("/", 1)[-1][:60], request.sizes().get("responseBodySize", 0)))


def _server_pid() -> int:
    """The `streamlit run` process this script started (for py-spy)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and b"streamlit" in cmdline:
            return int(stat.parent.name)
    raise RuntimeError("no streamlit child process")


def _counters(cdp: Any) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] in COUNTERS}


def _print_profile(profile: dict[str, Any], until_ms: float) -> None:
    """Chromium's CPU samples up to the first frame drawn: time per script file and the busiest functions."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    by_file: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    for node_id, dt in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node_id]["callFrame"]
        name = frame["functionName"] or "(anonymous)"
        where = frame["url"].rsplit("/", 1)[-1] or name
        by_file[where] += dt
        by_function[f"{name} {where}:{frame['lineNumber']}"] += dt
    total = sum(by_file.values())
    print(f"   chromium main thread samples: {total / 1e6:.2f} s (idle included, to the first frame drawn); by file: " + ", ".join(
        f"{f} {us / 1e3:.0f} ms" for f, us in by_file.most_common(12)))
    print("   busiest functions: " + ", ".join(f"{f} {us / 1e3:.0f} ms" for f, us in by_function.most_common(12)))


def step(page: Any, cdp: Any, rec: Recorder, name: str, action: Any, *, at_load: bool, spy: Path | None) -> None:
    """Run ``action`` (a click, or a navigation with ``at_load``), wait for the first tab, print the breakdown."""
    n_frames, n_files = len(rec.frames), len(rec.files)
    n_ws = 0 if at_load else page.evaluate("window.__ws.length")
    if not at_load:
        page.evaluate(SHOWN, [*FIRST_TAB, "1000", False])
    profiler = None
    if spy is not None:
        out = spy / f"{name.split()[0]}.txt"
        profiler = subprocess.Popen(["py-spy", "record", "--pid", str(_server_pid()), "--rate", "250", "--duration",
                                     "4", "--format", "raw", "--nonblocking", "--output", str(out)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # attached before the click
    before = _counters(cdp)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 500})
    cdp.send("Profiler.start")
    action()
    page.wait_for_function("window.__shown !== null", polling=20)
    after, profile = _counters(cdp), cdp.send("Profiler.stop")["profile"]  # up to the first frame drawn
    page.wait_for_timeout(1500)  # the messages after the first frame too
    start = page.evaluate("window.__click")
    shown = page.evaluate("window.__shown") - start
    times = [t - start for t in page.evaluate("window.__ws")[n_ws:]]
    frames, files = rec.frames[n_frames:], rec.files[n_files:]
    if profiler is not None:
        profiler.wait()
    print(f"\n== {name}: drawn {shown / 1000:.2f} s after the {'navigation' if at_load else 'click'} "
          f"(load {os.getloadavg()[0]:.1f})")
    deltas = [f for f in frames if f[1] == "delta"]
    print(f"   websocket from the server: {len(frames)} messages, {sum(f[0] for f in frames) / 1024:.1f} KB, "
          f"{len(deltas)} deltas")
    count: Counter[str] = Counter(f[2] for f in deltas)
    size: Counter[str] = Counter()
    for n, _kind, element in deltas:
        size[element] += n
    print("     " + ", ".join(f"{e} x{c} {size[e] / 1024:.1f} KB" for e, c in count.most_common()))
    print("   arrivals (ms after the click): " + ", ".join(
        f"{t:.0f} {element or kind}" for t, (_n, kind, element) in zip(times, frames)))
    print(f"   files fetched: {len(files)}, {sum(max(f[1], 0) for f in files) / 1024:.0f} KB: " + ", ".join(
        f"{u} {n / 1024:.1f} KB" for u, n in sorted(files, key=lambda f: -f[1])[:10]))
    print("   chromium: " + ", ".join(f"{k.removesuffix('Duration').lower()} {after[k] - before.get(k, 0):.2f} s"
                                      for k in COUNTERS))
    _print_profile(profile, shown)
    elements = page.evaluate("document.querySelectorAll('*').length")
    print(f"   DOM elements: {elements}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None, help="RAGEVAL_HOME (default: a new temporary folder)")
    parser.add_argument("--py-spy", type=Path, default=None, dest="spy",
                        help="also sample the server with py-spy during each step, raw stacks to this folder")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="rageval-browser-bench-"))
    print(f"run {_stored_run(home)} in {home}; load {open('/proc/loadavg').read().split()[:3]}")
    if args.spy:
        args.spy.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with streamlit_app(home) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1440, "height": 1400}, locale="en-US")
        context.add_init_script(_WS_TIMES)

        def tab() -> tuple[Any, Any, Recorder]:
            page = context.new_page()
            page.set_default_timeout(90_000)
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")
            return page, cdp, Recorder(page)

        page, cdp, rec = tab()
        page.goto(f"{url}/history")
        page.get_by_test_id("stDataFrame").first.wait_for()
        page.wait_for_timeout(1500)  # History settled, the run read ahead
        step(page, cdp, rec, "first open from History's sidebar", spy=args.spy, at_load=False,
             action=lambda: page.get_by_test_id("stSidebarNav").get_by_text("Compare", exact=True).click())
        fresh, fresh_cdp, fresh_rec = tab()
        fresh.add_init_script(f"({SHOWN})({json.dumps([*FIRST_TAB, '1000', True])})")
        step(fresh, fresh_cdp, fresh_rec, "new tab on /compare", spy=args.spy, at_load=True,
             action=lambda: fresh.goto(f"{url}/compare"))
        nav = fresh.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
        print(f"   navigation: DOMContentLoaded {nav['domContentLoadedEventEnd']:.0f} ms, load {nav['loadEventEnd']:.0f} ms")
        browser.close()


if __name__ == "__main__":
    main()
