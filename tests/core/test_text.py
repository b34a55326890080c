"""Text utilities: language detection, sentence splitting (ja/en), normalisation, n-grams, numbers,
entities and content tokens."""

import pytest

from rageval_core.core.names import entities
from rageval_core.core.text import (
    char_ngrams,
    content_tokens,
    detect_language,
    kanji_to_int,
    normalize,
    numbers,
    split_sentences,
    stem,
    token_keys,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("機械学習とは何ですか。", "ja"),
        ("This is plain English.", "en"),
        ("This is an English sentence that mentions 東京 once.", "en"),
        ("RAGASのfaithfulnessはclaimごとに判定します", "ja"),
        ("", "en"),
        ("12345 !!!", "en"),
    ],
)
def test_detect_language(text, expected):
    assert detect_language(text) == expected


def test_split_japanese_sentences_on_terminals():
    text = (
        "機械学習とは何ですか。学習率は0.2から0.5が一般的です！本当にそうでしょうか？"
    )
    assert split_sentences(text) == [
        "機械学習とは何ですか。",
        "学習率は0.2から0.5が一般的です！",
        "本当にそうでしょうか？",
    ]


def test_split_japanese_keeps_quotes_and_parentheses_whole():
    text = "彼は「過学習は悪い。正則化が必要だ。」と言った。これは（補足。まだ括弧の中）続きの文です。"
    assert split_sentences(text) == [
        "彼は「過学習は悪い。正則化が必要だ。」と言った。",
        "これは（補足。まだ括弧の中）続きの文です。",
    ]


def test_split_unclosed_bracket_does_not_block_later_cuts():
    text = "閉じない「括弧のある文です。次の文もここにあります。"
    assert split_sentences(text) == [
        "閉じない「括弧のある文です。",
        "次の文もここにあります。",
    ]


def test_split_english_decimals_abbreviations_and_initials():
    text = "Dr. Smith works in the U.S. on ML. The rate is 0.2, e.g. small. J. Doe agreed (see Fig. 2). Then he left."
    assert split_sentences(text, "en") == [
        "Dr. Smith works in the U.S. on ML.",
        "The rate is 0.2, e.g. small.",
        "J. Doe agreed (see Fig. 2).",
        "Then he left.",
    ]


def test_split_english_quote_closing_after_stop():
    assert split_sentences(
        'He said "Stop right now." Then he left the room.', "en"
    ) == [
        'He said "Stop right now."',
        "Then he left the room.",
    ]


def test_split_markdown_lines_bullets_and_headings():
    text = "## 過学習の対策\n- 正則化を使うことが有効です\n- データを増やすことも有効です\n1. **早期終了**を検討します[1]。"
    assert split_sentences(text) == [
        "過学習の対策正則化を使うことが有効です",  # a short heading joins the next piece
        "データを増やすことも有効です",
        "早期終了を検討します。",
    ]


def test_split_short_pieces_merge_and_blank_input():
    assert split_sentences("はい。") == ["はい。"]
    assert split_sentences("Yes. It is a fine model.", "en") == [
        "Yes. It is a fine model."
    ]
    assert split_sentences("The model is fine. Yes.", "en") == [
        "The model is fine. Yes."
    ]
    assert split_sentences("") == []
    assert split_sentences("  \n ") == []


def test_normalize_nfkc_lower_whitespace():
    assert normalize("  ＡＢＣ　ﾃｽﾄ\n 1２3 ") == "abc テスト 123"


def test_char_ngrams_drop_punctuation_and_keep_short_text():
    assert char_ngrams("Ab、c。d", 3) == {"abc", "bcd"}
    assert char_ngrams("東京", 3) == {"東京"}
    assert char_ngrams("。", 3) == set()
    assert len(char_ngrams("過学習を防ぐ", 2)) == 5
    with pytest.raises(ValueError):
        char_ngrams("x", 0)


def test_numbers_arabic_kanji_and_scaled():
    found = numbers(
        "2,000円と三人、3万人、1.5億円、二十三歳、007番、3.50ドル、二〇二三年、一人、千二百件"
    )
    assert {
        "2000",
        "3",
        "30000",
        "1.5",
        "150000000",
        "23",
        "7",
        "3.5",
        "2023",
        "1200",
    } <= found
    assert "1" not in found  # 一 alone is skipped
    assert numbers("no numbers here") == set()
    assert numbers("The 2.0 release had 1,024 users") == {"2", "1024"}
    assert numbers("三万人") >= {"3", "30000"}


@pytest.mark.parametrize(
    "kanji, value",
    [("二十三", 23), ("千二百", 1200), ("二〇二三", 2023), ("十", 10), ("百五", 105)],
)
def test_kanji_to_int(kanji, value):
    assert kanji_to_int(kanji) == value


def test_entities_japanese_and_english():
    assert entities(
        "アホウドリはPhoebastria albatrusという鳥で、ベーリング海に住む。", "ja"
    ) == {
        "アホウドリ",
        "ベーリング",
        "phoebastria",
        "albatrus",
    }
    found = entities(
        "The tower in Paris was built by Gustave Eiffel. NASA said so.", "en"
    )
    assert found == {"paris", "gustave", "eiffel", "nasa"}


def test_content_tokens_japanese_uses_lemmas_and_drops_function_words():
    tokens = content_tokens("機械学習の過学習を防ぐために正則化を行います。", "ja")
    keys = [t.key for t in tokens]
    assert "学習" in keys and "防ぐ" in keys and "機械" in keys
    assert "ます" not in keys and "行う" not in keys and "を" not in keys


def test_content_tokens_english_stop_words_and_stems():
    tokens = content_tokens("The models were running on GPUs", "en")
    assert [t.surface for t in tokens] == ["models", "running", "gpus"]
    assert [t.key for t in tokens] == ["model", "runn", "gpu"]
    assert stem("is") == "is" and stem("played") == "play"
    assert {"model", "models"} <= token_keys("The models", "en")
