"""Text from data made safe for a terminal: control characters (ANSI escape sequences, carriage returns,
backspaces, bidi overrides, ...) are shown as visible escapes instead of being interpreted, so a dataset
cannot recolour, clear or rewrite what the CLI prints. One function for every CLI print of data."""

from __future__ import annotations

import unicodedata
from typing import Any

_KEEP = "\u200d"  # zero-width joiner: part of emoji sequences, harmless


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(value: Any, *, multiline: bool = False) -> str:
    """``str(value)`` with every control (Cc) and format (Cf) character escaped as ``\\x1b`` / ``\\u202e``;
    newlines are kept when ``multiline`` (tabs always are), else escaped as ``\\n`` so one value stays on
    one line. Lone surrogates are escaped too, so printing never raises ``UnicodeEncodeError``."""
    text = str(value)
    out: list[str] = []
    for ch in text:
        if ch == "\n" and multiline or ch == "\t":
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch != _KEEP and (unicodedata.category(ch) in ("Cc", "Cf", "Cs")):
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)
