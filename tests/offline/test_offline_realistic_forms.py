"""Issue 37's realistic error forms, each check against hand-made cases: numbers written as words and kanji
numerals, dose / volume / duration units in their families (compound units read as one unit), a changed value
that occurs elsewhere in the context (its slot, not its presence), and negation by antonym."""

from __future__ import annotations

import pytest

from rageval_core.offline.antonyms import opposed, stances
from rageval_core.offline.contradiction import number_swap, sentence_findings, slot_score
from rageval_core.offline.numerals import en_value, number_words, with_digits
from rageval_core.offline.units import check_units, quantities


@pytest.mark.parametrize("words,value", [("twenty-five", 25), ("Forty five", 45), ("three hundred and six", 306),
                                         ("two thousand five hundred", 2500), ("fourteen", 14), ("five six", None)])
def test_english_number_words_have_their_value(words, value):
    assert en_value(words) == value


def test_number_words_become_digits_where_they_are_numbers():
    assert with_digits("Cars check in forty-five minutes early.", "en") == "Cars check in 45 minutes early."
    assert with_digits("A loan can be renewed twice.", "en") == "A loan can be renewed 2 times."
    assert with_digits("one day", "en") == "1 day" and with_digits("a one-year warranty", "en") == "a 1-year warranty"
    assert with_digits("one of the two", "en") == "one of the 2"  # "one" only before a unit or counter
    assert with_digits("none often", "en") == "none often"


def test_kanji_numerals_become_digits_before_a_counter_only():
    assert with_digits("三十分後に二十万円を払い、一月十六日に四百円", "ja") == "30分後に20万円を払い、1月16日に400円"
    assert with_digits("1日三回、二か月、第三回、十四日前", "ja") == "1日3回、2か月、第3回、14日前"
    for kept in ("十分な量", "一般的に", "一度だけ", "統一日", "一時的に"):  # enough, general, once, unified, for a while
        assert with_digits(kept, "ja") == kept
    assert with_digits("十分間待つ", "ja") == "10分間待つ" and with_digits("一時間", "ja") == "1時間"
    assert number_words("三十分後に二回") == {"三十", "二"}
    assert {"forty", "five"} <= number_words("forty-five minutes")


def test_dose_volume_and_duration_units_are_read_in_their_families():
    read = {t: [(q.value, q.unit, q.family) for q in quantities(t)] for t in (
        "4 mg per kg", "10ミリグラム", "5 µg", "10mL", "大さじ2", "2か月以内", "5日以内", "2年後", "30分後", "14 days",
        "two weeks", "forty-five minutes", "a 5-day course", "24h")}
    assert read["4 mg per kg"] == [(4.0, "mg", "mass")]
    assert read["10ミリグラム"] == [(10.0, "ミリグラム", "mass")]  # one unit, not ミリ (a length) + グラム
    assert read["5 µg"] == [(5.0, "μg", "mass")]
    assert read["10mL"] == [(10.0, "ml", "volume")] and read["大さじ2"] == [(2.0, "大さじ", "volume")]
    assert [u for t in ("2か月以内", "5日以内", "2年後", "30分後", "14 days", "a 5-day course", "24h")
            for _, u, f in read[t] if f == "time"] == ["か月", "日", "年", "分", "days", "day", "h"]
    assert read["two weeks"] == [(2.0, "weeks", "time")] and read["forty-five minutes"] == [(45.0, "minutes", "time")]


def test_dates_clock_times_and_fractions_are_not_durations():
    for text in ("3月5日に", "2025年4月", "令和7年4月", "9時30分", "3分の1", "1日3回"):
        assert quantities(text) == (), text


def test_a_unit_changed_within_its_family_is_a_mismatch_and_an_equal_one_is_not():
    assert check_units("Dogs get 4 g per kilogram.", "Give 4 mg per kilogram.").mismatches == (("4 g", "4 mg"),)
    week = check_units("A course lasts 14 weeks.", "A course lasts 14 days. Not for puppies under 6 weeks.")
    assert week.mismatches == (("14 weeks", "14 days"),) and week.same_value == (True,)
    assert check_units("服用間隔は4分以上あけてください。", "服用間隔は4時間以上あけてください。").mismatches == (("4 分", "4 時間"),)
    assert check_units("開封後は2年以内に", "開封後は2か月以内に").mismatches == (("2 年", "2 か月"),)
    equal = check_units("It lasts two weeks.", "It lasts 14 days.")
    assert equal.mismatches == () and "2" in equal.converted
    assert check_units("1回10ミリリットル", "1回10mL").mismatches == ()
    other = check_units("It takes 3 years.", "It takes 2 years and costs 30 days' pay.")
    assert other.same_value == (False,)  # another number in another unit: gated by wording, not always a veto


