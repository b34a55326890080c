"""The Test set page's "Your RAG" tab: your HTTP endpoint or Python callable answers the test set.

Plain helpers (headers, mapping, the system, tables) and ``render``, which draws the tab. Calls go through
``rageval_core.rag.your_rag`` (the same provider stack as judge calls: timeout, retries, cache). On this page a
header value that looks like a credential must name an environment variable (``Bearer $MY_RAG_TOKEN``): the
page never holds a token, shows only whether each variable is set, and the system keeps only the reference.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from rageval_core.data import datasets
from rageval_core.providers.config import ProviderConfig
from rageval_core.rag.synth import TestItem
from rageval_core.rag.your_rag import (
    CallableRAG,
    EndpointRAG,
    MappingError,
    RagMapping,
    SystemRun,
    answer_with_system,
    parse_header,
    system_stack,
    try_one,
)
from rageval_core.rag.your_rag.mapping import mapping_from_dict
from rageval_ui import data, state, widgets
from rageval_ui.i18n import t
from rageval_ui.safe_text import md_code, md_escape
from rageval_core.core.errors import ConfigError

ENDPOINT, CALLABLE = "endpoint", "callable"  # the kind radio's values; ``_kind_label`` names them
TRY = "testset.yr.try_result"  # the last "try one question" result (reply and what the mapping read)
RUN = "testset.yr.run"  # SystemRun of the current test set
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_SECRET_NAME = re.compile(r"(?i)(authorization|token|key|secret|password|cookie|auth)")


class SetupError(ConfigError):
    """The tab's inputs do not make a system (bad header, mapping, URL or callable)."""


def default_mapping_text() -> str:
    return json.dumps(RagMapping().to_dict(), indent=2)


def header_lines(text: str) -> list[str]:
    """The non-blank lines of the headers box; a credential-looking header must use ``$ENV_VAR``."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in lines:
        try:
            name, value = parse_header(line)
        except ValueError as exc:
            raise SetupError(str(exc)) from None
        if _SECRET_NAME.search(name) and not _VAR.search(value):
            raise SetupError(t("yr.header_secret", name=name))
    return lines


def env_status(lines: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Each ``$NAME`` the headers use → whether it is set (never its value)."""
    env = os.environ if environ is None else environ
    names = [m.group(1) for line in lines for m in _VAR.finditer(parse_header(line)[1])]
    return {name: name in env for name in dict.fromkeys(names)}


def mapping_from_text(text: str) -> RagMapping:
    """The mapping box (JSON) as a mapping; blank means the defaults."""
    if not (text or "").strip():
        return RagMapping()
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SetupError(t("yr.mapping_json", error=exc)) from None
    try:
        return mapping_from_dict(raw, "mapping")
    except MappingError as exc:
        raise SetupError(str(exc)) from None


def build_system(kind: str, target: str, mapping_text: str, headers_text: str, timeout_s: float) -> Any:
    """The system the tab describes: ``EndpointRAG`` (URL, headers) or ``CallableRAG`` (``module:function``)."""
    mapping = mapping_from_text(mapping_text)
    if not (target or "").strip():
        raise SetupError(t("yr.need_url") if kind == ENDPOINT else t("yr.need_callable"))
    try:
        if kind == ENDPOINT:
            return EndpointRAG(target.strip(), mapping=mapping, headers=header_lines(headers_text), timeout_s=timeout_s)
        return CallableRAG(target.strip(), mapping=mapping)
    except (MappingError, ValueError) as exc:
        raise SetupError(str(exc)) from None


def run_frame(run: SystemRun) -> pd.DataFrame:
    """Your system's answers for review: answer, contexts, latency, error."""
    rows = [{
        "id": s.id,
        "type": s.metadata.get("question_type") or "",
        "question": s.question,
        "answer": s.answer,
        "ground_truth": s.ground_truth,
        "contexts": len(s.contexts),
        "latency_s": s.metadata.get("rag_latency_s"),
        "error": s.metadata.get("rag_error") or "",
    } for s in run.samples]
    return pd.DataFrame(rows, columns=["id", "type", "question", "answer", "ground_truth", "contexts", "latency_s", "error"])


def to_workset(run: SystemRun, name: str) -> data.Workset:
    """Your system's answers as the Dataset page's working dataset."""
    ws = data.load_upload(f"{name}.json", datasets.dumps_dataset(run.samples, "json"))
    ws.source = t("yr.source", name=name, system=run.system, target=run.name)
    return ws


