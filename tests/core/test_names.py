"""Proper names: katakana loanwords the dictionary knows are words, not names; unknown katakana stays a name."""

from __future__ import annotations

from rageval_core.core.names import entities


def test_known_katakana_common_nouns_are_not_names() -> None:
    assert entities("北日本宇宙機構のチームが管理を担っている。", "ja") == set()
    assert entities("フェリーとキロメートルとカメラ", "ja") == set()
    assert entities("トランスフォーマーモデルはアテンションを使う", "ja") == set()


def test_katakana_names_stay_names_even_when_split_into_known_pieces() -> None:
    # ワシントン and グーグル are proper nouns; オカフォー splits into オカ (丘) + フォー, a kanji lemma: a name
    assert entities("ワシントンとオカフォーとグーグルのデータベース", "ja") == {"ワシントン", "オカフォー", "グーグル"}
    assert entities("エンジニアのマリア・オカフォー", "ja") == {"マリア", "オカフォー"}


def test_english_names_skip_the_sentence_initial_word_and_stop_words() -> None:
    assert entities("The bridge in Rotterdam was built by Maria Okafor.", "en") == {"rotterdam", "maria", "okafor"}
    assert entities("Doors open Monday to Friday.", "en") == {"monday", "friday"}
