"""Edge cases of language detection and sentence splitting found in the foundation audit."""

from __future__ import annotations

import pytest

from rageval_core.core.text import detect_language, split_sentences


@pytest.mark.parametrize("text", ["はい", "東京", "いいえ。", "「はい」"])
def test_short_japanese_answers_are_japanese(text):
    assert detect_language(text) == "ja"


@pytest.mark.parametrize("text", ["OK", "A1 東", "12", "GPT-4o と Claude"])
def test_latin_text_with_few_japanese_chars_stays_english(text):
    assert detect_language(text) == "en"


def test_month_abbreviations_do_not_end_a_sentence():
    text = "He arrived at 3 p.m. on Jan. 5th. It was fine. The report is due on Sept. 30."
    assert split_sentences(text, "en", min_chars=1) == [
        "He arrived at 3 p.m. on Jan. 5th.",
        "It was fine.",
        "The report is due on Sept. 30.",
    ]


def test_sentence_final_abbreviation_before_a_sentence_opener_is_a_cut():
    text = "They live in the U.K. They like tea. The U.S. Army is large. We met at 5 p.m. Eastern time."
    assert split_sentences(text, "en", min_chars=1) == [
        "They live in the U.K.",
        "They like tea.",
        "The U.S. Army is large.",
        "We met at 5 p.m. Eastern time.",
    ]


def test_japanese_bullets_without_a_space_lose_their_marker():
    text = "・学習率を下げる\n・バッチサイズを増やす\n● 正則化を加える"
    assert split_sentences(text, "ja", min_chars=1) == ["学習率を下げる", "バッチサイズを増やす", "正則化を加える"]
