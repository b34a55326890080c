"""Phoenix on the workbench: the sidebar's trace settings (server, project, the trace link template), pulling a
project's traces into the working dataset (Dataset page), and sending a run's scores back as span annotations
(Compare). The pages call ``rageval_core.data.phoenix`` and ``rageval_core.analysis.phoenix_push``; nothing here
speaks HTTP.

The API key of a Phoenix with authentication is read from ``PHOENIX_API_KEY`` by the core, never typed here: the
sidebar only says whether it is set.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import TYPE_CHECKING, Any

import streamlit as st

from rageval_core.core.errors import RagevalError
from rageval_core.data.phoenix.config import API_KEY_ENV, DEFAULT_LINK, default_project, default_url
from rageval_ui import data, state
from rageval_ui.i18n import t
from rageval_ui.safe_text import md_escape

if TYPE_CHECKING:
    from rageval_core.store.runs import Store
    from rageval_ui.runs import RunView

SINCE = ("1h", "24h", "7d", "30d", "")  # "": no start
PULL_SINCE, PULL_LIMIT = "phoenix.pull_since", "phoenix.pull_limit"
PUSHED = "phoenix.pushed"  # (run id, PushReport) of the last push from Compare
LINK_EXAMPLE = "{url}/redirects/traces/{trace_id}"


def settings() -> None:
    """The sidebar's Phoenix / trace-link fields (drawn inside ``st.sidebar``)."""
    if state.get(state.PHOENIX_URL) is None:
        state.set_kept(state.PHOENIX_URL, default_url())
    if state.get(state.PHOENIX_PROJECT) is None:
        state.set_kept(state.PHOENIX_PROJECT, default_project())
    with st.expander(t("phoenix.settings")):
        st.text_input(t("phoenix.url"), **state.bind(state.PHOENIX_URL), help=t("phoenix.url_help"))
        st.text_input(t("phoenix.project"), **state.bind(state.PHOENIX_PROJECT))
        st.text_input(t("phoenix.link_template"), **state.bind(state.TRACE_URL), placeholder=LINK_EXAMPLE,
                      help=t("phoenix.link_template_help"))
        st.caption(t("phoenix.key_set", env=API_KEY_ENV) if os.environ.get(API_KEY_ENV) else
                   t("phoenix.key_unset", env=API_KEY_ENV))


def server() -> tuple[str, str]:
    """(Phoenix URL, project) as the sidebar says."""
    url = str(state.get(state.PHOENIX_URL) or "").strip() or default_url()
    return url, str(state.get(state.PHOENIX_PROJECT) or "").strip() or default_project()


def link_template() -> str | None:
    """The sidebar's trace link template with ``{url}`` and ``{project}`` filled in (``{trace_id}`` left for each
    row), or ``None`` when no template is set or it has no ``{trace_id}``."""
    template = str(state.get(state.TRACE_URL) or "").strip()
    if "{trace_id}" not in template:
        return None
    url, project = server()
    return template.replace("{url}", url.rstrip("/")).replace("{project}", urllib.parse.quote(project, safe=""))


def link_column(frame: Any) -> dict[str, Any]:
    """The Dataset editor's ``trace_url`` column as links showing the trace id, when every link in it is http(s)
    (a link from the data is never made clickable otherwise: ``javascript:`` and the like stay text)."""
    if "trace_url" not in getattr(frame, "columns", ()):
        return {}
    urls = [str(u) for u in frame["trace_url"].dropna()]
    if not urls or not all(u.startswith(("http://", "https://")) for u in urls):
        return {}
    return {"trace_url": st.column_config.LinkColumn("trace_url", display_text=r"^.*/([^/?#]+)/?(?:[?#].*)?$",
                                                     help=t("phoenix.link_column_help"), width="small")}


TRACE_COLUMN = "trace"


def with_trace_links(frame: Any, samples: dict[str, Any], id_column: str = "sample_id") -> tuple[Any, dict[str, Any]]:
    """``frame`` with a ``trace`` column linking each row's trace (``data.trace_link``: its own link, else the sidebar's
    template) and the column's settings (a link showing the trace id); unchanged, and no settings, when no row of
    it has a link."""
    template = link_template()
    links = [None if s is None else data.trace_link(s.metadata, template)
             for s in (samples.get(str(sid)) for sid in frame[id_column])]
    if not any(links):
        return frame, {}
    out = frame.copy()
    out.insert(out.columns.get_loc(id_column) + 1, TRACE_COLUMN, links)
    return out, {TRACE_COLUMN: st.column_config.LinkColumn(t("th.trace"), display_text=r"^.*/([^/?#]+)/?(?:[?#].*)?$",
                                                           help=t("phoenix.trace_column_help"), width="small")}


