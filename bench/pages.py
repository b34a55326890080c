"""Page load times on large runs: Compare, History and Inspect over a 1,000- and a 10,000-row run.

A 100-row offline run (seed-size rows, all six metrics + rubric5) is evaluated in a temp state dir and
cloned in SQL (``bench/big_run.py``) into a 1,000-row run A, a later copy B of it (same dataset),
the same pair at 10,000 rows, and last an unrelated 12-row run on the sample data. Each page is opened in a
fresh AppTest session (app.py, then the page) with run A selected: "first" is the first open of the run in
this process (it reads the run from SQLite), "again" a rerun of the same page (a click). Compare opens on its
first tab (its tabs run only when open); then its Row by row and Run A vs run B tabs are opened, each timed.
Also checked: in a fresh session Compare's run B is the latest other run on A's dataset, not the newest run.

    python bench/pages.py [--template-rows 100] [--sizes 1000 10000]

Last line: ``compare_1000_s=<a> compare_rows_1000_s=… compare_runs_1000_s=… history_1000_s=<b> inspect_1000_s=<c>``,
the same for 10,000 rows, then ``run_b_default_ok=<0|1>`` (first opens).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.rows import soak_rows  # noqa: E402
from rageval_ui.state import COMPARE_TAB  # noqa: E402

PAGES = {"compare": "rageval_ui/app_pages/compare.py", "history": "rageval_ui/app_pages/history.py", "inspect": "rageval_ui/app_pages/inspect_sample.py"}


def _build(home: Path, template_rows: int, sizes: list[int]) -> dict[int, tuple[str, str]]:
    """Run A and B per size, and the unrelated run created last; returns {size: (a, b)}."""
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.session.for_run import build_and_run
    from rageval_core.run import RunSpec
    from rageval_core.store.runs import Store
    from rageval_core.core.types import METRIC_IDS
    from bench.big_run import clone_run

    data = home / "rows.json"
    data.write_text(json.dumps(soak_rows(template_rows), ensure_ascii=False), encoding="utf-8")
    ds = load_dataset(data)
    scorers = [*build_scorers(METRIC_IDS), JudgeScorer("rubric5")]
    started = time.perf_counter()
    template = build_and_run(RunSpec(ds.samples, scorers, provider=ProviderConfig(), dataset_name=ds.name,
                                     dataset_digest=ds.content_hash), Store())
    print(f"template: {template_rows} rows evaluated offline in {time.perf_counter() - started:.1f} s", flush=True)
    store = Store()
    out: dict[int, tuple[str, str]] = {}
    now = time.time()
    for i, size in enumerate(sizes):
        copies = max(1, size // template_rows)
        digest = f"bench-{size}"
        a = clone_run(store, template.run_id, copies, dataset_hash=digest, dataset_name=f"bench_{size}", created_at=now + 3 * i)
        b = clone_run(store, template.run_id, copies, dataset_hash=digest, dataset_name=f"bench_{size}", created_at=now + 3 * i + 1)
        out[size] = (a, b)
    seed = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
    build_and_run(RunSpec(seed.samples, build_scorers(["faithfulness"]), provider=ProviderConfig(), dataset_name=seed.name,
                          dataset_digest=seed.content_hash), store)  # the newest run, on other data
    store.delete_run(template.run_id)
    return out


def _open(page: str, run_id: str) -> tuple[float, float, object]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["selected_run"] = run_id
    at.run()
    started = time.perf_counter()
    at.switch_page(PAGES[page]).run()
    first = time.perf_counter() - started
    assert not at.exception, [e.value for e in at.exception]
    started = time.perf_counter()
    at.run()
    again = time.perf_counter() - started
    return first, again, at


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template-rows", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--home", type=Path, default=None, help="the state dir to build the runs in (default: a new temp dir)")
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="rageval-pages-"))
    os.environ["RAGEVAL_HOME"] = str(home)
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        os.environ.pop(name, None)
    runs = _build(home, args.template_rows, args.sizes)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC")
    print(f"{'rows':>6} {'page':<8} {'first s':>8} {'again s':>8}")
    figures: dict[str, str] = {}
    b_ok = True
    for size, (a, b) in runs.items():
        for page in PAGES:
            first, again, at = _open(page, a)
            print(f"{size:>6} {page:<8} {first:>8.2f} {again:>8.2f}", flush=True)
            figures[f"{page}_{size}_s"] = f"{first:.2f}"
            if page == "compare":  # its other tabs run when opened: each click on one, timed
                for tab, label in (("rows", "Row by row"), ("runs", "Run A vs run B")):
                    at.session_state[COMPARE_TAB] = label
                    started = time.perf_counter()
                    at.run()
                    figures[f"compare_{tab}_{size}_s"] = f"{time.perf_counter() - started:.2f}"
                    print(f"{size:>6} {'  ' + tab:<8} {figures[f'compare_{tab}_{size}_s']:>8} (Compare's {label} tab opened)")
                picked = at.session_state["compare.run_b"]
                b_ok = b_ok and picked == b
                print(f"       run B in a fresh session: {picked} ({'the latest other run on the dataset' if picked == b else 'WRONG, expected ' + b})")
    print(" ".join(f"{k}={v}" for k, v in figures.items()) + f" run_b_default_ok={int(b_ok)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
