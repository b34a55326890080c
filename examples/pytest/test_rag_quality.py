"""Quality gates on a RAG system's answers, as pytest tests (docs/pytest.md explains every line).

Run from the repository (``conftest.py`` beside this file loads the plugin in a clone that is not pip-installed):

    python -m pytest examples/pytest --rageval-provider offline

With the package installed the plugin loads by itself (entry point ``pytest11``) and the conftest is not needed;
set GEMINI_API_KEY / OPENAI_API_KEY (or RAGEVAL_PROVIDER) to judge with that provider instead. With no judge chosen the
``rageval`` tests are skipped, with the reason, so a laptop without keys still runs the rest of the suite.
A missed threshold fails the test naming each row under the bar, its score and the judge's reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ANSWERS = Path(__file__).with_name("answers.jsonl")  # rows: id, question, contexts, answer (ground_truth optional)


@pytest.mark.rageval
def test_answers_are_faithful_on_average(rageval):
    # the mean over scored rows must reach the bar (the CLI's --fail-under rule)
    rageval.assert_scores(ANSWERS, {"faithfulness": 0.7})


@pytest.mark.rageval
def test_every_answer_addresses_its_question(rageval):
    # every row must reach the bar; an unscored row fails too
    rageval.assert_scores(ANSWERS, {"answer_relevancy": 0.6}, mode="each")


@pytest.mark.rageval
def test_the_one_call_judge_passes_them(rageval):
    scored = rageval.score(ANSWERS, metrics=[], judges=["rubric5"])
    scored.assert_thresholds({"judge:rubric5:faithfulness": 0.8, "judge:rubric5:context_precision": 0.8})


@pytest.mark.rageval
def test_one_row_written_inline(rageval):
    row = {"id": "inline-1", "question": "When are receipts required?",
           "contexts": ["Receipts are required for every expense above 5,000 yen."],
           "answer": "Receipts are required for every expense above 5,000 yen."}
    assert rageval.score([row]).value("inline-1", "faithfulness") >= 0.9
