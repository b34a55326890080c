"""The fake server's answers to the workbench's own steps: one item per delimited input, as a careful model
gives, so every metric scores through both SDKs (the generic schema instance gave one verdict for two contexts:
context precision ``verdict_mismatch`` on every row, context recall on most).

The prompts delimit untrusted text with counted, indexed tags (``<contexts count="2"><context index="0">``);
``step_answer`` reads the indices from them and answers the step whose schema it recognises, else returns None
(the caller falls back to the generic schema instance). Deterministic: the same prompt, the same answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_ITEM = r'<{tag} index="(\d+)">\n(.*?)\n</{tag}>'
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


def _items(prompt: str, tag: str) -> list[tuple[int, str]]:
    """(index, text) of every ``<tag index="i">`` block, in order."""
    return [(int(i), text) for i, text in re.findall(_ITEM.format(tag=tag), prompt, flags=re.S)]


def _block(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, flags=re.S)
    return found.group(1) if found else ""


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _props(schema: Mapping[str, Any] | None, *path: str) -> set[str]:
    """Property names at ``path`` (through arrays' items) of ``schema``."""
    node: Any = schema or {}
    for name in path:
        node = (node.get("properties") or {}).get(name) or {}
        if node.get("type") == "array":
            node = node.get("items") or {}
    return set((node.get("properties") or {}).keys())


def step_answer(prompt: str, schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A schema-valid answer to a known step of ``prompt``, every input item answered; None for other requests."""
    top = _props(schema)
    verdict = _props(schema, "verdicts")
    if "context_index" in verdict and "useful" in verdict:
        return {"verdicts": [{"context_index": i, "useful": 1, "reason": "It states what the reference relies on."}
                             for i, _ in _items(prompt, "context")]}
    if "claim_index" in verdict:
        first = next(iter(_items(prompt, "context")), (0, ""))[0]
        out: dict[str, Any] = {"verdicts": []}
        for i, _claim in _items(prompt, "claim"):
            item = {"claim_index": i, "verdict": 1, "reason": "The context states it.", "context_index": first,
                    "supporting_sentence": None}
            if "reference_verdict" in verdict:
                item["reference_verdict"] = 1
            out["verdicts"].append(item)
        if "missing_reference_claims" in top:
            out["missing_reference_claims"] = []
        return out
    if "attributions" in top:
        return {"attributions": [{"sentence_index": i, "attributed": 1, "reason": "A context says so."}
                                 for i, _ in _items(prompt, "reference_sentence")]}
    if {"TP", "FP", "FN"} <= top:
        return {"TP": [{"statement": text, "reason": "The reference says so."} for _, text in _items(prompt, "answer_claim")],
                "FP": [], "FN": []}
    if top == {"claims"}:
        claims = _sentences(_block(prompt, "answer"))
        return {"claims": claims} if claims else None
    if top == {"sentences"}:
        contexts = _items(prompt, "context")
        return {"sentences": _sentences(contexts[0][1])[:1] if contexts else []}
    if "questions" in top:
        answer = _sentences(_block(prompt, "answer"))
        topic = answer[0].rstrip(".。") if answer else "this"
        asked = re.findall(r"(\d+) (?:different )?question|(\d+) 件", prompt)  # the user message's count is last
        count = int(next(x for x in asked[-1] if x)) if asked else 1
        return {"questions": [{"question": f"{topic}?", "noncommittal": 0} for _ in range(count)]}
    return None
