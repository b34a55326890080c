"""Rows the offline heuristic cannot score: blank answer, no contexts, bare yes / no.

A lexical judge has nothing to compare a bare "yes" / "はい" with, so such rows are unscored
(``uncheckable``) rather than given a made-up 0 or 1; blank answers are ``empty_answer`` and rows
without any non-blank context ``missing_field``. Metrics call these before any provider call.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from rageval_core.core.types import Unscored

_BARE_YES_NO = re.compile(
    r"^(?:yes|no|yep|nope|true|false|はい|いいえ|いえ|そうです|違います|ちがいます)[.。!！]?$",
    re.IGNORECASE,
)


def is_blank(text: str | None) -> bool:
    """True for None, empty or whitespace-only text."""
    return text is None or not str(text).strip()


def is_bare_yes_no(answer: str | None) -> bool:
    """True when the whole answer is a bare yes / no (はい, いいえ, そうです, 違います), optionally with '.' or '!'."""
    if is_blank(answer):
        return False
    return bool(_BARE_YES_NO.match(unicodedata.normalize("NFKC", str(answer)).strip()))


def non_blank(texts: Sequence[str] | None) -> list[str]:
    """The non-blank texts, in order."""
    return [t for t in (texts or ()) if not is_blank(t)]


def faithfulness_precheck(
    answer: str | None, contexts: Sequence[str] | None
) -> str | None:
    """The unscored reason for a row the faithfulness heuristic cannot score, or ``None`` if it can."""
    if is_blank(answer):
        return Unscored.EMPTY_ANSWER
    if not non_blank(contexts):
        return Unscored.MISSING_FIELD
    if is_bare_yes_no(answer):
        return Unscored.UNCHECKABLE
    return None
