"""Views: read models for pages, CLI tables and the report, above ``analysis`` (a view may combine the store's
rows with analysis tables; nothing below imports a view).

- ``run_summary``: a run's results as a frame with its costs, cached above the store.
- ``theirs``: another tool's scores the run's rows came with, beside the run's own (``analysis.external_scores``).
- ``trust_answer``: the Trust page's one-screen answer per metric × method (``trust_answer_text``: its words, ja / en).
- ``report``: the HTML report (``analysis.report``) opened by each run's trust answer.
"""

__all__ = ["report", "run_summary", "theirs", "trust_answer", "trust_answer_text"]
