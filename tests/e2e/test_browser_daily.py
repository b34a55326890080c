"""Daily use, round two (issue 38), in a real browser (Debian's Chromium through Playwright): the landing page in
the browser's language (item 2), side runs kept under their parent in the run pickers and History (item 3), labels
by key and one click a row (item 5), prompt versions in their own tab and side by side (item 6).

One `streamlit run app.py` serves every test here, with state in its own RAGEVAL_HOME; each test opens its own
browser context (the language is the context's). Skips with a reason when Chromium or playwright is missing, unless
RAGEVAL_REQUIRE_E2E=1.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import new_tab as support_tab

pytestmark = pytest.mark.e2e

TEXT_TIMEOUT_MS = 90_000  # a deadline to wait for text on a loaded 2-core machine, not a timing
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("RAGEVAL_SCREENSHOTS") or Path(tempfile.gettempdir()) / "rageval-e2e-screenshots")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e-daily")


def new_tab(browser: Any, locale: str = "en-US") -> Any:
    from playwright.sync_api import expect

    expect.set_options(timeout=TEXT_TIMEOUT_MS)
    return support_tab(browser, locale=locale)


def main(tab: Any) -> Any:
    return tab.get_by_test_id("stMain")


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("locale", "sample", "next_step", "heading"), [
    ("en-US", "ml_qa_en", "Next: Prompts & rubric", "Prompts & rubric"),
    ("ja-JP", "ml_qa_ja", "次へ：プロンプトとルーブリック", "プロンプトとルーブリック"),
])
def test_the_first_visit_follows_the_browser_language(server: str, browser: Any, locale: str, sample: str,
                                                      next_step: str, heading: str) -> None:
    """Item 2: the UI language and the landing dataset follow navigator.language; the page's one primary button is
    the tour's next step (on the Japanese sample the recording's button is there too, as a secondary one)."""
    from playwright.sync_api import expect

    tab = new_tab(browser, locale)
    try:
        tab.goto(server)
        expect(main(tab).get_by_text(sample, exact=True)).to_be_visible()
        primary = main(tab).locator("[data-testid=stBaseButton-primary]:visible")  # a button with help has a hidden twin
        expect(primary).to_have_count(1)
        expect(primary).to_contain_text(next_step)
        if locale == "ja-JP":
            secondary = main(tab).locator("[data-testid=stBaseButton-secondary]:visible")
            expect(secondary.filter(has_text="qwen2.5-coder-1.5b")).to_be_visible()
        primary.click()
        expect(tab.get_by_role("heading", name=heading)).to_be_visible()
    finally:
        tab.context.close()


@pytest.fixture(scope="module")
def side_runs(home: Path) -> dict[str, str]:
    """Two evaluations of the English sample, a probe of the first and a prompt test, stored where the server reads."""
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.scoring.metrics.registry import build_scorers
    from tests.support.runs import run_rows

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")

        def one(**settings: object) -> str:
            return run_rows(ds.samples[:2], build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name,
                            dataset_digest=ds.content_hash, settings=dict(settings)).run_id

        out = {"u1": one()}
        out["p1"] = one(probe="paraphrase", base_run=out["u1"], probe_seed=0)
        out["u2"] = one()
        out["t"] = one(prompt_test="judge")
        return out


def _options(tab: Any, label: str) -> list[str]:
    """The options of the select box ``label`` (opened, read, closed again)."""
    box = main(tab).get_by_test_id("stSelectbox").filter(has_text=label).first
    box.click()
    options = tab.get_by_role("option")
    options.first.wait_for()
    texts = [o.inner_text() for o in options.all()]
    tab.keyboard.press("Escape")
    return texts


@pytest.mark.timeout(900)
def test_pickers_list_the_users_runs_and_side_runs_on_the_toggle(server: str, browser: Any,
                                                                 side_runs: dict[str, str]) -> None:
    """Item 3: Compare's picker starts on the newest run the user started (not the prompt test made after it) and
    lists side runs under their parent only with the toggle, which History then shows the same way."""
    from playwright.sync_api import expect

    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/compare")
        expect(tab.get_by_role("heading", name="Compare")).to_be_visible()
        toggle = main(tab).get_by_text("Show side runs (2)")
        expect(toggle).to_be_visible()
        options = _options(tab, "Run")
        assert [side_runs["u2"] in options[0], side_runs["u1"] in options[1], len(options)] == [True, True, 2]
        toggle.click()
        expect(main(tab).get_by_role("switch", name="Show side runs (2)")).to_be_checked()
        tab.wait_for_timeout(500)
        tab.get_by_test_id("stStatusWidget").wait_for(state="hidden")  # the rerun with the toggle on has drawn
        options = _options(tab, "Run")
        order = [next(k for k, v in side_runs.items() if v in o) for o in options]
        assert order == ["u2", "u1", "p1", "t"], options
        assert options[2].startswith("↳ probe: paraphrase") and options[3].startswith("↳ prompt test: judge")
        tab.get_by_test_id("stSidebarNav").get_by_text("History", exact=True).click()
        expect(tab.get_by_role("heading", name="History")).to_be_visible()
        expect(main(tab).get_by_role("switch", name="Show side runs (2)")).to_be_checked()  # one setting for all
        history = [next(k for k, v in side_runs.items() if v in o) for o in _options(tab, "Run")]
        assert history == ["u2", "u1", "p1", "t"]
    finally:
        tab.context.close()


@pytest.fixture(scope="module")
def label_run(home: Path) -> dict[str, str]:
    """The offline rubric5 judge (four criteria a row) on three rows of the English sample: the newest run."""
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from tests.support.runs import run_rows

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
        done = run_rows(ds.samples[:3], [JudgeScorer("rubric5")], config=ProviderConfig(), dataset_name=ds.name,
                        dataset_digest=ds.content_hash)
        return {"run": done.run_id, "hash": ds.content_hash}


def _idle(tab: Any) -> None:
    """Until the app has finished the rerun it is in (its status widget gone)."""
    tab.wait_for_timeout(500)
    tab.get_by_test_id("stStatusWidget").wait_for(state="hidden")


def _labels(home: Path, dataset_hash: str) -> dict[str, dict[str, float | None]]:
    """The labels the server stored (one SQLite file under its RAGEVAL_HOME)."""
    from rageval_core.store.runs import Store

    return Store(home / "rageval.sqlite").labels(dataset_hash)


@pytest.mark.timeout(900)
def test_labels_by_key_one_row_at_a_time(server: str, browser: Any, home: Path, label_run: dict[str, str]) -> None:
    """Item 5: G labels every criterion of the row 👍 and shows the next unlabelled row; keys typed into a note do
    nothing; each verdict is coloured and says it is saved; N goes to the next unlabelled row."""
    import re

    from playwright.sync_api import expect

    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/inspect")
        expect(tab.get_by_role("heading", name="Inspect a sample")).to_be_visible()
        row = main(tab).get_by_role("combobox", name="Row")
        expect(row).to_have_value(re.compile(r"^#1-en "))
        expect(main(tab).get_by_text("not labelled", exact=True)).to_have_count(4)
        expect(main(tab).get_by_role("button", name="👍 Whole row")).to_be_visible()
        _idle(tab)
        tab.get_by_role("heading", name="Inspect a sample").click()  # focus on the page, not a field
        tab.keyboard.press("g")
        expect(row).to_have_value(re.compile(r"^#2-en "))
        assert _labels(home, label_run["hash"])["1-en"] == dict.fromkeys(
            ["faithfulness", "answer_relevancy", "context_precision", "answer_correctness"], 1.0)
        # A key typed into a note is text, not a shortcut.
        note = main(tab).get_by_label("Note").first
        note.click()
        note.press_sequentially("bg n")
        expect(note).to_have_value("bg n")
        tab.wait_for_timeout(1000)
        expect(row).to_have_value(re.compile(r"^#2-en "))
        assert all(v is None for v in _labels(home, label_run["hash"]).get("2-en", {}).values())
        tab.get_by_role("heading", name="Inspect a sample").click()
        main(tab).get_by_role("button", name="👎 Whole row").click()
        expect(row).to_have_value(re.compile(r"^#3-en "))
        # Back to row 1: four green verdicts, saved.
        for _ in range(2):
            main(tab).get_by_role("button", name="◀").click()
            _idle(tab)
        expect(row).to_have_value(re.compile(r"^#1-en "))
        good = main(tab).get_by_text("👍 good · saved")  # after the badge's icon
        expect(good).to_have_count(4)
        colour = good.first.evaluate("e => getComputedStyle(e.closest('span')).backgroundColor")
        red, green, blue = (int(x) for x in re.findall(r"\d+", colour)[:3])
        assert green > red and green > blue, colour  # a green badge
        chosen = main(tab).locator('[data-testid=stFeedback] button[aria-checked="true"]')
        expect(chosen).to_have_count(4)
        colour = chosen.first.evaluate("e => getComputedStyle(e).backgroundColor")
        red, green, blue = (int(x) for x in re.findall(r"\d+", colour)[:3])
        assert green > red and green > blue, colour  # the chosen thumb filled green, not just a darker outline
        SHOTS.mkdir(parents=True, exist_ok=True)
        main(tab).get_by_role("heading", name="Human labels").evaluate("e => e.scrollIntoView({block: 'start'})")
        tab.wait_for_timeout(800)
        tab.screenshot(path=str(SHOTS / "inspect-labels.png"))
        _idle(tab)
        tab.get_by_role("heading", name="Inspect a sample").click()
        tab.keyboard.press("n")
        expect(row).to_have_value(re.compile(r"^#3-en "))
    finally:
        tab.context.close()


STRICT = "Be STRICT."


def _strict_judge(failing_answer: str) -> Any:
    """rubric5 answers: 5 everywhere, but faithfulness 1 on one row when the prompt says STRICT."""
    def respond(request: Any) -> dict:
        low = STRICT in request.prompt and failing_answer in request.prompt
        out: dict[str, Any] = {}
        for c in ("faithfulness", "answer_relevancy", "context_precision", "answer_correctness"):
            out[f"{c}_score"] = 1 if low and c == "faithfulness" else 5
            out[f"{c}_reason"] = "unsupported claim" if low and c == "faithfulness" else "fine"
        return out

    return respond


def _fill(tab: Any, field: Any, value: str) -> None:
    field.fill(value)
    field.press("Enter")
    _idle(tab)


@pytest.mark.timeout(900)
def test_prompt_versions_tab_and_grid(server: str, browser: Any) -> None:
    """Item 6: Versions in their own tab, two distinct name boxes, the name box empty after a save; two versions
    judge the pinned rows on a model server (the local fake), the differing row counted first."""
    from playwright.sync_api import expect

    from rageval_core.data.datasets import load_dataset
    from rageval_core.testing.fake_llm import FakeLLMServer

    ds = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
    tab = new_tab(browser)
    try:
        with FakeLLMServer(responder=_strict_judge(ds.samples[0].answer)) as fake:
            tab.goto(f"{server}/prompts")
            expect(tab.get_by_role("heading", name="Prompts & rubric")).to_be_visible()
            edit_height = tab.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
            for label in ("Name of the new rubric or template version", "Name of the new step version"):
                expect(main(tab).get_by_label(label, exact=True)).to_have_count(1)
            expect(main(tab).get_by_label("Version name", exact=True)).to_have_count(0)
            main(tab).get_by_role("tab", name="🗂️ Versions").click()
            name = main(tab).get_by_label("Name of the new rubric or template version", exact=True)
            _fill(tab, name, "v1")
            main(tab).get_by_role("button", name="Save rubric version").click()
            expect(tab.get_by_text("Saved #1 v1")).to_be_visible()
            expect(name).to_have_value("")
            # A model server, and a stricter editor than the saved v1.
            sidebar = tab.get_by_test_id("stSidebar")
            sidebar.get_by_test_id("stSelectbox").filter(has_text="Provider").click()
            tab.get_by_role("option", name="OpenAI-compatible server").click()
            _fill(tab, sidebar.get_by_label("Base URL", exact=True), fake.openai_base_url)
            _fill(tab, sidebar.get_by_label("Model", exact=True), "fake-judge")
            main(tab).get_by_role("tab", name="✏️ Rubric & template").click()
            instructions = main(tab).get_by_label("Instructions (the role line that opens the prompt)")
            _fill(tab, instructions, instructions.input_value() + " " + STRICT)
            instructions.blur()
            _idle(tab)
            main(tab).get_by_role("tab", name="🗂️ Versions").click()
            main(tab).get_by_role("button", name="Judge 3 rows with 2 versions").click()
            expect(main(tab).get_by_text("The versions differ on 1 of 12 row × criterion cells")).to_be_visible()
            expect(main(tab).get_by_text("editor: 3 sent, 0 from the cache", exact=False)).to_be_visible()
            assert fake.count("/chat/completions") == 6
            SHOTS.mkdir(parents=True, exist_ok=True)
            main(tab).get_by_text("The versions differ on 1 of").evaluate("e => e.scrollIntoView({block: 'start'})")
            tab.locator("[data-testid=stDataFrame] canvas").first.wait_for()
            tab.wait_for_timeout(1500)
            tab.screenshot(path=str(SHOTS / "prompts-grid.png"))
            print(f"Prompts page: editor tab {edit_height} px high")
    finally:
        tab.context.close()


@pytest.mark.timeout(900)
def test_the_recorded_prompt_loop_shows_results_on_the_first_click(server: str, browser: Any) -> None:
    """Item 6: one click on the recorded loop replays both versions and shows the comparison, and what it cost is
    said as answers read from the recording (not "10 sent" beside "no calls are sent")."""
    from playwright.sync_api import expect

    tab = new_tab(browser)
    try:
        tab.goto(server)
        main(tab).get_by_test_id("stSelectbox").filter(has_text="Sample dataset").click()
        tab.get_by_role("option", name="trust_labelled.jsonl").click()
        main(tab).get_by_role("button", name="Load sample").click()
        expect(main(tab).get_by_text("trust_labelled", exact=True)).to_be_visible()
        tab.get_by_test_id("stSidebarNav").get_by_text("Prompts & rubric", exact=True).click()
        main(tab).get_by_role("tab", name="👥 vs people").click()
        main(tab).get_by_role("button", name="▶ Use the recorded prompt loop", exact=False).click()
        done = main(tab).get_by_text("answered from the recording", exact=False)
        expect(done).to_be_visible()
        assert " sent" not in done.inner_text()
        expect(main(tab).get_by_text("no calls are sent", exact=False)).to_have_count(0)
        expect(main(tab).get_by_text("nothing goes over the network", exact=False)).to_be_visible()
    finally:
        tab.context.close()
