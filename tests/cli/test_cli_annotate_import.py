"""Issue 36, item 4: ``annotate RUN --import FILE`` never changes a label silently. A value that is not a label
refuses the file naming each row (or, with --skip-bad-labels, skips those rows naming them); a column mixing 0/1
with 2-5 is refused, never re-read as a 1-5 scale; duplicates and conflicts are reported with the value kept;
unknown row ids are named as such; a file naming no annotator says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from tests.support.runs import run_rows

ROOT = Path(__file__).resolve().parents[2]
IDS = [f"t{n:02d}" for n in range(1, 13)]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
    rows = [s for s in ds.samples if s.id in IDS]
    done = run_rows(rows, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name,
                    dataset_digest=ds.content_hash)
    return {"id": done.run_id, "hash": ds.content_hash, "dir": tmp_path}


def _file(run: dict[str, Any], records: list[dict[str, Any]], name: str = "labels.jsonl") -> str:
    path = run["dir"] / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return str(path)


def _import(run: dict[str, Any], path: str, *extra: str) -> int:
    return cli.main(["annotate", run["id"], "--import", path, *extra])


def _stored(run: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``{row: {annotator: label}}`` of faithfulness as stored."""
    return {row: crits.get("faithfulness", {}) for row, crits in Store().annotator_labels(run["hash"]).items()}


@pytest.mark.parametrize("fails", [0, 1])
def test_one_2_in_a_0_1_column_refuses_the_file_instead_of_turning_ten_passes_into_fails(run, capsys, fails) -> None:
    records = [{"id": rid, "annotator": "aiko", "label_faithful": 1} for rid in IDS[:10]]
    records += [{"id": IDS[10], "annotator": "aiko", "label_faithful": 2}]
    records += [{"id": IDS[11], "annotator": "aiko", "label_faithful": 0}] * fails
    assert _import(run, _file(run, records)) == 2
    err = capsys.readouterr().err
    if fails:
        assert f"column label_faithful mixes 0/1 ({IDS[11]}=0) with 2–5 ({IDS[10]}=2)" in err
    else:
        assert f"column label_faithful holds 1 ({IDS[0]}=1, " in err and f"only one value from 2–5 ({IDS[10]}=2)" in err
    assert "nothing imported: a label column is neither 0/1 nor 1–5 throughout" in err
    assert _stored(run) == {}


def test_values_that_are_not_labels_are_named_row_by_row_and_nothing_is_stored(run, capsys) -> None:
    bad = {IDS[0]: 0.5, IDS[1]: -1, IDS[2]: "NaN", IDS[3]: [1], IDS[4]: "maybe", IDS[5]: 7}
    good = {IDS[6]: True, IDS[7]: "yes", IDS[8]: "pass", IDS[9]: "false", IDS[10]: 0, IDS[11]: "1"}
    path = _file(run, [{"id": rid, "annotator": "aiko", "label_faithful": v} for rid, v in {**bad, **good}.items()])
    assert _import(run, path) == 2
    err = capsys.readouterr().err
    for n, (rid, value) in enumerate(bad.items(), 1):
        shown = repr(value) if isinstance(value, str) else value
        assert f"row {rid} (record {n}): label_faithful = {shown} is not a label" in err
    assert "6 value(s) are not labels (listed above); nothing imported" in err
    assert _stored(run) == {}
    assert _import(run, path, "--skip-bad-labels") == 0
    captured = capsys.readouterr()
    assert f"row {IDS[2]} (record 3): label_faithful = 'NaN' is not a label" in captured.err
    assert "6 value(s) that are not labels skipped" in captured.err
    assert "imported 6 label(s) from 1 annotator(s)" in captured.out
    stored = _stored(run)
    assert {rid: stored[rid]["aiko"] for rid in good} == {IDS[6]: 1.0, IDS[7]: 1.0, IDS[8]: 1.0, IDS[9]: 0.0,
                                                          IDS[10]: 0.0, IDS[11]: 1.0}
    assert not set(bad) & set(stored)