def pull_workset(url: str, project: str, since: str, limit: int) -> data.Workset:
    """The newest ``limit`` traces of the project since ``since`` as the working dataset; each row links to its trace
    (the sidebar's template, else Phoenix's trace page). Problems and skipped traces go to the validation report.
    ``RagevalError`` (``PhoenixError``, ``TraceFormatError``) when nothing can be pulled."""
    from rageval_core.cli.traces import rows_to_samples
    from rageval_core.data import datasets
    from rageval_core.data.datasets import Issue
    from rageval_core.data.phoenix.client import PhoenixClient
    from rageval_core.data.phoenix.config import PhoenixError
    from rageval_core.data.phoenix.pull import parse_when, pull_traces
    from rageval_core.data.traces import SKIP_REASONS

    template = str(state.get(state.TRACE_URL) or "").strip() or DEFAULT_LINK
    pulled = pull_traces(PhoenixClient(url), project, since=parse_when(since), limit=limit, trace_url=template)
    result = pulled.result
    if not result.rows:
        raise PhoenixError(result.summary())
    name = f"phoenix-{pulled.project.name}"
    loaded = datasets.load_dataset(datasets.dumps_dataset(rows_to_samples(result.rows), "jsonl"), f"{name}.jsonl")
    where = f"Phoenix {pulled.url} · {pulled.project.name}"
    notes = [Issue(where, None, issue.where, issue.message, "warning") for issue in result.issues]
    notes += [Issue(where, None, "traces", f"{n} trace(s) skipped: {SKIP_REASONS.get(reason, reason)}", "warning")
              for reason, n in result.skip_counts().items()]
    return data.Workset(loaded=loaded, frame=datasets.samples_to_dataframe(loaded.samples),
                        load_issues=notes + list(loaded.issues), source=f"{where} ({pulled.n_traces} traces)")


def pull_panel() -> None:
    """The Dataset page's "Pull from Phoenix" expander."""
    url, project = server()
    with st.expander(t("phoenix.pull_heading")):
        st.caption(t("phoenix.pull_help", url=md_escape(url), project=md_escape(project)))
        labels = {"1h": t("phoenix.since.1h"), "24h": t("phoenix.since.24h"), "7d": t("phoenix.since.7d"),
                  "30d": t("phoenix.since.30d"), "": t("phoenix.since.all")}
        since = st.selectbox(t("phoenix.since"), SINCE, index=1, key=PULL_SINCE, format_func=labels.get)
        limit = st.number_input(t("phoenix.limit"), min_value=1, max_value=10000, value=100, step=10, key=PULL_LIMIT)
        if st.button(t("phoenix.pull"), key="phoenix.pull"):
            from rageval_ui import widgets

            try:
                with st.spinner(t("phoenix.pulling")):
                    ws = pull_workset(url, project, since, int(limit))
            except RagevalError as exc:  # names the server and what to do; never the key
                widgets.show_problem(t("phoenix.pull_failed"), str(exc))
            else:
                state.use_dataset(ws)
                st.rerun()


def can_push(view: RunView) -> bool:
    """Whether a run's rows came from traces (a ``trace_id`` in the rows the page found for it)."""
    return any(s.metadata.get("trace_id") for s in (view.samples or {}).values())


def push_panel(view: RunView, store: Store) -> None:
    """Compare's Phoenix tab: send the run's results as span annotations on each trace's root span."""
    from rageval_core.analysis.phoenix_push import push_annotations, run_annotations
    from rageval_core.data.phoenix.client import PhoenixClient
    from rageval_ui import widgets

    url, project = server()
    st.subheader(t("phoenix.push_heading"))
    st.caption(t("phoenix.push_help", url=md_escape(url), project=md_escape(project)))
    if st.button(t("phoenix.push"), key="phoenix.push"):
        try:
            with st.spinner(t("phoenix.pushing")):
                annotations = run_annotations(store, view.run_id, samples=view.samples or None)
                report = push_annotations(PhoenixClient(url), project, annotations)
        except RagevalError as exc:
            widgets.show_problem(t("phoenix.push_failed"), str(exc))
        else:
            st.session_state[PUSHED] = (view.run_id, report)
    pushed = st.session_state.get(PUSHED)
    if pushed and pushed[0] == view.run_id:
        report = pushed[1]
        st.success(t("phoenix.pushed", sent=int(report.sent), spans=int(report.spans), new=int(report.new),
                     updated=int(report.updated),
                     project=md_escape(report.project.name)))
        if report.missing_traces:
            st.warning(t("phoenix.push_missing", n=len(report.missing_traces)))
