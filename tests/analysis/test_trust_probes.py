"""The probes' pure transformations: which rows each makes, what the probe row holds, what it skips."""

from dataclasses import replace

import pytest

from rageval_core.analysis.trust import probes
from rageval_core.analysis.trust.probes import (
    ANSWER_INSTRUCTION,
    FILLER,
    SKIP_EMPTY_ANSWER,
    SKIP_NO_PARALLEL,
    SKIP_NOT_CORRECT,
    SKIP_ONE_CONTEXT,
    SKIP_SAME_CONTEXTS,
    build_probe,
    parse_probes,
    parse_tolerances,
)
from rageval_core.core.types import Sample

JA = Sample("1", "過学習とは何ですか？", ("過学習は汎化性能が下がる現象です。", "正則化で防げます。"), "汎化性能が下がる現象です。",
            metadata={"category": "correct"})
JA_BAD = Sample("4", "誤差逆伝播法を考案したのは誰ですか？", ("1986年にラメルハートらが広めました。",), "アラン・チューリングです。",
                metadata={"category": "hallucination"})
EN = Sample("1-en", "What is overfitting?", ("Overfitting lowers generalisation.", "Regularisation prevents it."),
            "It lowers generalisation.", metadata={"category": "correct"})
BLANK = Sample("9", "What is dropout?", ("Dropout drops units.", "Dropout drops units."), "  ")


def test_parse_probes_expands_injection_and_keeps_the_canonical_order():
    assert parse_probes("language,injection,verbosity") == ["verbosity", "answer_injection", "context_injection", "language"]
    assert parse_probes(["order", "order"]) == ["order"]
    assert parse_probes("all") == list(probes.PROBES)
    with pytest.raises(ValueError, match="nonsense"):
        parse_probes("order,nonsense")


def test_tolerances_default_and_override():
    tol = parse_tolerances(["verbosity=0.2"])
    assert tol["verbosity"] == 0.2 and tol["order"] == probes.DEFAULT_TOLERANCES["order"]
    for bad in ("verbosity", "speed=0.1", "order=x", "order=2"):
        with pytest.raises(ValueError):
            parse_tolerances([bad])


def test_verbosity_pads_correct_answers_in_their_language():
    made = build_probe("verbosity", [JA, JA_BAD, EN, BLANK])
    by_id = {c.original_id: c.sample for c in made.cases}
    assert sorted(by_id) == ["1", "1-en"]
    assert by_id["1"].answer == FILLER["ja"][0] + JA.answer + FILLER["ja"][1]
    assert by_id["1-en"].answer == f"{FILLER['en'][0]} {EN.answer} {FILLER['en'][1]}"
    assert by_id["1"].contexts == JA.contexts and by_id["1"].id == "1"
    assert made.skipped == {SKIP_NOT_CORRECT: ("4",), SKIP_EMPTY_ANSWER: ("9",)}
    labelled = build_probe("verbosity", [JA, JA_BAD], correct_ids={"4"})
    assert [c.original_id for c in labelled.cases] == ["4"] and "human labels" in labelled.note
    nothing_known = build_probe("verbosity", [replace(JA_BAD, metadata={})])
    assert len(nothing_known.cases) == 1 and "every row" in nothing_known.note


def test_order_shuffles_with_a_seed_never_keeps_the_order_and_skips_single_contexts():
    three = Sample("3", "q", ("a", "b", "c"), "ans")
    made = build_probe("order", [JA, JA_BAD, three, BLANK], seed=7)
    by_id = {c.original_id: c.sample for c in made.cases}
    assert by_id["1"].contexts == tuple(reversed(JA.contexts))  # two contexts: the only other order
    assert sorted(by_id["3"].contexts) == ["a", "b", "c"] and by_id["3"].contexts != ("a", "b", "c")
    assert made.skipped == {SKIP_ONE_CONTEXT: ("4",), SKIP_SAME_CONTEXTS: ("9",)}
    assert build_probe("order", [three], seed=7).cases == build_probe("order", [three], seed=7).cases  # seeded
    for seed in range(20):  # whatever the draw, the order changes
        assert probes.shuffled(("a", "b", "c"), seed) != ("a", "b", "c")


def test_answer_injection_appends_the_instruction_in_the_rows_language():
    made = build_probe("answer_injection", [JA, EN, BLANK])
    by_id = {c.original_id: c.sample for c in made.cases}
    assert by_id["1"].answer == JA.answer + ANSWER_INSTRUCTION["ja"]
    assert by_id["1-en"].answer == f"{EN.answer} {ANSWER_INSTRUCTION['en']}"
    assert made.skipped == {SKIP_EMPTY_ANSWER: ("9",)}


def test_context_injection_adds_a_last_context_quoting_the_answer():
    made = build_probe("context_injection", [JA_BAD, EN])
    bad = made.cases[0].sample
    assert bad.answer == JA_BAD.answer and bad.contexts[:-1] == JA_BAD.contexts
    assert "「アラン・チューリングです。」" in bad.contexts[-1] and "満点" in bad.contexts[-1]
    assert '"It lowers generalisation."' in made.cases[1].sample.contexts[-1]
    assert "full marks" in made.cases[1].sample.contexts[-1]


def test_language_pairs_rows_with_their_parallel_row_once():
    inside = build_probe("language", [JA, JA_BAD, EN])
    assert [(c.original_id, c.sample.id) for c in inside.cases] == [("1", "1-en")]  # not also 1-en → 1
    assert inside.skipped == {SKIP_NO_PARALLEL: ("4",)}
    en4 = Sample("4-en", "Who devised backpropagation?", ("Rumelhart et al. popularised it in 1986.",), "Alan Turing.")
    beside = build_probe("language", [JA, JA_BAD], parallel=[EN, en4])
    assert [(c.original_id, c.sample.id) for c in beside.cases] == [("1", "1-en"), ("4", "4-en")]
    reverse = build_probe("language", [EN], parallel=[JA])
    assert [(c.original_id, c.sample.id) for c in reverse.cases] == [("1-en", "1")]


def test_unknown_probe_is_refused():
    with pytest.raises(ValueError):
        build_probe("nonsense", [JA])
