"""Issue 36, item 1: one escaping rule for every text from data, a model or a user. A scan of rageval_ui/ (pages
included) finds every argument Streamlit renders as Markdown and fails on any the rule in
tests/support/markdown_sinks.py cannot prove safe (escaped with ``md_escape`` / ``md_code`` / ``md_link``, a
literal, a number, or a catalogue string whose placeholders are so); the catalogue keeps placeholders out of code
spans, where no escape works; and the helpers hold against the Inspect trace-id breakout."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rageval_ui.safe_text import md_code, md_escape, md_link
from tests.support.markdown_sinks import Finding, Scanner

ROOT = Path(__file__).resolve().parents[2]

# What the rule cannot see, each with why it is safe. (path, regular expression over the argument's source, why)
ALLOWED: list[tuple[str, str, str]] = [
    # Every page's heading: PageSpec.heading is a property, f"{icon} {t(title_key)}" over nav.py's own constants.
    ("rageval_ui/app_pages/*.py", r"nav\.[A-Z]+\.heading", "a page's icon and catalogue title (nav.PageSpec)"),
    # A note this page put into session state two lines above from t("testset.bulk_done", ...) with escaped parts.
    ("rageval_ui/app_pages/testset.py", r"st\.session_state\.pop\(BULK_NOTE\)", "the page's own catalogue note"),
]


def _allowed(finding: Finding) -> bool:
    return any(Path(finding.path).match(pattern) and re.fullmatch(source, finding.source)
               for pattern, source, _ in ALLOWED)


@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    return list(Scanner(ROOT).findings())


def test_no_page_hands_unescaped_text_to_a_markdown_call(findings: list[Finding]) -> None:
    unproven = [str(f) for f in findings if not _allowed(f)]
    assert not unproven, ("text reaches a Markdown-rendering Streamlit call without md_escape / md_code / md_link "
                          "(tests/support/markdown_sinks.py says what counts as safe):\n" + "\n".join(unproven))


def test_every_allow_list_entry_is_still_needed(findings: list[Finding]) -> None:
    stale = [entry for entry in ALLOWED
             if not any(Path(f.path).match(entry[0]) and re.fullmatch(entry[1], f.source) for f in findings)]
    assert not stale, f"allow-list entries that match nothing any more (remove them): {stale}"


def _scan(source: str) -> list[str]:
    scanner = Scanner(ROOT, packages=(), extra={"rageval_ui/probe_page.py": source})
    return [f.source for f in scanner.findings()]


HEADER = "import streamlit as st\nfrom rageval_ui.i18n import t\nfrom rageval_ui.safe_text import md_code, md_escape\n"


@pytest.mark.parametrize("line", [
    'st.caption(t("inspect.trace", trace_id=f"`{meta[\'trace_id\']}`"))',  # the breakout
    "st.markdown(f'**{row.question}**')",
    "st.info(sample.answer)",
    "st.expander(t('inspect.judge', judge=judge))",
    "st.tabs([name for name in run_names])",
    "st.radio('x', ids, format_func=lambda i: f'#{i}')",
    "st.pills('x', ids)",
    "st.button('go', help=f'row {row_id}')",
    "(st.warning if bad else st.success)(message)",
    "st.write('run', run_id)",
    "st.metric(info.name, 3)",
    "st.caption(f'{value!r}')",
])
def test_the_rule_flags_data_in_every_kind_of_sink(line: str) -> None:
    assert _scan(HEADER + line + "\n"), f"not flagged: {line}"


@pytest.mark.parametrize("line", [
    "st.caption(t('inspect.trace', trace_id=md_code(meta['trace_id'])))",
    "st.markdown(f'**{md_escape(row.question)}** {score:.3f} ({len(rows)})')",
    "st.tabs([t('compare.tab.rows'), t('compare.tab.runs')])",
    "st.radio('x', ids, format_func=lambda i: md_escape(i))",
    "names = {'a': t('split.train')}\nst.radio('x', list(names), format_func=names.get)",
    "def note(n: int) -> None:\n    st.toast(t('testset.removed_rows', n=n))",
    "label = t('split.deal')\nlabel += ' ' + md_escape(extra)\nst.button(label)",
    "for word in ('a', 'b'):\n    st.caption(word)",
    "def show(text):\n    st.caption(text)\nshow(t('split.none'))\nshow(md_escape(x))",
])
def test_the_rule_accepts_escaped_catalogue_and_numeric_text(line: str) -> None:
    assert _scan(HEADER + line + "\n") == []


def test_a_parameter_is_unsafe_once_any_caller_passes_data() -> None:
    source = HEADER + "def show(text):\n    st.caption(text)\nshow(t('split.none'))\nshow(row.answer)\n"
    assert _scan(source) == ["text"]


def test_no_catalogue_placeholder_sits_in_a_code_span() -> None:
    """Inside backticks a backslash is shown, not read: an escaped value shows its escapes and a backtick in it
    closes the span. Values shown as code are passed as md_code(...), which makes its own span."""
    found = []
    for language in ("en", "ja"):
        catalogue = json.loads((ROOT / "rageval_ui" / "locales" / f"{language}.json").read_text(encoding="utf-8"))
        for key, text in catalogue.items():
            for span in re.findall(r"(`+)(.+?)\1", text):
                if re.search(r"(?<!\{)\{[a-z_0-9]+\}(?!\})", span[1]):
                    found.append(f"{language}:{key}: {text}")
    assert not found, "\n".join(found)


def test_md_code_keeps_a_backtick_inside_the_span() -> None:
    hostile = "abc` ![x](http://127.0.0.2:9/x.png) `<img src=x>"
    span = md_code(hostile)
    fence = re.match(r"`+", span).group(0)
    assert len(fence) == 2 and span.endswith(fence) and fence not in span[len(fence):-len(fence)]
    assert md_code("`edge`") == "`` `edge` ``"  # CommonMark strips the padding spaces
    assert "\n" not in md_code("two\nlines")


def test_md_link_encodes_the_url_and_shows_its_host() -> None:
    link = md_link(md_escape("trace"), "http://phoenix.local/t/a b)](http://evil.example/x.png)")
    assert link.startswith("[trace](http://phoenix.local/t/a%20b%29%5D%28http://evil.example/x.png%29) (")
    assert link.endswith("(phoenix\\.local)")
    assert md_link("trace", "javascript:alert(1)") == "trace"
    assert md_link("trace", "//evil.example/x") == "trace"
