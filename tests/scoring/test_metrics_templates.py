"""The shipped templates of the decomposed tasks: present in ja and en, checked, cache-friendly layout."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rageval_core.scoring.prompts import load_template
from rageval_core.core.tasks import schema_for
from rageval_core.core.tasks import (
    ATTRIBUTE_REFERENCE,
    CLASSIFY_CORRECTNESS,
    CONTEXT_VERDICTS,
    EXTRACT_CLAIMS,
    EXTRACT_RELEVANT_SENTENCES,
    GENERATE_QUESTIONS,
    VERIFY_CLAIMS,
    VERIFY_CLAIMS_WITH_REFERENCE,
)

ROOT = Path(__file__).resolve().parents[2]
# task → (variables, the placeholder that must come last: what varies most between calls)
TASKS = {
    EXTRACT_CLAIMS: ({"question", "answer"}, "answer"),
    VERIFY_CLAIMS: ({"contexts", "claims"}, "claims"),
    VERIFY_CLAIMS_WITH_REFERENCE: ({"contexts", "reference", "reference_claims", "claims"}, "claims"),
    GENERATE_QUESTIONS: ({"answer", "n"}, "answer"),
    CONTEXT_VERDICTS: ({"question", "contexts", "reference", "reference_kind"}, "reference"),
    ATTRIBUTE_REFERENCE: ({"question", "contexts", "reference_sentences"}, "reference_sentences"),
    EXTRACT_RELEVANT_SENTENCES: ({"question", "contexts"}, "question"),
    CLASSIFY_CORRECTNESS: ({"question", "reference_claims", "answer_claims"}, "answer_claims"),
}


@pytest.mark.parametrize("language", ["ja", "en"])
@pytest.mark.parametrize("task", sorted(TASKS))
def test_template_layout(task, language):
    template = load_template(task, language)
    variables, last = TASKS[task]
    assert set(template.variables) == variables and set(template.placeholders) == variables
    assert template.index_base == 0  # judge indices are 0-based, like the schema's claim_index
    assert template.roles == ("system", "user")
    # the system part (instructions + few-shot example) takes no data: it is the cacheable prefix
    system = template.text.split("---user---")[0]
    assert not set(re.findall(r"(?<!\{)\{([a-z_]+)\}(?!\})", system)) - {"n"}  # n is fixed for a run
    assert template.placeholders[-1] == last
    # the few-shot example in the instructions is valid JSON of the task's shape
    rendered = template.to_messages(**{v: ["x"] if v.endswith("s") and v != "answer_claims" else "x" for v in variables})
    assert "{" in rendered[0].content and "{{" not in rendered[0].content
    untrusted = {"question", "answer", "contexts", "claims", "reference", "reference_claims", "reference_sentences", "answer_claims"}
    assert untrusted & variables <= template.untrusted


def test_japanese_templates_are_written_in_japanese():
    for task in TASKS:
        text = load_template(task, "ja").text
        assert len(re.findall(r"[\u3040-\u30ff]", text)) > 50, task
    assert "日本語で" in load_template(GENERATE_QUESTIONS, "ja").text


def test_examples_in_templates_match_the_task_schema():
    """A few-shot example is what a model copies: it must be valid output of the schema sent with it."""
    import jsonschema
    for task in TASKS:
        for language in ("ja", "en"):
            system = load_template(task, language).to_messages(
                **{v: "x" for v in TASKS[task][0]}
            )[0].content
            outputs = [json.loads(line.split(":", 1)[1]) for line in system.splitlines() if line.startswith(("Output:", "出力:"))]
            assert outputs, (task, language)
            # the shape line ("Reply with JSON only: {...}") shows the same schema
            shapes = [line[line.index("{"):] for line in system.splitlines() if line.startswith(("Reply with JSON", "JSON のみ", "次の形式の JSON"))]
            assert len(shapes) == 1, (task, language)
            outputs.append(json.loads(shapes[0]))
            for output in outputs:
                jsonschema.validate(output, schema_for(task))


def test_economy_example_counts_a_wrong_fact_as_missing_like_the_correctness_example():
    """FN must mean the same in both modes: a reference fact the answer gets wrong is missing (RAGAS's
    classification example puts 'fusion' in FN when the answer says 'fission')."""
    for language in ("ja", "en"):
        text = load_template(VERIFY_CLAIMS_WITH_REFERENCE, language).text
        output = json.loads(text.split("Output:" if language == "en" else "出力:")[1].split("\n")[0].replace("{{", "{").replace("}}", "}"))
        wrong = [v for v in output["verdicts"] if v["reference_verdict"] == 0]
        assert wrong and output["missing_reference_claims"] == [1, 2]
        classify = load_template(CLASSIFY_CORRECTNESS, language).text
        assert "FN" in classify and ("gets wrong" in text or "誤って述べている" in text)


def test_calls_per_row_bench_prints_the_machine_readable_line():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "calls_per_row.py")], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    last = out.strip().splitlines()[-1]
    match = re.fullmatch(r"calls_per_row=([\d.]+) ragas_calls_per_row=([\d.]+)", last)
    assert match and float(match.group(1)) <= 0.75 * float(match.group(2))
    assert "economy_calls_per_row=" in out


def test_claim_extraction_drops_the_hedge_not_the_fact():
    """A hedged hallucination ("I think X") must still be checked: the example keeps X as a claim."""
    for language, hedge in (("en", "I think"), ("ja", "と思います")):
        text = load_template(EXTRACT_CLAIMS, language).text
        example_answer = next(line for line in text.splitlines() if line.startswith(("Answer:", "回答:")))
        output = next(line for line in text.splitlines() if line.startswith(("Output:", "出力:")))
        assert hedge in example_answer and hedge not in output
        assert ("keep the\n  fact" in text) if language == "en" else ("事実は主張として残します" in text)
