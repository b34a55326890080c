"""A JSON Lines file evaluated as it is read (``datasets.live`` + ``runner.feed``): the run starts before the
reader reaches the end and reads ahead only a bounded window; the stored identity is the whole file's; a bad
row late in the file is named and the rows before it are saved; a resume repeats no finished task."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.cli import evaluate as evaluate_cli
from rageval_core.data.datasets import load_dataset
from rageval_core.data.datasets.live import LiveDataset, open_live
from rageval_core.scoring.metrics.base import CallEstimate
from rageval_core.run import RunError, feed
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.core.types import MetricResult
from tests.data.test_datasets_streaming import _variants
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

ROW = {"question": "What does item {i} do?", "contexts": ["Item {i} stores the data."], "answer": "Item {i} stores the data."}


def _file(path: Path, n: int, bad: dict[int, object] | None = None) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            row = (bad or {}).get(i) or {"id": f"r{i}", **{k: (v.format(i=i) if isinstance(v, str) else [c.format(i=i) for c in v])
                                                          for k, v in ROW.items()}}
            fh.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


def _as(path: Path, fmt: str) -> Path:
    """The JSON Lines file ``path`` rewritten as ``fmt`` (a JSON array, or CSV with contexts as a JSON list)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    target = path.with_suffix("." + fmt)
    if fmt == "json":
        target.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    elif fmt == "csv":
        import csv

        with target.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["id", "question", "contexts", "answer"])
            for r in rows:
                writer.writerow([r.get("id"), r.get("question"), json.dumps(r.get("contexts")), r.get("answer")])
    else:
        return path
    return target


def _live(path: Path) -> LiveDataset:
    opened = open_live(path, min_bytes=0)
    assert isinstance(opened, LiveDataset)
    return opened


