"""Bytes to text, refusing what is not text: binary files and archives (an ``.xlsx`` among them), encodings
that cannot be told apart safely. Every fallback (Shift_JIS, UTF-16 without BOM) is a warning, never silent."""

from __future__ import annotations

import re

from rageval_core.data.datasets.model import Issue
from rageval_core.core.messages import say

# Leading bytes of binary formats people upload by mistake, with what to tell them.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook?): in Excel use File → Save As → CSV UTF-8"),
    (b"\xd0\xcf\x11\xe0", "an old Excel / Office file (.xls): save it as CSV UTF-8"),
    (b"%PDF", "a PDF: export the table as CSV or JSON"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"\x1f\x8b", "a gzip archive: decompress it first"),
    (b"SQLite format 3\x00", "an SQLite database"),
)
_BINARY_BYTES = tuple(b for b in range(32) if b not in (9, 10, 12, 13, 27))  # not tab, newlines, form feed, ESC
_HALFWIDTH_KANA = re.compile(r"[\uff61-\uff9f]")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\u3000-\u303f\uff01-\uff5e]")


def _utf16_without_bom(data: bytes) -> str | None:
    """``le`` / ``be`` when every other byte of the first KB is NUL (ASCII-heavy UTF-16 without a BOM)."""
    head = data[:1024]
    if len(head) < 4 or len(head) % 2:
        head = head[: len(head) - len(head) % 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    return None


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes, file: str, issues: list[Issue]) -> str | None:
    """UTF-8 with or without BOM, UTF-16/32 with BOM, UTF-16 without BOM and Shift_JIS (cp932, Excel's
    Japanese CSV) with a warning; ``None`` with an error issue for binary files and undecodable bytes."""
    for magic, what in _MAGIC:
        if data.startswith(magic):
            issues.append(Issue(file, None, None, say("file.not_text", what=what)))
            return None
    boms = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
    for bom, codec in boms:
        if data.startswith(bom):
            try:
                return _newlines(data[len(bom):].decode(codec))
            except UnicodeDecodeError as exc:
                issues.append(Issue(file, None, None, say("file.bad_bom", codec=codec.upper(), byte=exc.start)))
                return None
    guessed = _utf16_without_bom(data)
    if guessed:
        try:
            text = data.decode(guessed)
        except UnicodeDecodeError:
            text = None
        if text is not None:
            issues.append(Issue(file, None, None, say("file.no_bom", codec=guessed.upper()), "warning"))
            return _newlines(text)
    head = data[:65536]
    controls = sum(head.count(bytes([b])) for b in _BINARY_BYTES)
    if controls > max(8, len(head) // 50):
        issues.append(Issue(file, None, None, say("file.control_bytes")))
        return None
    try:
        return _newlines(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        utf8_error = exc
    try:
        text = data.decode("cp932")
    except UnicodeDecodeError:
        text = None
    if text is not None and _plausibly_japanese(text):
        issues.append(Issue(file, None, None, say("file.shift_jis"), "warning"))
        return _newlines(text)
    issues.append(Issue(file, None, None, say("file.not_utf8", byte=utf8_error.start)))
    return None


def _plausibly_japanese(text: str) -> bool:
    """cp932 decodes most Latin-1 / cp1252 bytes too, as half-width katakana: accept the fallback only when
    the non-ASCII text reads as Japanese (full-width kana, kanji, punctuation) rather than half-width kana."""
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    if not non_ascii:
        return True
    return len(_JAPANESE.findall(text)) >= 0.5 * non_ascii and len(_HALFWIDTH_KANA.findall(text)) < 0.5 * non_ascii


def head_is_plain_utf8(head: bytes, *, complete: bool) -> bool:
    """Whether a file starting with ``head`` reads as plain UTF-8 text (BOM optional) by the rules of ``decode``:
    no binary signature, no UTF-16/32 byte order mark, not UTF-16 without one, not full of control bytes.
    ``complete`` when ``head`` is the whole file (else a character cut at its end is not an error)."""
    if any(head.startswith(magic) for magic, _ in _MAGIC) or _utf16_without_bom(head):
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        return False
    controls = sum(head.count(bytes([b])) for b in _BINARY_BYTES)
    if controls > max(8, len(head) // 50):
        return False
    try:
        head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return not complete and exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True
