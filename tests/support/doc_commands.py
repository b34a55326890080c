"""The command-line examples of README.md and docs/*.md, read the way a reader copies them (the rule that
tests/project/test_docs_examples.py runs them by).

The rule:
- Only fenced code blocks count (inline code names a command; tests/project/test_docs_links.py checks the files it
  names exist).
- In a ``bash`` / ``sh`` / ``shell`` block every line is a command, except blank lines and ``#`` comments; a line
  ending in ``\\`` continues on the next, a here-document (``<<'EOF'`` … ``EOF``) belongs to its command, and a
  trailing ``# comment`` is dropped (kept apart as the command's note: ``# exit 1`` states the expected exit code).
- In a ``console`` block, or a block with no language or ``text``, a line starting with ``$ `` is a command, and so
  is one starting with a command word (``python ``, ``rageval ``, ``streamlit ``, ``pip ``, ``export ``); the lines
  after a command, up to the next command, are its quoted output.
- A ``console`` / plain block with no command right under a block of commands (nothing but blank lines between)
  is the quoted output of that block's last command.
- Other languages (python, json, yaml) are not commands (docs/python-api.md's python blocks run in
  tests/project/test_docs_python_api.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_LANGS = ("bash", "sh", "shell")
QUOTED_LANGS = ("console", "", "text")
COMMAND_WORDS = ("python ", "rageval ", "streamlit ", "pip ", "export ")
FENCE = re.compile(r"^(```+|~~~+)[ \t]*([\w-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")
EXIT_NOTE = re.compile(r"\bexit (\d+)\b")


@dataclass
class Example:
    """One command as written in a doc: its page, line, text (continuations joined, comment dropped), the comment
    beside it, and the output quoted under it (console blocks)."""

    doc: str  # "README.md" or "docs/cli.md"
    line: int
    command: str
    note: str = ""
    output: list[str] = field(default_factory=list)

    @property
    def expected_exit(self) -> int:
        """The exit code the doc states beside the command (``# exit 1``), else 0."""
        found = EXIT_NOTE.search(self.note)
        return int(found.group(1)) if found else 0

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.command}"


def doc_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def split_comment(line: str) -> tuple[str, str]:
    """(code, comment) of a shell line: the first ``#`` outside quotes that starts a word begins the comment."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def _commands(lines: list[str], first_line: int, doc: str, quoted: bool) -> list[Example]:
    found: list[Example] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        number = first_line + i
        i += 1
        if quoted:
            is_command = stripped.startswith("$ ") or (raw == raw.lstrip() and stripped.startswith(COMMAND_WORDS))
            if not is_command:
                if found and stripped:
                    found[-1].output.append(raw)
                continue
            stripped = stripped.removeprefix("$ ")
        elif not stripped or stripped.startswith("#"):
            continue
        code, note = split_comment(stripped)
        parts = [code]
        while code.endswith("\\") and i < len(lines):
            parts[-1] = code[:-1].rstrip()
            code, more = split_comment(lines[i].strip())
            note = " ".join(n for n in (note, more) if n)
            parts.append(code)
            i += 1
        command = " ".join(p for p in parts if p)
        heredoc = HEREDOC.search(command)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                body.append(lines[i])
                i += 1
            i += 1
            command = "\n".join([command, *body, heredoc.group(1)])
        found.append(Example(doc, number, command, note))
    return found


def examples(path: Path, root: Path = ROOT) -> list[Example]:
    """The commands of one page, in order."""
    text = path.read_text(encoding="utf-8")
    doc = path.relative_to(root).as_posix()
    found: list[Example] = []
    last_end = -1  # where the last block with commands ended
    for block in FENCE.finditer(text):
        lang = block.group(2).lower()
        if lang not in SHELL_LANGS + QUOTED_LANGS:
            continue
        first = text.count("\n", 0, block.start(3)) + 1
        lines = block.group(3).split("\n")
        commands = _commands(lines, first, doc, quoted=lang in QUOTED_LANGS)
        if commands:
            found.extend(commands)
            last_end = block.end()
        elif lang in QUOTED_LANGS and found and last_end >= 0 and not text[last_end:block.start()].strip():
            found[-1].output.extend(line for line in lines if line.strip())  # output right under a command block
    return found
