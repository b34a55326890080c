"""How a score is made: metrics, one-call judges (with their few-shot examples), rubrics, step tasks and their
prompt templates.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "few_shot",
    "judges",
    "metrics",
    "prompts",
    "rubric",
    "step_templates",
]