def test_a_whole_column_on_the_1_to_5_scale_is_a_rating(run, capsys) -> None:
    ratings = dict(zip(IDS[:6], [5, 4, 3, 2, 1, 4]))
    assert _import(run, _file(run, [{"id": r, "annotator": "ben", "label_faithful": v} for r, v in ratings.items()])) == 0
    capsys.readouterr()
    assert {r: v["ben"] for r, v in _stored(run).items()} == dict(zip(IDS[:6], [1.0, 1.0, 0.0, 0.0, 0.0, 1.0]))


def test_duplicates_and_conflicts_are_reported_with_the_value_kept(run, capsys) -> None:
    records = [
        {"id": IDS[0], "annotator": "aiko", "label_faithful": 1},
        {"id": IDS[0], "annotator": "aiko", "label_faithful": 1},  # a duplicate
        {"id": IDS[1], "annotator": "aiko", "label_faithful": 1},
        {"id": IDS[1], "annotator": "aiko", "label_faithful": 0},  # a conflict: the last is kept
        {"id": IDS[2], "label_faithful": 1, "label_faithful@ben": 0},  # a plain label against ben's
        {"id": IDS[3], "annotator": "ben", "label_faithful": 0, "label_faithful@ben": 1},  # ben twice in one row
    ]
    assert _import(run, _file(run, records)) == 0
    captured = capsys.readouterr()
    assert (f"row {IDS[0]} (record 1, 2): aiko labels faithfulness more than once "
            "(label_faithful=1, label_faithful=1); kept 1") in captured.err
    assert (f"row {IDS[1]} (record 3, 4): aiko labels faithfulness both ways "
            "(label_faithful=1, label_faithful=0); kept 0, the last in the file") in captured.err
    assert (f"row {IDS[2]} (record 5, 5): faithfulness: a label naming nobody (label_faithful=1) disagrees with "
            "ben's 0") in captured.err
    assert f"row {IDS[3]} (record 6, 6): ben labels faithfulness both ways" in captured.err
    assert "1 label(s) name no annotator and are not imported" in captured.err
    stored = _stored(run)
    assert stored[IDS[0]] == {"aiko": 1.0} and stored[IDS[1]] == {"aiko": 0.0}
    assert stored[IDS[2]] == {"ben": 0.0} and stored[IDS[3]] == {"ben": 1.0}


def test_unknown_row_ids_are_named_as_such(run, capsys) -> None:
    path = _file(run, [{"id": rid, "annotator": "aiko", "label_faithful": 1} for rid in ("x1", "x2")])
    assert _import(run, path) == 2
    err = capsys.readouterr().err
    assert f"none of the 2 labelled row id(s) are rows of run {run['id']}: x1, x2" in err
    assert "no label names an annotator" not in err
    path = _file(run, [{"id": rid, "annotator": "aiko", "label_faithful": 1} for rid in ("x1", IDS[0])])
    assert _import(run, path) == 0
    captured = capsys.readouterr()
    assert f"1 labelled row id(s) are not rows of run {run['id']} and are skipped: x1" in captured.err
    assert "imported 1 label(s) from 1 annotator(s)" in captured.out


def test_a_file_naming_no_annotator_says_so(run, capsys) -> None:
    assert _import(run, _file(run, [{"id": rid, "label_faithful": 1} for rid in IDS[:3]])) == 2
    assert "no label names an annotator (an annotator column, or label_x@name columns); 3 label(s) name nobody" \
        in capsys.readouterr().err


def test_annotate_help_says_what_a_label_is() -> None:
    from rageval_core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    text = sub.choices["annotate"].format_help()
    assert "--skip-bad-labels" in text and "pass/fail" in text


def test_trust_with_a_labels_file_names_the_values_it_cannot_use(run, capsys) -> None:
    path = _file(run, [{"id": IDS[0], "label_faithful": 1}, {"id": IDS[1], "label_faithful": 0.5}])
    assert cli.main(["trust", run["id"], "--labels", path, "--iterations", "50"]) == 0
    assert (f"--labels {path}: row {IDS[1]} (record 2): label_faithful = 0.5 is not a label (0/1, true/false, "
            "pass/fail, or a whole column on the 1–5 scale); not used") in capsys.readouterr().err
