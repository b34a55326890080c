"""Memoised text views (sentence splits, content tokens, evidence): the same answers as computed afresh, and a
caller changing what it got back never changes what the next caller gets."""

from __future__ import annotations

from rageval_core.core import text
from rageval_core.offline import support


def test_content_tokens_are_memoised_and_each_caller_gets_its_own_list() -> None:
    sample = "東京タワーは1958年に完成した電波塔です。"
    first = text.content_tokens(sample, "ja")
    first.append(text.Token("x", "x"))
    second = text.content_tokens(sample, "ja")
    assert text.Token("x", "x") not in second
    assert second == list(text._ja_tokens.__wrapped__(sample))
    hits = text._ja_tokens.cache_info().hits
    text.content_tokens(sample, "ja")
    assert text._ja_tokens.cache_info().hits == hits + 1
    assert text.content_tokens("Tokyo Tower was completed in 1958.", "en") == list(
        text._en_tokens.__wrapped__("Tokyo Tower was completed in 1958.")
    )


def test_sentence_splits_are_memoised_per_language_and_min_chars() -> None:
    sample = "はい。東京タワーは1958年に完成しました。高さは333mです。"
    pieces = text.split_sentences(sample, "ja")
    pieces.clear()
    assert text.split_sentences(sample, "ja") == ["はい。東京タワーは1958年に完成しました。", "高さは333mです。"]
    assert text.split_sentences(sample, "ja", min_chars=1) == ["はい。", "東京タワーは1958年に完成しました。", "高さは333mです。"]


def test_evidence_is_built_once_per_texts_language_and_claims() -> None:
    contexts = ["東京タワーは1958年に完成した。", "高さは333メートルである。"]
    a = support.build_evidence(contexts, "ja", against=["東京タワーは1958年に完成した。"])
    b = support.build_evidence(list(contexts), "ja", against=("東京タワーは1958年に完成した。",))
    assert a is b
    assert support.build_evidence(contexts, "ja") is not a  # other claims: a separate entry
    assert a.sentences == ["東京タワーは1958年に完成した。", "高さは333メートルである。"]
