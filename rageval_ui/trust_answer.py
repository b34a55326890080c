"""The Trust page's one-screen answer: one bordered row per metric × method with its verdict word and four
sentences (ranks like people? pass / fail as is? the corrected share, what would settle it), each with its figure
and 95% interval. The answer is ``rageval_core.views.trust_answer`` and its words ``views.trust_answer_text`` (the
same sentences open the HTML report); this module lays them out and offers the next row to label."""

from __future__ import annotations

import re

import streamlit as st

from rageval_core.analysis.trust.report import TrustReport
from rageval_core.views.trust_answer import TrustAnswer, trust_answer
from rageval_core.views.trust_answer_text import COLOURS, texts, words
from rageval_ui.i18n import lang, t
from rageval_ui.safe_text import md_escape
from rageval_ui.widgets import metric_label

WIDTHS = [1.1, 1, 1, 1, 1]  # the name and verdict, then the four sentences


def _key(metric: str, method: str) -> str:
    """A container key per line (also its CSS class ``st-key-…``, so only letters, digits and dashes)."""
    return "trust-answer-" + re.sub(r"[^A-Za-z0-9]+", "-", f"{metric}-{method}")


def answer_of(rep: TrustReport) -> TrustAnswer:
    return trust_answer(rep.to_dict())


def _header() -> None:
    cols = st.columns(WIDTHS)
    cols[0].caption(t("trust.answer.col.scorer"))
    cols[1].caption(t("trust.answer.col.ranks"), help=t("trust.answer.ranks_help"))
    cols[2].caption(t("trust.answer.col.pass_fail"), help=t("trust.answer.pass_fail_help"))
    cols[3].caption(t("trust.answer.col.share"), help=t("trust.answer.share_help"))
    cols[4].caption(t("trust.answer.col.settle"), help=t("trust.answer.settle_help"))


def answer_block(answer: TrustAnswer) -> None:
    """The answer, under its heading; a line saying how to get one when no labelled row is scored."""
    language = lang()
    w = words(language)
    if not answer.lines:
        st.subheader(t("trust.answer.heading"))
        st.info(md_escape(w["no_labels"]))
        return
    n = max(line.n_labelled for line in answer.lines)
    st.subheader(t("trust.answer.heading"), help=md_escape(w["caption"].format(n=n, bar=f"{answer.bar:g}")))
    _header()
    for line in answer.lines:
        x = texts(line, language, bar=answer.bar)
        with st.container(border=True, key=_key(line.metric, line.method)):
            cols = st.columns(WIDTHS)
            cols[0].markdown(f"**{md_escape(metric_label(line.metric))}** · {md_escape(line.method)}  \n"
                             f":{COLOURS[line.verdict]}[**{md_escape(x.verdict)}**]")
            for col, sentence in zip(cols[1:], (x.ranks, x.pass_fail, x.share, x.settle)):
                col.markdown(f":small[{md_escape(sentence)}]")
    if any(line.more_labels for line in answer.lines):
        st.caption(md_escape(w["settle.estimate"]))