def _seconds(value: Any) -> str:
    return "-" if value is None else f"{value:.3f} s"


def _kind_label(kind: str) -> str:
    return t("yr.endpoint") if kind == ENDPOINT else t("yr.callable_kind")


def render(items: Sequence[TestItem], name: str) -> None:
    """The tab: system, mapping, headers, "try one question", then answer the whole test set."""
    st.caption(t("yr.caption"))
    kind = st.radio(t("yr.system"), [ENDPOINT, CALLABLE], format_func={k: _kind_label(k) for k in (ENDPOINT, CALLABLE)}.get, horizontal=True, key="testset.yr.kind")
    if kind == ENDPOINT:
        target = st.text_input(t("yr.url"), key="testset.yr.url", placeholder="http://127.0.0.1:8000/query")
        headers_text = st.text_area(
            t("yr.headers"),
            key="testset.yr.headers", placeholder="Authorization: Bearer $MY_RAG_TOKEN", height=80)
    else:
        target = st.text_input(t("yr.callable"), key="testset.yr.callable",
                               placeholder="my_rag.api:answer")
        headers_text = ""
    mapping_text = st.text_area(
        t("yr.mapping"),
        default_mapping_text(), key="testset.yr.mapping", height=200)
    timeout_s = float(st.number_input(t("yr.timeout"), min_value=1, max_value=600, value=30,
                                      key="testset.yr.timeout"))
    try:
        system = build_system(kind, target, mapping_text, headers_text, timeout_s)
    except SetupError as exc:
        system = None
        if (target or "").strip():
            widgets.show_error(t("yr.not_set_up"), exc)
    if kind == ENDPOINT and headers_text.strip():
        try:
            status = env_status(header_lines(headers_text))
        except (SetupError, ValueError):
            status = {}
        if status:
            st.caption(t("yr.environment", status=", ".join(
                f"{md_code('$' + n)} {t('yr.env_set') if ok else t('yr.env_not_set')}" for n, ok in status.items())))

    st.markdown(t("yr.try_heading"))
    question = st.text_input(t("yr.question"), items[0].question if items else "", key="testset.yr.question")
    if st.button(t("yr.try"), disabled=system is None or not question.strip()):
        st.session_state[TRY] = try_one(system, question.strip(), system.descriptor)
    shown = st.session_state.get(TRY)
    if shown is not None:
        if shown["ok"]:
            raw_col, read_col = st.columns(2)
            with raw_col:
                st.caption(t("yr.raw_reply"))
                st.json(shown["reply"])
            with read_col:
                st.caption(t("yr.read"))
                st.json(shown["read"])
        else:
            st.error(t("yr.no_answer", error=md_escape(shown["error"])))

    if st.button(t("yr.answer_all"), type="primary", disabled=system is None or not items):
        bar = st.progress(0.0, text=t("yr.asking"))
        cfg = ProviderConfig(concurrency=4, cache=True, timeout_s=timeout_s, max_retries=1)
        llm = system_stack(system, cfg)
        st.session_state[RUN] = answer_with_system(
            items, llm, system.descriptor, concurrency=4,
            progress=lambda done, total: bar.progress(done / total, text=t("testset.answered", done=int(done), total=int(total))))
        bar.empty()
    run: SystemRun | None = st.session_state.get(RUN)
    if run is None:
        return
    cols = st.columns(5)
    cols[0].metric(t("testset.answers"), len(run.samples))
    cols[1].metric(t("yr.failed_questions"), run.errors)
    cols[2].metric(t("yr.latency_median"), _seconds(run.latency.get("median_s")))
    cols[3].metric(t("yr.latency_p95"), _seconds(run.latency.get("p95_s")))
    cols[4].metric(t("yr.cached"), run.cached)
    st.caption(t("yr.run_caption", system=md_escape(run.system), name=md_escape(run.name)))
    answers = run_frame(run)
    widgets.table(answers, hide_index=True, width="stretch")
    use, download = st.columns(2)
    if use.button(t("yr.use"), type="primary"):
        ws = to_workset(run, f"{name}-yours")
        state.use_dataset(ws)
        st.success(t("yr.loaded", n=len(ws.samples), name=md_escape(ws.name)))
    download.download_button(t("yr.download"), datasets.dumps_dataset(run.samples, "json"),
                             file_name=f"{name}-yours.json", mime="application/json")
