"""HTML for the sample inspector: the answer with its claims coloured by verdict, linked to the context
passage that supports them, and the contexts with the supporting sentences marked.

Every dataset text is escaped before it is placed in markup; Japanese text is kept as is.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Mapping, Sequence
from typing import Any

SUPPORTED = "#d3f9d8"
UNSUPPORTED = "#ffd8d8"
UNKNOWN = "#e9ecef"


def verdict_colour(verdict: Any) -> str:
    return SUPPORTED if verdict == 1 else UNSUPPORTED if verdict == 0 else UNKNOWN


def verdict_word(verdict: Any) -> str:
    return "supported" if verdict == 1 else "not supported" if verdict == 0 else "no verdict"


def anchor_prefix(sample_id: str) -> str:
    """The prefix of a row's in-page anchors: a digest of its id, not the id (an id may hold spaces, which no
    HTML id can, or quotes that would end the attribute and start markup of the row's making)."""
    return "r" + hashlib.sha256(str(sample_id).encode("utf-8")).hexdigest()[:12]


def _anchor(prefix: str, index: int) -> str:
    return html.escape(f"{prefix}-ctx-{index}", quote=True)


def answer_html(answer: str, claims: Sequence[Mapping[str, Any]], prefix: str = "row") -> str:
    """The answer with each claim found verbatim wrapped in a coloured span (title = verdict and reason).

    Claims an LLM rephrased cannot be located in the answer; they still appear in ``claims_html``.
    """
    spans: list[tuple[int, int, Mapping[str, Any]]] = []
    for claim in claims:
        text = str(claim.get("claim") or "").strip()
        if not text:
            continue
        start = answer.find(text)
        if start < 0 or any(a < start + len(text) and start < b for a, b, _ in spans):
            continue
        spans.append((start, start + len(text), claim))
    spans.sort(key=lambda s: s[0])
    out, pos = [], 0
    for start, end, claim in spans:
        out.append(html.escape(answer[pos:start]))
        title = f"{verdict_word(claim.get('verdict'))}: {claim.get('reason') or ''}"
        out.append(
            f'<span style="background:{verdict_colour(claim.get("verdict"))};border-radius:3px;padding:1px 2px" '
            f'title="{html.escape(title, quote=True)}">{html.escape(answer[start:end])}</span>'
        )
        index = claim.get("context_index")
        if isinstance(index, int):
            out.append(f'<sup><a href="#{_anchor(prefix, index)}">[{index + 1}]</a></sup>')
        pos = end
    out.append(html.escape(answer[pos:]))
    return f'<div style="line-height:1.9">{"".join(out)}</div>'


def claims_html(claims: Sequence[Mapping[str, Any]], prefix: str = "row") -> str:
    """One line per claim: verdict chip, claim text, link to its supporting passage, reason."""
    if not claims:
        return "<p><em>No claims were extracted.</em></p>"
    items = []
    for n, claim in enumerate(claims, 1):
        index = claim.get("context_index")
        link = (
            f' → <a href="#{_anchor(prefix, index)}">context [{index + 1}]</a>' if isinstance(index, int) else ""
        )
        items.append(
            f'<li><span style="background:{verdict_colour(claim.get("verdict"))};border-radius:3px;padding:0 4px">'
            f"{verdict_word(claim.get('verdict'))}</span> "
            f"<b>C{n}</b> {html.escape(str(claim.get('claim') or ''))}{link}"
            f'<br><small style="color:#555">{html.escape(str(claim.get("reason") or ""))}</small></li>'
        )
    return f'<ol style="list-style:none;padding-left:0">{"".join(items)}</ol>'


def contexts_html(contexts: Sequence[str], claims: Sequence[Mapping[str, Any]], prefix: str = "row") -> str:
    """Numbered context passages, each an anchor target, with sentences that support a claim marked."""
    marks: dict[int, set[str]] = {}
    for claim in claims:
        index, sentence = claim.get("context_index"), claim.get("supporting_sentence")
        if isinstance(index, int) and sentence:
            marks.setdefault(index, set()).add(str(sentence))
    blocks = []
    for i, text in enumerate(contexts):
        body = html.escape(text)
        for sentence in sorted(marks.get(i, ()), key=len, reverse=True):
            escaped = html.escape(sentence)
            if escaped in body:
                body = body.replace(escaped, f'<mark style="background:{SUPPORTED}">{escaped}</mark>', 1)
        blocks.append(
            f'<div id="{_anchor(prefix, i)}" style="border-left:3px solid #adb5bd;padding:4px 8px;margin:6px 0">'
            f"<b>[{i + 1}]</b> {body}</div>"
        )
    return "".join(blocks) or "<p><em>No contexts.</em></p>"
