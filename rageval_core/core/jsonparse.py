"""Tolerant extraction of one JSON object from model output.

Models wrap JSON in code fences or add a sentence before or after it; that is tolerated. Anything
else is a ``ParseError`` that keeps the raw text, so callers mark the result ``parse_error`` instead
of guessing. There are no silent retries here.
"""

from __future__ import annotations

import json
import re
from typing import Any
from rageval_core.core.errors import DataError

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class ParseError(DataError):
    """The text holds no JSON object we can read. ``raw`` is the text as received."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


def parse_json_object(text: str) -> dict[str, Any]:
    """Return the first JSON object in ``text`` (inside a code fence or surrounded by prose)."""
    if text is None or not str(text).strip():
        raise ParseError("empty response", text or "")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        stripped = candidate.strip()
        for start in [i for i, ch in enumerate(stripped) if ch == "{"]:
            try:
                value, _ = decoder.raw_decode(stripped[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise ParseError("no JSON object found in the response", text)
