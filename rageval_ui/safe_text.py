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


_BACKTICKS = re.compile(r"`+")


def md_code(text: Any) -> str:
    """``text`` as one inline code span, whatever it holds: the fence is one backtick longer than the longest run
    inside (CommonMark), so a backtick in a trace id cannot close it; nothing inside a code span is Markdown.
    Line breaks become spaces (a span is one line); a padding space, which CommonMark strips, keeps a leading or
    trailing backtick off the fence."""
    plain = str(text).replace("\r", " ").replace("\n", " ")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(plain)), default=0) + 1)
    pad = " " if plain.startswith("`") or plain.endswith("`") else ""
    return f"{fence}{pad}{plain}{pad}{fence}"


_URL_SAFE = "/:?&=#%@+,;~!$*'-._"


def md_link(label: str, url: Any) -> str:
    """A Markdown link to an http(s) ``url`` whose ``label`` is already safe Markdown (escaped or from the
    catalogue), or the label alone for any other scheme. The URL is percent-encoded (spaces, brackets, parentheses,
    backticks, angle brackets), so it cannot end the link early or start another; it is shown beside the label as
    escaped text, so the reader sees where a link from data goes before following it."""
    from urllib.parse import urlsplit

    encoded = safe_url(url)
    if encoded is None:
        return label
    return f"[{label}]({encoded}) ({md_escape(urlsplit(str(url).strip()).netloc)})"


def safe_url(url: Any) -> str | None:
    """An http(s) ``url`` from data percent-encoded (spaces, brackets, parentheses, backticks, angle brackets), for
    a link or a table's link column; None for any other scheme (``javascript:``, ``data:``) or no host."""
    from urllib.parse import quote, urlsplit

    target = str(url or "").strip()
    parts = urlsplit(target)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return quote(target, safe=_URL_SAFE).replace("(", "%28").replace(")", "%29")
