"""Page files and titles (catalogue keys), named once so pages can link to each other with ``st.switch_page``."""

from __future__ import annotations

from dataclasses import dataclass

from ui.i18n import t


@dataclass(frozen=True)
class PageSpec:
    path: str
    title_key: str  # catalogue key of the title (ui/locales): titles follow the UI language
    icon: str
    url_path: str

    @property
    def title(self) -> str:
        return t(self.title_key)

    @property
    def heading(self) -> str:
        """The page's own heading: its icon and title."""
        return f"{self.icon} {self.title}"


DATASET = PageSpec("app_pages/dataset.py", "nav.dataset", "📄", "dataset")
PROMPTS = PageSpec("app_pages/prompts.py", "nav.prompts", "📝", "prompts")
EVALUATE = PageSpec("app_pages/evaluate.py", "nav.evaluate", "▶️", "evaluate")
COMPARE = PageSpec("app_pages/compare.py", "nav.compare", "📊", "compare")
INSPECT = PageSpec("app_pages/inspect_sample.py", "nav.inspect", "🔍", "inspect")
HISTORY = PageSpec("app_pages/history.py", "nav.history", "🗂️", "history")
TESTSET = PageSpec("app_pages/testset.py", "nav.testset", "🧪", "testset")
TRUST = PageSpec("app_pages/trust.py", "nav.trust", "🛡️", "trust")

ALL = (DATASET, TESTSET, PROMPTS, EVALUATE, COMPARE, TRUST, INSPECT, HISTORY)