def test_a_value_that_occurs_elsewhere_is_caught_by_its_slot():
    ev = {"5", "10", "2"}
    # 5 is the booking limit elsewhere; in the borrowing sentence the books' slot holds 10
    assert number_swap("1人5冊まで借りることができます。", "1人10冊まで、2週間借りることができます。", ev, set(), "ja") == ("5", "10")
    assert number_swap("The crossing takes 30 minutes.", "The crossing takes 55 minutes.", {"30", "55"}, set()) == ("30", "55")
    # the claim's value in the same slot of the sentence: no swap (a sentence that lists both)
    assert number_swap("It is open 9 am to 8 pm.", "It is open 9 am to 5 pm on Saturday and 9 am to 8 pm on weekdays.",
                       {"9", "5", "8"}, set()) is None
    # one shared word (minutes) with another fact's number is not enough for a value the evidence holds
    assert number_swap("Cars check in 30 minutes before.", "The crossing takes 55 minutes.", {"30", "55"}, set()) is None
    # per place the claim writes it: 15 is an age in the context, but 15 mL takes the dose's slot (10 mL)
    assert number_swap("7歳以上15歳未満は1回15mLを服用します。", "7歳以上15歳未満は1回10mLを服用します。",
                       {"7", "15", "1", "10"}, set(), "ja") == ("15", "10")
    assert slot_score({("takes", "minutes")}, {("takes", "minutes")}) == 2
    assert slot_score({("in", "minutes")}, {("takes", "minutes")}) == 1


def test_number_words_in_the_claim_meet_digits_in_the_context():
    found = sentence_findings("Cars must check in at least forty-five minutes before departure.",
                              ["Cars must check in at least 30 minutes before departure."], "en",
                              evidence_norm="cars must check in at least 30 minutes before departure.",
                              evidence_text="Cars must check in at least 30 minutes before departure.",
                              evidence_numbers={"30"}, exempt_numbers=set())
    assert [(f.kind, f.claim_says, f.evidence_says) for f in found] == [("number", "45", "30")]
    assert found[0].overlap == 1.0  # the number words are skipped like digits when wording is compared


@pytest.mark.parametrize("claim,sentence,language", [
    ("A permit is optional in zone B.", "A permit is required in zone B.", "en"),
    ("Food is allowed in the reading room.", "Food is prohibited in the reading room.", "en"),
    ("Parking there is allowed.", "Parking there is never permitted.", "en"),
    ("館内での飲食は可能です。", "館内での飲食は禁止です。", "ja"),
    ("利用カードの作成に書類は不要です。", "利用カードの作成には書類が必要です。", "ja"),
    ("焚き火台の使用は不可です。", "焚き火台の使用は可能です。", "ja"),
    ("延長はできません。", "延長は1回に限り可能です。", "ja"),
])
def test_antonyms_take_opposite_stances(claim, sentence, language):
    assert opposed(claim, sentence, language)


@pytest.mark.parametrize("claim,sentence,language", [
    ("A permit is not required.", "A permit is optional.", "en"),
    ("Welcome to the museum; food is prohibited.", "Food is prohibited.", "en"),
    ("届出は必要ありません。", "届出は任意です。", "ja"),
    ("届出は不要です。", "届出は不要です。", "ja"),
])
def test_the_same_stance_in_other_words_is_not_opposed(claim, sentence, language):
    assert opposed(claim, sentence, language) is None


def test_a_negator_reverses_the_stance():
    assert stances("is not required", "en")[0] == {"require": {-1}}
    assert stances("必要ありません", "ja")[0] == {"require": {-1}}
    assert "welcome" not in stances("Welcome to the museum", "en")[1]


def test_an_antonym_flip_vetoes_with_its_words_named():
    sentence = "館内での飲食は禁止ですが、ふた付きの飲み物は持ち込み可能です。"
    found = sentence_findings("館内での飲食は可能です。", [sentence], "ja", evidence_norm=sentence, evidence_text=sentence,
                              evidence_numbers=set(), exempt_numbers=set())
    assert [(f.kind, f.claim_says, f.evidence_says, f.overlap) for f in found] == [("negation", "可能", "禁止", 1.0)]


def test_a_number_present_only_with_another_unit_is_unmatched_for_its_own():
    check = check_units("Dogs get 6 mg of carprofen.", "Give 4 mg per kilogram. Not for puppies younger than 6 weeks.")
    assert check.unmatched == {"6"} and check.mismatches == ()
    assert check_units("Dogs get 4 mg.", "Give 4 mg per kilogram.").unmatched == frozenset()
    # the same number matched with another of the claim's units stays present (10 mL/kg is there, 10分間 is not)
    assert check_units("成人は10mL/kgを10分間にわたって投与します。", "成人は10mL/kg、5–15分毎に再投与する。").unmatched == frozenset()


def test_japanese_dates_ordinals_and_scaled_tails_are_not_slots_for_a_value_elsewhere():
    ev = {"6", "12", "4", "27"}
    assert number_swap("会談は6月12日に予定されていた。", "4月27日に会談を実施した。", ev, set(), "ja") is None
    assert number_swap("第1セットは大坂がリードした。", "第2セットも大坂がリードした。", {"1", "2"}, set(), "ja") is None