class Recorder:
    """Records, for every row it scores, how many rows the reader had read by then; can cancel the run."""

    method = "decomposed"

    def __init__(self, live: LiveDataset | None = None, cancel_after: int | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.name, self.metrics = "faithfulness", ("faithfulness",)
        self.live, self.cancel_after, self.cancel = live, cancel_after, cancel
        self.scored: list[str] = []
        self.read_when_scored: list[int] = []
        self.done_when_first: bool | None = None
        self._lock = threading.Lock()

    def score(self, sample, ctx):
        with self._lock:
            if self.live is not None:
                if self.done_when_first is None:
                    self.done_when_first = self.live.done
                self.read_when_scored.append(self.live.total_rows - len(self.scored))
            self.scored.append(sample.id)
            if self.cancel_after is not None and len(self.scored) >= self.cancel_after and self.cancel is not None:
                self.cancel.set()
        return [MetricResult(sample.id, self.name, self.method, 1.0)]

    def estimate(self, sample):
        return CallEstimate(llm_calls=0)


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_a_run_starts_before_the_reader_reaches_the_end_and_reads_ahead_a_bounded_window(tmp_path: Path, fmt: str,
                                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed, "HEAD_ROWS", 20)
    path = _as(_file(tmp_path / "rows.jsonl", 600), fmt)
    live = _live(path)
    scorer = Recorder(live)
    reads: list[int] = []
    seen: list = []
    store = Store(tmp_path / "r.sqlite")
    result = run_rows(live, [scorer], ScriptedLLM(), HashEmbedder(), store=store, concurrency=2, workers=4, on_read=reads.append,
                 progress=seen.append)
    assert not seen[0].total_known and seen[0].total == 600 and seen[-1].total_known  # the file's rows, then exact
    assert scorer.done_when_first is False  # the first task ran while most of the file was unread
    assert result.done_tasks == result.total_tasks == 600 and sorted(scorer.scored) == sorted(f"r{i}" for i in range(600))
    # rows read but not yet scored: the first rows plus the loop's window (2 × workers), never the file
    assert max(scorer.read_when_scored) <= 20 + 2 * 4 + 4
    assert reads[-1] == 600
    info = store.get_run(result.run_id)
    assert info.dataset_hash == load_dataset(path).content_hash  # the identity a whole read gives
    assert info.n_rows == 600 and info.settings["data_sha256"] == live.sha256
    assert [r.sample_id for r in store.rows(result.run_id)][:3] == ["r0", "r1", "r2"]


def test_a_bad_row_late_in_the_file_is_named_and_the_rows_before_it_are_saved(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed, "HEAD_ROWS", 10)
    path = _file(tmp_path / "rows.jsonl", 200, bad={180: {"id": "late", "question": "q", "contexts": 7, "answer": "a"}})
    live = _live(path)
    store = Store(tmp_path / "r.sqlite")
    from rageval_core.cli.dataset_report import invalid_rows

    result = run_rows(live, [Recorder()], ScriptedLLM(), HashEmbedder(), store=store, concurrency=2, workers=4,
                 invalid_rows=lambda: invalid_rows(live), late_settings=lambda: {"dataset_issues": [i.to_dict() for i in live.issues]})
    assert result.done_tasks == 199
    assert [(r.sample_id, r.position) for r in result.invalid_rows] == [("row 181", 199)]
    assert "contexts" in result.invalid_rows[0].error
    assert [(i.file, i.row, i.field) for i in live.errors] == [("rows.jsonl", 181, "contexts")]
    saved = {r.sample_id for r in store.results(result.run_id)}
    assert {f"r{i}" for i in range(180)} <= saved
    issues = store.get_run(result.run_id).settings["dataset_issues"]
    assert [(i["row"], i["field"]) for i in issues] == [(181, "contexts")]


def test_a_resume_after_a_partial_streamed_run_repeats_no_finished_task(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed, "HEAD_ROWS", 10)
    path = _file(tmp_path / "rows.jsonl", 300)
    store = Store(tmp_path / "r.sqlite")
    cancel = threading.Event()
    first = Recorder(cancel_after=40, cancel=cancel)
    live = _live(path)
    stopped = run_rows(live, [first], ScriptedLLM(), HashEmbedder(), store=store, concurrency=2, workers=4, cancel=cancel)
    assert stopped.status == "cancelled" and not live.done
    info = store.get_run(stopped.run_id)
    assert info.dataset_hash is None and 40 <= info.n_rows < 300  # the identity is written once the file is read
    saved = {r.sample_id for r in store.results(stopped.run_id)}
    second = Recorder()
    resumed = run_rows(_live(path), [second], ScriptedLLM(), HashEmbedder(), store=store, concurrency=2, workers=4,
                  run_id=stopped.run_id, resume=True)
    assert resumed.status == "done" and resumed.done_tasks == 300 and resumed.skipped_tasks == len(saved)
    assert not saved & set(second.scored) and saved | set(second.scored) == {f"r{i}" for i in range(300)}
    done = store.get_run(stopped.run_id)
    assert done.dataset_hash == load_dataset(path).content_hash and done.n_rows == 300
    assert [r.position for r in store.rows(stopped.run_id)] == list(range(300))


def test_a_resume_refuses_another_file(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite")
    made = run_rows(_live(_file(tmp_path / "a.jsonl", 30)), [Recorder()], ScriptedLLM(), HashEmbedder(), store=store)
    other = _file(tmp_path / "b.jsonl", 31)
    with pytest.raises(RunError, match="different dataset file"):
        run_rows(_live(other), [Recorder()], ScriptedLLM(), HashEmbedder(), store=store, run_id=made.run_id, resume=True)


def test_a_file_not_utf8_past_its_head_is_refused_before_the_run(tmp_path: Path) -> None:
    late = tmp_path / "late.jsonl"
    long_row = {**ROW, "contexts": ["x" * 70_000]}
    late.write_bytes(json.dumps(long_row).encode() + b"\n" + json.dumps({**ROW, "answer": "caf\xe9"}, ensure_ascii=False).encode("latin-1") + b"\n")
    refused = open_live(late, min_bytes=0, whole_bytes=10)  # too large to be read whole
    assert not isinstance(refused, LiveDataset) and refused is not None
    assert refused.file_errors[0].message == load_dataset(late, max_bytes=10).file_errors[0].message
    assert "line 2 is not UTF-8 text" in refused.file_errors[0].message
    assert open_live(late, min_bytes=0) is None  # small enough for the whole read, which decodes other encodings


def test_the_cli_evaluates_a_file_as_it_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(evaluate_cli, "LIVE_MIN_BYTES", 0)
    monkeypatch.setattr(feed, "HEAD_ROWS", 5)
    path = _file(tmp_path / "rows.jsonl", 24, bad={20: {"id": "nq", "answer": "a"}})
    out = tmp_path / "out.csv"
    args = ["evaluate", str(path), "--provider", "offline", "--metrics", "faithfulness", "--out", str(out), "--quiet"]
    assert cli.main(args) == 0
    err = capsys.readouterr().err
    assert "from the first 5 rows, scaled to the file's 24 rows" in err
    assert "row 21: question: missing question" in err and "23 evaluated (of 24 rows)" in err
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[1].startswith("r0,") and "What does item 0 do?" in lines[1]  # texts read back from the file
    assert lines[-1].startswith("row 21,")
    assert cli.main(args + ["--strict"]) == 2


BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


@pytest.mark.parametrize("path", sorted(p for p in BAD.iterdir() if p.suffix in (".json", ".jsonl", ".csv")), ids=lambda p: p.name)
def test_a_file_read_as_it_goes_gives_the_rows_issues_and_hash_of_a_whole_read(path: Path) -> None:
    live = open_live(path, min_bytes=0)
    if not isinstance(live, LiveDataset):
        return  # not read this way (a JSON document that is not one valid array, not UTF-8, empty): read whole
    whole = load_dataset(path)
    assert list(live) == whole.samples and live.done
    assert [str(i) for i in live.issues] == [str(i) for i in whole.issues]
    assert (live.content_hash, live.total_rows, live.format) == (whole.content_hash, whole.total_rows, whole.format)


def test_a_json_array_read_as_it_goes_matches_the_whole_read_row_for_row(tmp_path: Path) -> None:
    rows = _variants() + ["not an object", 7, None, {"id": "x", "question": "q", "contexts": ["c"], "answer": "a",
                                                      "score": float("nan"), "big": 10 ** 30}]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")  # a lone surrogate is escaped
    live = open_live(path, min_bytes=0)
    assert isinstance(live, LiveDataset) and live.expected_rows == len(rows)
    whole = load_dataset(path)
    assert list(live) == whole.samples and len(whole.samples) > 20 and whole.errors
    assert [str(i) for i in live.issues] == [str(i) for i in whole.issues]
    assert live.content_hash == whole.content_hash
    for other in ('{"rows": [' + json.dumps(ROW) + "]}", "[" + json.dumps(ROW) + ",]", "[]"):
        path.write_text(other, encoding="utf-8")
        assert open_live(path, min_bytes=0) is None  # a wrapper object, a syntax error, no rows: the whole read says


def test_a_run_made_from_a_whole_read_resumes_from_the_file_read_as_it_goes(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed, "HEAD_ROWS", 10)
    path = _file(tmp_path / "rows.jsonl", 120)
    whole = load_dataset(path)
    store = Store(tmp_path / "r.sqlite")
    cancel = threading.Event()
    stopped = run_rows(whole.samples, [Recorder(cancel_after=30, cancel=cancel)], ScriptedLLM(), HashEmbedder(), store=store,
                  concurrency=2, workers=4, cancel=cancel, dataset_digest=whole.content_hash)
    assert stopped.status == "cancelled" and "data_sha256" not in store.get_run(stopped.run_id).settings
    saved = {r.sample_id for r in store.results(stopped.run_id)}
    changed = _file(tmp_path / "other.jsonl", 121)
    with pytest.raises(RunError, match="different dataset"):  # no file hash stored: the file is read once for its hash
        run_rows(_live(changed), [Recorder()], ScriptedLLM(), HashEmbedder(), store=store, run_id=stopped.run_id, resume=True)
    second = Recorder()
    resumed = run_rows(_live(path), [second], ScriptedLLM(), HashEmbedder(), store=store, concurrency=2, workers=4,
                  run_id=stopped.run_id, resume=True)
    assert resumed.status == "done" and not saved & set(second.scored) and len(saved) + len(second.scored) == 120
    assert store.get_run(stopped.run_id).dataset_hash == whole.content_hash


def test_the_progress_line_marks_a_total_taken_from_the_file_s_rows() -> None:
    import io

    from rageval_core.cli.common import ProgressBar
    from rageval_core.core.types import Usage
    from rageval_core.run import Progress

    stream = io.StringIO()
    bar = ProgressBar(stream)
    bar(Progress(done=0, total=500, usage=Usage(), elapsed_s=0.0, eta_s=None, total_known=False))
    bar(Progress(done=495, total=495, usage=Usage(), elapsed_s=1.0, eta_s=0.0))
    first, last = stream.getvalue().splitlines()
    assert "0/~500 tasks" in first and "495/495 tasks" in last
