"""The README stays short and the docs stay findable and true: every relative link in README.md and docs/*.md
resolves (files and #anchors), every repository path and ``rageval_core.`` / ``ui.`` module the text names in
code spans exists, the README is at most 300 lines and each docs page at most 400.

Links are read outside code fences and inline code; anchors follow GitHub's heading slugs.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README_MAX_LINES = 300
PAGE_MAX_LINES = 400
# The pages the README promises (issue 25); more may be added.
REQUIRED_PAGES = ("README", "providers", "metrics", "judges", "trust", "benchmarks", "scale", "cli", "ui",
                  "japanese", "security", "architecture")

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+).*?\1")
EXTERNAL = ("http://", "https://", "mailto:")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
REPO_PATH = re.compile(r"^(?:rageval_core|tests|bench|ui|app_pages|sample_data|docs)/[\w./*-]*")
MODULE = re.compile(r"^(?:rageval_core|ui)(?:\.\w+)+")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def prose_lines(text: str, *, drop_code: bool = True) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced code blocks, inline code removed unless asked to keep it."""
    out, fence = [], None
    for number, line in enumerate(text.split("\n"), 1):
        marker = re.match(r"\s*(```+|~~~+)", line)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * 3
            elif marker.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            out.append((number, INLINE_CODE.sub("", line) if drop_code else line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (word characters, '-' and '_' kept),
    spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8"), drop_code=False):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        base = slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if target.startswith(EXTERNAL):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not dest.exists():
                problems.append(f"{where} (no such file)")
            elif ROOT not in dest.parents and dest != ROOT:
                problems.append(f"{where} (outside the repository)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where} (no heading with that anchor)")
    return problems


def stale_code_references(path: Path) -> list[str]:
    """Code spans naming a repository path or a module that does not exist (``a.b.name``: the longest module
    prefix must exist; what follows it is an attribute and is not checked)."""
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        for span in CODE_SPAN.findall(line):
            span = span.strip()
            where = f"{path.relative_to(ROOT)}:{number}: {span}"
            if (m := REPO_PATH.match(span)) and not any(ch in span for ch in "{<"):
                target = m.group(0).split("::")[0].rstrip(".,;:")
                if not (any(ROOT.glob(target)) if "*" in target else (ROOT / target).exists()):
                    problems.append(f"{where} (no such path)")
            elif m := MODULE.match(span):
                parts = m.group(0).split(".")
                if not (ROOT / parts[0] / f"{parts[1]}.py").exists() and not (ROOT / parts[0] / parts[1]).is_dir():
                    problems.append(f"{where} (no such module)")
                    continue
                for i in range(2, len(parts)):
                    folder = ROOT.joinpath(*parts[:i])
                    if not folder.is_dir():
                        break
                    if not (folder / f"{parts[i]}.py").exists() and not (folder / parts[i]).is_dir():
                        init = folder / "__init__.py"
                        if not re.search(rf"\b{parts[i]}\b", init.read_text(encoding="utf-8") if init.exists() else ""):
                            problems.append(f"{where} (no such module or name in {'.'.join(parts[:i])})")
                        break
    return problems


def test_slugs_follow_github():
    assert slug("Calls per row (`python bench/calls_per_row.py`)") == "calls-per-row-python-benchcalls_per_rowpy"
    assert slug("A real small model (llama.cpp)") == "a-real-small-model-llamacpp"
    assert slug("The judge prompt, next to the article's") == "the-judge-prompt-next-to-the-articles"
    assert slug("1. Faithfulness（忠実性）: 1〜5点") == "1-faithfulness忠実性-15点"


def test_link_reader_skips_code_and_finds_broken_targets(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "a.md").write_text("# Top\n## Sub part\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#sub-part) [self](#here) ![img](a.md) `[code](missing.md)`\n"
        "# Here\n```\n[fenced](missing.md)\n```\n[gone](missing.md) [bad anchor](a.md#nope) [web](https://x.test/y)\n",
        encoding="utf-8")
    assert broken_links(page) == ["b.md:6: missing.md (no such file)", "b.md:6: a.md#nope (no heading with that anchor)"]


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_stale_code_references_are_found(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "rageval_core" / "run").mkdir(parents=True)
    (tmp_path / "rageval_core" / "run" / "__init__.py").write_text("from rageval_core.run.loop import run\n")
    (tmp_path / "rageval_core" / "run" / "loop.py").write_text("")
    page = tmp_path / "p.md"
    page.write_text("`rageval_core/run/loop.py` `rageval_core.run.loop.run` `rageval_core.run.run(...)`\n"
                    "`rageval_core/runner/loop.py` `rageval_core.runner.loop` `rageval_core.run.gone` `rageval_core/run/l*.py`\n"
                    "`tests/x_*.py`\n",
                    encoding="utf-8")
    assert stale_code_references(page) == [
        "p.md:2: rageval_core/runner/loop.py (no such path)",
        "p.md:2: rageval_core.runner.loop (no such module)",
        "p.md:2: rageval_core.run.gone (no such module or name in rageval_core.run)",
        "p.md:3: tests/x_*.py (no such path)",
    ]


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_code_the_docs_name_exists(path):
    assert stale_code_references(path) == []


def test_readme_is_short_and_pages_fit():
    lengths = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in doc_files()}
    assert lengths["README.md"] <= README_MAX_LINES, lengths["README.md"]
    too_long = {name: n for name, n in lengths.items() if name != "README.md" and n > PAGE_MAX_LINES}
    assert too_long == {}


def test_the_promised_pages_exist_and_the_index_links_each_page():
    missing = [name for name in REQUIRED_PAGES if not (DOCS / f"{name}.md").is_file()]
    assert missing == []
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    unlisted = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and f"]({p.name})" not in index]
    assert unlisted == []
