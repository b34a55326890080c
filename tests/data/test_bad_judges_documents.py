"""Hostile judge files (tests/data/bad/judges) and documents (tests/data/bad/documents), outcomes in each folder's
manifest.json: through the CLI in process, the documented exit code and a message naming the file (and the
judge or key), no traceback, nothing run from a YAML tag, nothing huge read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.documents import MAX_DOCUMENT_BYTES
from rageval_core.scoring.judges.config import MAX_JUDGES_BYTES

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
ROOT = Path(__file__).resolve().parents[2]
JUDGES = json.loads((BAD / "judges" / "manifest.json").read_text(encoding="utf-8"))["files"]
DOCUMENTS = json.loads((BAD / "documents" / "manifest.json").read_text(encoding="utf-8"))["files"]


def _judges(path: Path, out: Path) -> int:
    return cli.main(["evaluate", str(ROOT / "sample_data" / "ml_qa_en.json"), "--provider", "offline",
                     "--judges", str(path), "--out", str(out), "--quiet"])


def _synth(path: Path, out: Path) -> int:
    return cli.main(["synth", str(path), "--provider", "offline", "--out", str(out), "--quiet"])


@pytest.mark.parametrize("folder", ["judges", "documents"])
def test_each_manifest_covers_its_folder(folder: str) -> None:
    entries = JUDGES if folder == "judges" else DOCUMENTS
    assert {p.name for p in (BAD / folder).iterdir()} - {"manifest.json"} == {e["file"] for e in entries}


@pytest.mark.parametrize("entry", JUDGES, ids=[e["file"] for e in JUDGES])
def test_a_hostile_judges_file_is_refused_with_its_message(entry: dict, home: Path, capsys) -> None:
    out = home / "out.json"
    assert _judges(BAD / "judges" / entry["file"], out) == entry["exit"]
    err = capsys.readouterr().err
    assert "Traceback" not in err and not out.exists()
    assert f"--judges: {BAD / 'judges' / entry['file']}" in err, err
    for expected in entry["messages"]:
        assert expected in err, (expected, err)
    assert "sk-this-never-belongs" not in err
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize("entry", DOCUMENTS, ids=[e["file"] for e in DOCUMENTS])
def test_a_hostile_document_gives_its_exit_and_message(entry: dict, home: Path, capsys) -> None:
    out = home / "out.json"
    assert _synth(BAD / "documents" / entry["file"], out) == entry["exit"]
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for expected in entry["messages"]:
        assert expected in err, (expected, err)
    assert out.exists() == (entry["exit"] == 0)


def test_oversized_judges_file_and_document_are_refused_unread(home: Path, capsys) -> None:
    judges, doc = home / "big.yaml", home / "big.md"
    for path, limit in ((judges, MAX_JUDGES_BYTES), (doc, MAX_DOCUMENT_BYTES)):
        with path.open("wb") as fh:  # sparse: nothing is written but the last byte
            fh.seek(limit)
            fh.write(b"x")
        assert os.path.getsize(path) == limit + 1
    assert _judges(judges, home / "o.json") == 2
    assert f"big.yaml: {MAX_JUDGES_BYTES + 1:,} bytes; a judges file holds at most {MAX_JUDGES_BYTES:,} bytes" in capsys.readouterr().err
    assert _synth(doc, home / "o.json") == 2
    assert f"big.md: {MAX_DOCUMENT_BYTES + 1:,} bytes; a document holds at most" in capsys.readouterr().err


@pytest.mark.parametrize("body", ["{question.__class__.__mro__}", "{contexts[0]}", "{question!r}", "{answer:>99999}",
                                  "{__import__}"])
def test_an_edited_template_fills_only_declared_plain_placeholders(body: str) -> None:
    """No attribute, index, conversion or format-spec access through a template: refused when it is loaded,
    naming the template and the placeholder."""
    from rageval_core.scoring.prompts.template import PromptTemplate, TemplateError

    with pytest.raises(TemplateError) as caught:
        PromptTemplate("judge-edited", "en", f"Question: {body}", ("question", "contexts", "answer"))
    assert "judge-edited" in str(caught.value) and ("not a plain {name}" in str(caught.value) or "unknown placeholder" in str(caught.value))


def test_an_uploaded_judges_text_has_the_same_limits() -> None:
    from rageval_core.scoring.judges.config import JudgeConfigError
    from rageval_core.scoring.judges.saved import import_text

    for text, expected in (((BAD / "judges" / "alias_bomb.yaml").read_text(encoding="utf-8"), "nested deeper"),
                           ("[" * 5000 + "]" * 5000, "nested too deeply"),
                           ("x" * (MAX_JUDGES_BYTES + 1), "a judges file holds at most")):
        with pytest.raises(JudgeConfigError) as caught:
            import_text(text, "upload.yaml")
        assert expected in str(caught.value) and "upload.yaml" in str(caught.value)
