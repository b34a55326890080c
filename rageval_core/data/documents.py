"""Documents for synthetic QA and the small RAG: sections by heading, chunks by sentence.

A Markdown document is cut at its headings (ATX ``#``..``######`` and setext ``===``/``---``, never
inside a code fence); text before the first heading under a title is a section of its own. Plain text
without headings is cut into paragraph groups of bounded size. Sections are the unit of question
generation (n questions per section) and of retrieval hits (did the question's source section come back?).

Chunks never cross a section boundary, so every chunk has exactly one source section. They are packed
from whole sentences (the project's ja/en splitter) up to ``size`` characters, carrying the last
sentences of a chunk (up to ``overlap`` characters) into the next; a single sentence longer than
``size`` is cut by characters. ``pack_units`` is the pure packing step.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval_core.core.messages import say
from rageval_core.core.text import Language, detect_language, split_sentences
from rageval_core.core.errors import ConfigError, DataError

DOCUMENT_EXTENSIONS: tuple[str, ...] = (".md", ".markdown", ".txt")
MAX_DOCUMENT_BYTES = 20_000_000  # a manual of a few thousand pages; larger is split by the user, never read whole
# Default chunk sizes in characters: a Japanese character carries about as much as 2.5 English ones.
DEFAULT_CHUNK_SIZE: dict[str, int] = {"ja": 300, "en": 800}
DEFAULT_CHUNK_OVERLAP: dict[str, int] = {"ja": 60, "en": 150}
PLAIN_SECTION_CHARS: dict[str, int] = {"ja": 1200, "en": 3000}

_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_LIST_OR_QUOTE = re.compile(r"^\s*(?:[-*+•・]\s|\d{1,3}[.)]\s|>)")


class DocumentError(DataError):
    """A document that cannot be read or has no text."""


@dataclass(frozen=True)
class Section:
    """One heading and the text under it (up to the next heading of any level)."""

    index: int  # 0-based position among the document's sections
    heading: str  # heading text without '#' ("" for headingless text)
    level: int  # 1..6; 0 for plain text or text before any heading
    path: tuple[str, ...]  # enclosing headings from the top, this one last
    text: str  # the body as written (Markdown kept), without the heading line
    start_line: int  # 1-based line of the heading (or of the first body line)

    @property
    def label(self) -> str:
        """What the UI and reports call the section."""
        return self.heading or f"part {self.index + 1}"


@dataclass(frozen=True)
class Chunk:
    """A retrievable piece of one section. ``text`` is what a RAG shows as a context."""

    id: str  # "<document>:s<section>:c<chunk>", stable for the same document and settings
    document: str
    section_index: int
    heading: str
    text: str

    def embed_text(self, with_heading: bool = True) -> str:
        """What is embedded for retrieval: the heading line in front of the text (as the synthetic-QA article kept
        "## heading" in each chunk), so a chunk of bullets still matches questions about its topic.
        The context itself stays heading-free so sentence-level judges see only the section's sentences."""
        return f"{self.heading}\n{self.text}" if with_heading and self.heading else self.text


@dataclass
class Document:
    """A parsed document: its name (file stem), title, language, sections and content hash."""

    name: str
    title: str
    language: Language
    sections: list[Section]
    text: str
    sha256: str = field(default="")

    def __post_init__(self) -> None:
        if not self.sha256:
            self.sha256 = hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def summary(self) -> dict[str, Any]:
        """Provenance for exports: which document, which version."""
        return {
            "name": self.name,
            "title": self.title,
            "language": self.language,
            "sha256": self.sha256,
            "sections": len(self.sections),
            "characters": len(self.text),
        }


