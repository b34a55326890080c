"""Reason texts of the offline provider, in English and Japanese: a claim's reason lists what its score
was made of (coverages, cosine, missing numbers, names and words) for the sample inspector. Also the small input readers the step
handlers and the judge share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rageval_core.offline.support import ClaimScore
from rageval_core.core.text import Language, detect_language

# Offline reasons carry no disclaimer of their own: every result names its provider ("offline"), and the UI and
# CLI label that once per place (a banner, a short tag per result) instead of a sentence in front of each reason.


def lang_of(value: str | None) -> Language:
    """The reason language of a request (Japanese only when asked for)."""
    return "ja" if value == "ja" else "en"


def msg(lang: Language, en: str, ja: str) -> str:
    """A reason in ``lang``."""
    return ja if lang == "ja" else en


def short(text: str, limit: int = 40) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def strings(inputs: Mapping[str, Any], key: str) -> list[str]:
    """The ``key`` input as a list of strings (a lone string becomes a one-item list)."""
    value = inputs.get(key) or []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def row_language(*texts: str | Sequence[str]) -> Language:
    """The language of the row's own texts (which decides the tokenizer and the support threshold)."""
    flat = " ".join(t if isinstance(t, str) else " ".join(t) for t in texts)
    return detect_language(flat)


def claim_reason(
    cs: ClaimScore,
    lang: Language,
    evidence_en: str = "contexts",
    evidence_ja: str = "コンテキスト",
) -> str:
    """Why a claim is (not) supported: its score against the threshold and each term behind it."""
    sign = "≥" if cs.supported else "<"
    parts_en = [
        f"score {cs.score:.2f} {sign} {cs.threshold:.2f} (support {cs.support:.2f})",
        f"char-trigram coverage {cs.trigram_coverage:.2f}",
        f"content words {cs.token_coverage:.2f}",
    ]
    parts_ja = [
        f"スコア {cs.score:.2f} {sign} {cs.threshold:.2f}（支持度 {cs.support:.2f}）",
        f"文字3-gram被覆 {cs.trigram_coverage:.2f}",
        f"内容語被覆 {cs.token_coverage:.2f}",
    ]
    if cs.embedding_weight:
        parts_en.append(
            f"cosine {cs.embedding_cosine:.2f} (weight {cs.embedding_weight:.2f})"
        )
        parts_ja.append(
            f"埋め込みコサイン {cs.embedding_cosine:.2f}（重み {cs.embedding_weight:.2f}）"
        )
    if cs.missing_numbers:
        parts_en.append(
            f"numbers not in the {evidence_en}: {', '.join(cs.missing_numbers)}"
        )
        parts_ja.append(f"{evidence_ja}にない数値: {', '.join(cs.missing_numbers)}")
    if cs.missing_entities:
        parts_en.append(
            f"names not in the {evidence_en}: {', '.join(cs.missing_entities)}"
        )
        parts_ja.append(
            f"{evidence_ja}にない固有名: {', '.join(cs.missing_entities)}"
        )
    if cs.ignored_context:
        parts_en.append(
            f"{cs.ignored_context} context sentence(s) or passage(s) addressed to the evaluator (or echoing "
            "the answer) not used as evidence"
        )
        parts_ja.append(f"評価者に向けた（または回答をなぞるだけの）コンテキストの文・段落 {cs.ignored_context} 件は証拠にしていません")
    if cs.missing_tokens and not cs.supported:
        parts_en.append(f"missing words: {', '.join(cs.missing_tokens[:5])}")
        parts_ja.append(f"見つからない語: {', '.join(cs.missing_tokens[:5])}")
    return msg(lang, "; ".join(parts_en), "、".join(parts_ja))
