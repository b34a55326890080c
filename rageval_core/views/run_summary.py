"""A stored run as the Compare, Inspect and History pages read it: the results frame without details, the
call log summed per method, one row's full results, each read by ``store.page_reads`` and the first two cached
per run.

The pages rerun on every click, and a 1,000-row run holds about 10,000 results whose details (claims,
verdicts, prompts and responses) are most of the database. Everything here except one row's results reads
the narrow copies of ``rageval_core.store.light_tables`` (no details, prompts or responses), orders and joins in
SQLite, and keeps what it built per run until the run's results change (``stamp``: status, end time, result
and call counts and last ids), so a rerun of a finished run reads a few integers. The inspector reads one
row's results with details (``row_results``).
"""

from __future__ import annotations

import contextlib
import gc
import operator
import threading
from collections import OrderedDict
from concurrent.futures import Future
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from rageval_core.store import page_reads
from rageval_core.store.call_log import CallEntry
from rageval_core.analysis.compare import RESULT_COLUMNS, results_frame
from rageval_core.run.persist import stream_cost
from rageval_core.store.runs import RunInfo, Store
from rageval_core.core.types import MetricResult, Usage

T = TypeVar("T")
CACHED_RUNS = 8  # runs kept per process (a 10,000-row run's light results are about 100 MB of objects at most)

# What the pages read of a run (``PAGE_COLUMNS``): no page shows a result's reason, tokens, calls, cost or
# latency from the frame (the inspector reads one row's results; costs come from the call log), and those
# columns, the reasons' text above all, were most of reading a large run.
PAGE_COLUMNS = ("sample_id", "category", "metric", "method", "value", "unscored_reason", "provider")


_lock = threading.Lock()
_cache: OrderedDict[tuple[str, str, str], tuple[tuple[Any, ...], Any]] = OrderedDict()
_building: dict[tuple[str, str, str], tuple[tuple[Any, ...], Future[Any]]] = {}


def stamp(store: Store, run_id: str) -> tuple[Any, ...]:
    """What changes whenever the run's stored results or calls do: status, end time, result count, last ids."""
    return page_reads.stamp(store, run_id)


def is_cached(store: Store, run_id: str, what: str, at: tuple[Any, ...]) -> bool:
    """Whether ``cached`` has this value at stamp ``at`` or is building it (a read ahead need not start)."""
    key = (str(store.path), run_id, what)
    with _lock:
        hit, building = _cache.get(key), _building.get(key)
    return (hit is not None and hit[0] == at) or (building is not None and building[0] == at)


def cached(store: Store, run_id: str, what: str, build: Callable[[], T], *, at: tuple[Any, ...] | None = None) -> T:
    """``build()`` for this run, kept until the run's ``stamp`` changes (``what`` names the value; ``at`` is
    the stamp when the caller has just read it: a page asks for a dozen values of the run it loaded).

    Built once per stamp: a caller that finds the value being built by another thread (a read ahead, another
    session) waits for it instead of building it again beside it on the same cores."""
    key = (str(store.path), run_id, what)
    now = stamp(store, run_id) if at is None else at
    while True:
        with _lock:
            hit = _cache.get(key)
            if hit is not None and hit[0] == now:
                _cache.move_to_end(key)
                return hit[1]
            building = _building.get(key)
            if building is None or building[0] != now:
                mine: tuple[tuple[Any, ...], Future[Any]] = (now, Future())
                _building[key] = mine
                break
        try:
            return building[1].result()
        except Exception:  # noqa: BLE001 - that build failed: this caller builds its own (and meets its error)
            continue
    try:
        value = build()
    except BaseException as exc:
        with _lock:
            if _building.get(key) is mine:
                del _building[key]
        mine[1].set_exception(exc)
        raise
    with _lock:
        _cache[key] = (now, value)
        if _building.get(key) is mine:
            del _building[key]
        while len(_cache) > CACHED_RUNS * 32:  # a run's frames, costs, tables, charts and diffs
            _cache.popitem(last=False)
    mine[1].set_result(value)
    return value


def _light(row: Sequence[Any]) -> MetricResult:
    judge = row[16]
    return MetricResult(
        sample_id=row[0], metric=row[1], method=row[2], value=row[3], unscored_reason=row[4], reason=row[5],
        raw_score=row[6], details={"judge": judge} if judge else {}, provider=row[7], model=row[8], calls=row[9],
        cached_calls=row[10], usage=Usage(row[11], row[12], row[13]), cost_usd=row[14], latency_s=row[15],
    )


def light_results(store: Store, run_id: str) -> list[MetricResult]:
    """The run's results (repeat 0, in the order written) with ``details`` cut to the judge id; cached.
    Treat the list as read-only: every page of the process shares it."""
    def build() -> list[MetricResult]:
        return [_light(r) for r in page_reads.light_rows(store, run_id)]

    return cached(store, run_id, "results", build)