# ------------------------------------------------------------------------------------------ reading
def decode_text(data: bytes, name: str = "document") -> str:
    """UTF-8 (BOM allowed), then CP932 for Japanese files saved by Windows tools; else a DocumentError. A NUL
    byte means a binary file (CP932 would otherwise decode many as garbage text)."""
    if b"\x00" in data:
        raise DocumentError(say("document.binary", name=name))
    for encoding in ("utf-8-sig", "cp932"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise DocumentError(say("document.encoding", name=name))


def read_document(path: str | Path) -> Document:
    """Read and parse a .md / .markdown / .txt file; unreadable or empty files raise ``DocumentError``."""
    p = Path(path)
    if p.suffix.lower() not in DOCUMENT_EXTENSIONS:
        raise DocumentError(say("document.kind", name=p.name, extensions=", ".join(DOCUMENT_EXTENSIONS)))
    try:
        size = p.stat().st_size
        if size > MAX_DOCUMENT_BYTES:  # checked unread: a 200 MB file of NULs held synth for minutes
            raise DocumentError(say("document.too_large", name=p.name, size=f"{size:,}", limit=f"{MAX_DOCUMENT_BYTES:,}"))
        data = p.read_bytes()
    except OSError as exc:
        raise DocumentError(say("document.unreadable", name=p.name, error=exc.strerror or exc)) from None
    return parse_document(decode_text(data, p.name), p.stem)


def slug(name: str) -> str:
    """A chunk-id-safe form of a document name (letters, digits, CJK, '-', '_' and '.')."""
    out = re.sub(r"[^\w.\-]+", "_", name.strip(), flags=re.UNICODE).strip("_")
    return out or "document"


# ------------------------------------------------------------------------------------------ sections
@dataclass
class _Block:
    heading: str
    level: int
    line: int
    body: list[str] = field(default_factory=list)


def _heading_blocks(lines: list[str]) -> list[_Block]:
    """Cut lines at headings (outside code fences); the first block holds the text before any heading."""
    blocks = [_Block("", 0, 1)]
    fence: str | None = None
    for i, line in enumerate(lines):
        marker = _FENCE.match(line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
            blocks[-1].body.append(line)
            continue
        if fence is None:
            atx = _ATX.match(line)
            if atx and atx.group(2):
                blocks.append(_Block(atx.group(2).strip(), len(atx.group(1)), i + 1))
                continue
            setext = _SETEXT.match(line)
            body = blocks[-1].body
            if setext and body and body[-1].strip() and not _LIST_OR_QUOTE.match(body[-1]) and (
                len(body) == 1 or not body[-2].strip()
            ):
                title = body.pop().strip()
                blocks.append(_Block(title, 1 if setext.group(1)[0] == "=" else 2, i))
                continue
        blocks[-1].body.append(line)
    return blocks


def _paragraph_sections(text: str, limit: int) -> list[tuple[str, int]]:
    """Plain text: blank-line paragraphs grouped up to ``limit`` characters → (text, 1-based start line)."""
    groups: list[tuple[str, int]] = []
    current: list[str] = []
    start = 1
    size = 0
    for m in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", text):  # a paragraph: up to the next blank line
        para = m.group(0).strip()
        if current and size + len(para) > limit:
            groups.append(("\n\n".join(current), start))
            current, size = [], 0
        if not current:
            start = text.count("\n", 0, m.start()) + 1
        current.append(para)
        size += len(para)
    if current:
        groups.append(("\n\n".join(current), start))
    return groups


def parse_document(text: str, name: str = "document") -> Document:
    """Sections of a Markdown or plain-text document. Raises ``DocumentError`` when there is no text."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise DocumentError(say("document.empty", name=name))
    language = detect_language(text)
    blocks = _heading_blocks(text.split("\n"))
    headed = [b for b in blocks if b.level > 0]
    title = name
    sections: list[Section] = []
    if not headed:
        for body, line in _paragraph_sections(text, PLAIN_SECTION_CHARS[language]):
            sections.append(Section(len(sections), "", 0, (), body, line))
        return Document(name, title, language, sections, text)
    top = min(b.level for b in headed)
    first = headed[0]
    if first.level == top and sum(1 for b in headed if b.level == top) == 1 and not "".join(blocks[0].body).strip():
        title = first.heading  # a single top heading at the start is the document title
    stack: list[tuple[int, str]] = []
    for block in blocks:
        if block.level:
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.heading))
        body = "\n".join(block.body).strip("\n")
        if not body.strip():
            continue  # a heading directly followed by a sub-heading: its path lives on in the children
        sections.append(
            Section(
                index=len(sections),
                heading=block.heading,
                level=block.level,
                path=tuple(h for _, h in stack) if block.level else (),
                text=body.strip(),
                start_line=block.line,
            )
        )
    if not sections:
        raise DocumentError(say("document.no_text", name=name))
    return Document(name, title, language, sections, text)


# ------------------------------------------------------------------------------------------ chunks
def pack_units(lengths: list[int], size: int, overlap: int) -> list[list[int]]:
    """Group consecutive units (by length) into chunks of at most ``size`` characters.

    Each chunk after the first starts with the previous chunk's last units whose lengths add up to at
    most ``overlap`` (never the whole previous chunk, so packing always moves forward). A unit longer
    than ``size`` is a chunk of its own (callers cut such units first).
    """
    if size < 1:
        raise ConfigError("chunk size must be at least 1 character")
    if overlap < 0 or overlap >= size:
        raise ConfigError("chunk overlap must be in [0, size)")
    chunks: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i, n in enumerate(lengths):
        if current and total + n > size:
            chunks.append(current)
            carried: list[int] = []
            carried_len = 0
            for j in reversed(current[1:]):  # keep at least one new unit per chunk
                if carried_len + lengths[j] > overlap or carried_len + lengths[j] + n > size:
                    break
                carried.insert(0, j)
                carried_len += lengths[j]
            current, total = carried, carried_len
        current.append(i)
        total += n
    if current:
        chunks.append(current)
    return chunks


def _cut(sentence: str, size: int, overlap: int) -> list[str]:
    """A sentence longer than ``size`` as pieces of ``size`` characters overlapping by ``overlap``."""
    if len(sentence) <= size:
        return [sentence]
    step = max(1, size - overlap)
    return [sentence[i : i + size] for i in range(0, max(1, len(sentence) - overlap), step)]


def section_units(text: str, language: Language) -> list[tuple[str, int]]:
    """Sentences of a section with the line they came from: (sentence, line number within the section)."""
    units: list[tuple[str, int]] = []
    for line_no, line in enumerate(text.split("\n")):
        if line.strip():
            units.extend((s, line_no) for s in split_sentences(line, language, min_chars=1))
    return units


def chunk_section(
    section: Section,
    document: str,
    language: Language,
    *,
    size: int | None = None,
    overlap: int | None = None,
) -> list[Chunk]:
    """The chunks of one section; sentences of one line are joined directly (ja) or with a space (en),
    lines with a newline."""
    size = size or DEFAULT_CHUNK_SIZE[language]
    overlap = DEFAULT_CHUNK_OVERLAP[language] if overlap is None else overlap
    overlap = min(overlap, size - 1)
    units: list[tuple[str, int]] = []
    for sentence, line in section_units(section.text, language):
        units.extend((piece, line) for piece in _cut(sentence, size, overlap))
    groups = pack_units([len(u[0]) for u in units], size, overlap)
    joiner = "" if language == "ja" else " "
    doc_id = slug(document)
    chunks = []
    for j, group in enumerate(groups):
        parts: list[str] = []
        last_line = None
        for i in group:
            piece, line = units[i]
            if parts:
                parts.append("\n" if line != last_line else joiner)
            parts.append(piece)
            last_line = line
        text = "".join(parts).strip()
        chunks.append(Chunk(f"{doc_id}:s{section.index:02d}:c{j:02d}", document, section.index, section.heading, text))
    return chunks


def chunk_document(
    doc: Document,
    *,
    size: int | None = None,
    overlap: int | None = None,
) -> list[Chunk]:
    """Every section's chunks in document order (sizes default per language: ja 300/60, en 800/150)."""
    out: list[Chunk] = []
    for section in doc.sections:
        out.extend(chunk_section(section, doc.name, doc.language, size=size, overlap=overlap))
    return out
