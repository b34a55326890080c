"""A fake-server responder for the one-call judge that agrees with people only when the prompt carries few-shot
examples: without them it passes every answer (what a weak judge with a bare prompt tends to do), with them it
returns the row's human labels. Lets tests see a real, known difference between two prompt versions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rageval_core.analysis.trust.labels import HumanLabels
from rageval_core.core.types import Sample

ANSWER_HEADINGS = ("【生成された回答】", "[Generated answer]")
EXAMPLE_HEADINGS = ("人が判定した例", "Examples judged by people")


def judge_like_people(samples: Sequence[Sample], labels: HumanLabels,
                      criteria: Sequence[str] = ("faithfulness", "answer_correctness")) -> Callable[[Any], dict]:
    """The responder (``FakeLLMServer(responder=...)``): finds the judged row by its answer after the last
    answer heading, then scores each criterion 1, or people's label when examples are in the prompt."""
    by_answer = {s.answer: s.id for s in samples}

    def respond(request: Any) -> dict:
        prompt = request.prompt
        start = max(prompt.rfind(h) for h in ANSWER_HEADINGS)
        row = by_answer[prompt[start:].split("<answer>\n", 1)[1].split("\n</answer>", 1)[0]]
        informed = any(h in prompt for h in EXAMPLE_HEADINGS)
        out: dict[str, Any] = {}
        for c in criteria:
            out[f"{c}_score"] = labels.for_criterion(c)[row] if informed else 1
            out[f"{c}_reason"] = "as the examples" if informed else "looks fine"
        return out

    return respond
