"""User and model text shown as text wherever Streamlit renders Markdown (markdown, captions, alerts, headers,
widget labels and help, radio and pill options, st.table cells).

Dataset rows, documents, judge reasons and claims are untrusted: a row or a prompt-injected judge could
otherwise show links and remote images (``![](http://host/?q=...)``) that fire when someone opens the row,
raw HTML, headings, math or colour directives. Every special character gets a backslash (always literal in
CommonMark), and bare URLs get a word joiner after the scheme: GFM turns ``http://...`` into a link after the
escapes are read, so only breaking the pattern keeps it text. HTML blocks use ``html.escape`` instead.
"""

from __future__ import annotations

import re
from typing import Any

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~<:$=&^])")
_BARE_URL = re.compile(r"(?i)\b(https?|ftp|file|mailto|javascript|data)(:)|\b(www)(\.)")
_JOINER = "\u2060"  # WORD JOINER: invisible, and no URL pattern matches across it


def md_escape(text: Any) -> str:
    """``text`` shown literally where Streamlit renders Markdown: "1. 適用範囲" stays text (not a numbered list),
    "- x" no bullet, ``[a](url)`` / ``![](url)`` / ``<img>`` / ``# h`` / ``$x$`` / ``:red[x]`` no markup."""
    plain = _BARE_URL.sub(lambda m: f"{m.group(1) or m.group(3)}{_JOINER}{m.group(2) or m.group(4)}", str(text))
    return _MD_SPECIAL.sub(r"\\\1", plain)
