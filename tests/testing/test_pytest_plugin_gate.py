"""Issue 36, item 5, with pytester: a misspelt provider is a usage error (every test needing a judge fails with the
message; pytest exits non-zero), no judge chosen is a skip on a laptop and a failure under --rageval-require /
RAGEVAL_REQUIRE_JUDGE=1, and the session ends with a summary of what was judged and what was skipped, and why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rageval_core.store.runs import Store

pytest_plugins = ["pytester"]
PLUGIN = "rageval_core.testing.plugin"
ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "RAGEVAL_PROVIDER", "RAGEVAL_MODEL", "RAGEVAL_REQUIRE_JUDGE",
       "PYTEST_ADDOPTS")
SUITE = '''
import pytest

ROWS = [{"id": "a", "question": "What is overfitting?",
         "contexts": ["Overfitting is when a model fits the noise in its training data and does worse on new data."],
         "answer": "Overfitting is when a model fits the noise in its training data."},
        {"id": "b", "question": "What is dropout?",
         "contexts": ["Dropout switches off random units during training, which regularises the network."],
         "answer": "Dropout was invented in 1850 by a French baker."}]


@pytest.mark.rageval
def test_faithful_on_average(rageval):
    rageval.assert_scores(ROWS, {"faithfulness": 0.4})


def test_every_row_faithful(rageval):
    rageval.assert_scores(ROWS, {"faithfulness": 0.9}, mode="each")


def test_no_judge_needed():
    assert 1 + 1 == 2
'''


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.Pytester:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def _run(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest_inprocess("-p", PLUGIN, "-p", "no:cacheprovider", "-rs", *args)


@pytest.mark.parametrize(("how", "args", "env"), [
    ("--rageval-provider", ("--rageval-provider", "nonexistent"), {}),
    ("RAGEVAL_PROVIDER", (), {"RAGEVAL_PROVIDER": "offlne"}),
])
def test_a_misspelt_provider_fails_every_test_needing_a_judge(suite, monkeypatch, how, args, env) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = _run(suite, *args)
    name = args[1] if args else env["RAGEVAL_PROVIDER"]
    message = f"usage error: {how} names provider '{name}', which does not exist (known: offline, gemini, openai"
    result.assert_outcomes(passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.stdout.str().count(message) >= 4  # each test's error, the header and the summary
    result.stdout.fnmatch_lines(["*rageval summary*", "failed 2 test(s) before scoring: usage error:*"])


def test_no_judge_chosen_skips_with_the_reason_and_the_summary_says_so(suite) -> None:
    result = _run(suite)
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*rageval summary*", "tests scored: 0 *skipped: 2*",
                                 "skipped 2 test(s): no judge chosen: pass --rageval-provider offline*"])


@pytest.mark.parametrize("require", [("--rageval-require",), ()])
def test_ci_makes_no_judge_a_failure(suite, monkeypatch, require) -> None:
    if not require:
        monkeypatch.setenv("RAGEVAL_REQUIRE_JUDGE", "1")
    result = _run(suite, *require)
    result.assert_outcomes(passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*no judge chosen: pass --rageval-provider offline*a judge is required*"])


def test_a_named_provider_without_its_key_fails_rather_than_skips(suite) -> None:
    result = _run(suite, "--rageval-provider", "gemini")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*judge gemini/default model (--rageval-provider) cannot run:*GEMINI_API_KEY*"])


def test_the_summary_names_tests_metrics_means_thresholds_results_and_run_ids(suite) -> None:
    result = _run(suite, "--rageval-provider", "offline")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    summary = out[out.index("rageval summary"):]
    assert "judge: offline/default model (--rageval-provider)" in summary
    assert "tests scored: 2 (1 passed, 1 failed) · skipped: 0 · failed before scoring: 0" in summary
    lines = {line.split()[0]: line.split() for line in summary.splitlines() if line.startswith("test_suite.py::")}
    mean_line, each_line = lines["test_suite.py::test_faithful_on_average"], lines["test_suite.py::test_every_row_faithful"]
    assert mean_line[2:5] == ["faithfulness", "decomposed", "2"] and mean_line[-3:] == ["0.4", "(mean)", "pass"]
    assert each_line[-3:] == ["0.9", "(each)", "FAIL"]
    assert re.fullmatch(r"0\.\d{3}", mean_line[5]) and mean_line[5] == each_line[5]
    store = Store()
    assert {store.get_run(mean_line[1]).n_rows, store.get_run(each_line[1]).n_rows} == {2}  # the run ids are real
