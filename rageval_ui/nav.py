"""Page files and titles (catalogue keys), named once so pages can link to each other with ``st.switch_page``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rageval_ui.i18n import t


@dataclass(frozen=True)
class PageSpec:
    path: str  # absolute: the same pages whether app.py at the top of a clone or the installed rageval_ui/app.py is run
    title_key: str  # catalogue key of the title (rageval_ui/locales): titles follow the UI language
    icon: str
    url_path: str

    @property
    def title(self) -> str:
        return t(self.title_key)

    @property
    def heading(self) -> str:
        """The page's own heading: its icon and title."""
        return f"{self.icon} {self.title}"


# Absolute paths: st.Page and st.switch_page join them to the main script's folder, which differs between
# `streamlit run app.py` in a clone and `rageval ui` (which runs rageval_ui/app.py from site-packages).
PAGES_DIR = Path(__file__).resolve().parent / "app_pages"

DATASET = PageSpec(str(PAGES_DIR / "dataset.py"), "nav.dataset", "📄", "dataset")
PROMPTS = PageSpec(str(PAGES_DIR / "prompts.py"), "nav.prompts", "📝", "prompts")
EVALUATE = PageSpec(str(PAGES_DIR / "evaluate.py"), "nav.evaluate", "▶️", "evaluate")
COMPARE = PageSpec(str(PAGES_DIR / "compare.py"), "nav.compare", "📊", "compare")
INSPECT = PageSpec(str(PAGES_DIR / "inspect_sample.py"), "nav.inspect", "🔍", "inspect")
HISTORY = PageSpec(str(PAGES_DIR / "history.py"), "nav.history", "🗂️", "history")
TESTSET = PageSpec(str(PAGES_DIR / "testset.py"), "nav.testset", "🧪", "testset")
TRUST = PageSpec(str(PAGES_DIR / "trust.py"), "nav.trust", "🛡️", "trust")

ALL = (DATASET, TESTSET, PROMPTS, EVALUATE, COMPARE, TRUST, INSPECT, HISTORY)

# The quick tour of the README and docs/ui.md, in order: each step's page offers the next one as its primary button.
TOUR = (DATASET, PROMPTS, EVALUATE, COMPARE, TRUST, INSPECT)


def next_in_tour(spec: PageSpec) -> PageSpec | None:
    """The page after ``spec`` in the tour (None for the last page and for pages outside it)."""
    paths = [p.path for p in TOUR]
    if spec.path not in paths:
        return None
    at = paths.index(spec.path)
    return TOUR[at + 1] if at + 1 < len(TOUR) else None


def tour_text() -> str:
    """The tour as one line of page titles: "Dataset → Prompts & rubric → …"."""
    return " → ".join(t(p.title_key) for p in TOUR)