def run_frame(store: Store, run_id: str, categories: Mapping[str, str | None],
              columns: Sequence[str] = RESULT_COLUMNS) -> pd.DataFrame:
    """``compare.results_frame`` of the run's results (repeat 0) in dataset order (``categories``' order, the
    run's rows; results of other rows last; each row's results in the order written), ``categories`` mapping
    sample id → category: the same frame, columns and types, built from columns read in SQL, not result objects.
    ``columns`` (a subset of ``RESULT_COLUMNS`` with sample_id, metric and method; the pages pass
    ``PAGE_COLUMNS``) are the only ones read and kept, in ``RESULT_COLUMNS``' order."""
    with _gc_paused():
        return _run_frame(store, run_id, categories, columns)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a frame is built: it makes no cycles, but its allocations set off
    about a hundred collections per 100,000 results (0.08 of 0.5 s measured on a 10,000-row run)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _run_frame(store: Store, run_id: str, categories: Mapping[str, str | None], columns: Sequence[str]) -> pd.DataFrame:
    names = [c for c in RESULT_COLUMNS if c in set(columns) | {"sample_id", "metric", "method"}]
    text = [c for c in page_reads.TEXT_COLUMNS if c in names]
    integer = [c for c in page_reads.INTEGER_COLUMNS if c in names]
    real = [c for c in page_reads.REAL_COLUMNS if c in names]
    texts, real_rows = page_reads.frame_columns(store, run_id, text, integer, real)
    if not texts[0]:
        return results_frame([], categories)[names]
    reals = np.array(real_rows, dtype=float) if real else None  # NULL → NaN
    position = {sid: i for i, sid in enumerate(categories)}
    order = np.argsort([position.get(sid, len(position)) for sid in texts[0]], kind="stable")  # dataset order
    get = operator.itemgetter(*order.tolist())

    def pick(values: Sequence[Any]) -> list[Any]:
        return [values[0]] if len(order) == 1 else list(get(values))

    texts = [pick(values) for values in texts]
    frame: dict[str, Any] = {name: _text_column(values) for name, values in zip(text, texts)}
    frame.update({name: np.array(values, dtype=np.int64) for name, values in zip(integer, texts[len(text):])})
    if reals is not None:
        frame.update({name: reals[order, i] for i, name in enumerate(real)})
    frame["category"] = [categories.get(sid) for sid in texts[0]]
    return pd.DataFrame(frame, columns=names)


def row_categories(store: Store, run_id: str) -> dict[str, str | None]:
    """The run's rows (sample id → stored category) in dataset order."""
    return page_reads.row_categories(store, run_id)


_STR = pd.Series(["x"]).dtype  # the dtype pandas infers for text here (Arrow-backed ``str`` with pyarrow)


def _text_column(values: list[str | None]) -> Any:
    """A text column as ``pd.DataFrame`` would infer it from the values (``str``; ``object`` when all are
    missing), built from an Arrow array when ``str`` is Arrow-backed: inferring it value by value is most of
    building the frame."""
    if all(v is None for v in values):
        return values
    if getattr(_STR, "storage", None) == "pyarrow":
        import pyarrow as pa

        return pd.array(pa.array(values, type=pa.string()), dtype=_STR)
    return pd.array(values, dtype=_STR)


def row_results(store: Store, run_id: str, sample_id: str) -> list[MetricResult]:
    """One row's results with their details (what the inspector shows), in the order written."""
    return page_reads.row_results(store, run_id, sample_id)


def row_calls(store: Store, run_id: str, sample_id: str) -> list[CallEntry]:
    """One row's logged calls (prompts and responses), in the order made."""
    return page_reads.row_calls(store, run_id, sample_id)


def light_calls(store: Store, run_id: str) -> Iterator[dict[str, Any]]:
    """The run's call log in order without prompts or responses, as the dicts the cost tables read. Compare's
    judges view read the full log for its cost table: every prompt and response of the run."""
    return page_reads.light_calls(store, run_id)


def method_costs(store: Store, run_id: str, *, at: tuple[Any, ...] | None = None) -> dict[str, Usage]:
    """``tallies.cost_by_method`` of the run's call log, summed by SQLite (``persist.stream_cost``); cached
    (``at``: the run's ``stamp`` when the caller has just read it, as ``cached`` takes it)."""
    return cached(store, run_id, "costs", lambda: stream_cost(store, run_id), at=at)


def run_b_choices(infos: Sequence[RunInfo], a: RunInfo) -> list[str]:
    """Runs to compare ``a`` with, the default first: the newest other run on the same dataset version, then
    runs on a dataset of the same name (another version), newest first, then every other run."""
    others = sorted((i for i in infos if i.id != a.id), key=lambda i: -i.created_at)
    same = [i.id for i in others if a.dataset_hash and i.dataset_hash == a.dataset_hash]
    named = [i.id for i in others if i.id not in same and a.dataset_name and i.dataset_name == a.dataset_name]
    return same + named + [i.id for i in others if i.id not in same and i.id not in named]
