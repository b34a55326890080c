"""Page files and titles, named once so pages can link to each other with ``st.switch_page``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    path: str
    title: str
    icon: str
    url_path: str


DATASET = PageSpec("app_pages/dataset.py", "Dataset", "📄", "dataset")
PROMPTS = PageSpec("app_pages/prompts.py", "Prompts & rubric", "📝", "prompts")
EVALUATE = PageSpec("app_pages/evaluate.py", "Evaluate", "▶️", "evaluate")
COMPARE = PageSpec("app_pages/compare.py", "Compare", "📊", "compare")
INSPECT = PageSpec("app_pages/inspect_sample.py", "Inspect a sample", "🔍", "inspect")
HISTORY = PageSpec("app_pages/history.py", "History", "🗂️", "history")
TESTSET = PageSpec("app_pages/testset.py", "Test set", "🧪", "testset")
TRUST = PageSpec("app_pages/trust.py", "Trust", "🛡️", "trust")
