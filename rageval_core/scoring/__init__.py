"""How a score is made: metrics, one-call judges, rubrics, step tasks and their prompt templates.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "judges",
    "metrics",
    "prompts",
    "rubric",
    "step_templates",
    "tasks",
]
