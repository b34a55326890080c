"""``trust --repeats / --probes / --fail-on-probe`` and ``evaluate --repeats`` end to end on the offline provider.

The offline heuristic is whatever it is today (another change may harden it against the context-quote
injection), so these tests check that every probe runs, every shift is printed with its interval, the JSON and
the export carry them, and the exit code follows the flags — not the heuristic's particular shifts (those are
checked exactly with a scripted judge in test_trust_checks.py).
"""

import json

import pytest

from rageval_core import cli
from rageval_core.analysis.export import run_to_dict
from rageval_core.store.runs import Store
from tests.support.trust_cli import ROOT, run_id_of as _run_id

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"
PICK = ("t01", "t03", "t01-en")  # a faithful row, an unfaithful one, and t01's English parallel row


@pytest.fixture()
def small(home):
    rows = [line for line in LABELLED.read_text(encoding="utf-8").splitlines() if json.loads(line)["id"] in PICK]
    path = home / "small.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _shown(value, low, high):
    return f"{value:+.3f} [{low:+.3f}, {high:+.3f}]"


def test_trust_probes_on_the_offline_provider_print_every_shift_with_its_interval(small, home, capsys):
    code = cli.main(["trust", str(small), "--metrics", "faithfulness", "--judge", "rubric5", "--probes", "all",
                     "--iterations", "200", "--fail-on-probe", "--out", "trust.json", "--quiet"])
    out = capsys.readouterr().out
    data = json.loads((home / "trust.json").read_text(encoding="utf-8"))
    probes = data["sections"]["probes"]
    assert [p["probe"] for p in probes["probes"]] == ["verbosity", "order", "answer_injection", "context_injection", "language"]
    assert "deterministic" in probes["note"]
    by = {p["probe"]: p for p in probes["probes"]}
    assert by["verbosity"]["n_cases"] == 2 and by["verbosity"]["skipped"] == {"not a correct answer": 1}
    assert by["language"]["n_cases"] == 1 and by["language"]["skipped"] == {"no parallel row": 1}  # t01 ↔ t01-en, once
    assert by["order"]["n_cases"] == 3
    for p in probes["probes"]:
        assert f"probe {p['probe']}: " in out
        assert {(s["metric"], s["method"]) for s in p["shifts"]} >= {("faithfulness", "decomposed"), ("faithfulness", "judge:rubric5")}
        for s in p["shifts"]:
            assert s["n"] >= 1 and s["low"] <= s["mean_shift"] <= s["high"]
            assert _shown(s["mean_shift"], s["low"], s["high"]) in out
    # The exit code follows the flags, whatever the heuristic does.
    assert code == (1 if probes["flagged"] else 0)
    assert ("flagged probes: " in out) == bool(probes["flagged"])
    # The run's export carries the probes in its trust block; each probe is its own tagged run.
    store = Store()
    exported = run_to_dict(store, _run_id(out))
    assert exported["trust"]["sections"]["probes"] == probes
    assert store.find_run(by["order"]["run_id"]).settings["probe"] == "order"


def test_trust_repeats_on_offline_report_zero_spread_and_say_why(small, home, capsys):
    assert cli.main(["trust", str(small), "--metrics", "faithfulness", "--repeats", "2", "--aggregate", "majority", "--iterations", "100", "--out", "t.json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "repeat stability (2 repeats, aggregate majority" in out and "0 by construction" in out
    assert "no row moved between repeats (deterministic provider)" in out
    stab = json.loads((home / "t.json").read_text(encoding="utf-8"))["sections"]["stability"]
    assert stab["repeats"] == 2 and stab["deterministic"]
    for m in stab["metrics"]:
        assert m["mean_sd"] == 0 and m["rows_flipping"] == 0 and m["repeat_means"][0] == m["repeat_means"][1]
        assert m["low"] == m["high"] == m["mean"]
    run_id = _run_id(out)
    assert sorted(Store().results_by_repeat(run_id)) == [0, 1]
    # A run without repeats cannot report more than it has.
    assert cli.main(["trust", str(small), "--metrics", "faithfulness", "--quiet"]) == 0
    single = _run_id(capsys.readouterr().out)
    assert cli.main(["trust", single, "--repeats", "3"]) == 2
    assert "has 1 repeat(s)" in capsys.readouterr().err


def test_evaluate_with_repeats_prints_stability_and_exports_repeat_zero(small, home, capsys):
    assert cli.main(["evaluate", str(small), "--provider", "offline", "--metrics", "faithfulness", "--repeats", "2",
                     "--out", "r.json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "repeat stability (2 repeats, aggregate mean" in out
    data = json.loads((home / "r.json").read_text(encoding="utf-8"))
    assert [row["id"] for row in data["rows"]] == list(PICK)
    assert all(len(row["results"]) == 1 for row in data["rows"])  # repeat 0 only, as without repeats
    stab = data["stability"]
    assert stab["repeats"] == 2 and [r["row_id"] for r in stab["rows"]] == list(PICK)
    assert all(r["values"][0] == r["values"][1] for r in stab["rows"])  # offline: deterministic


def test_probe_flags_are_checked(small, capsys):
    assert cli.main(["trust", str(small), "--probes", "nonsense"]) == 2  # refused before anything runs
    assert "unknown probe" in capsys.readouterr().err
    assert cli.main(["trust", str(small), "--metrics", "faithfulness", "--fail-on-probe", "--quiet"]) == 2
    assert "--fail-on-probe needs --probes" in capsys.readouterr().err
