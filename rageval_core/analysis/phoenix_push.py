"""A stored run's results sent back to Phoenix as span annotations, one per row × metric × method, on the root span
of the trace the row came from, so the scores sit beside the trace where the team already looks.

Each annotation: name ``<metric>·<method>`` (``faithfulness·decomposed``, ``faithfulness·judge:rubric5``); score =
the value; label = the verdict at the run's calibrated threshold (``pass`` / ``fail``) where one was chosen on a dev
split (``analysis.trust.calibration``), none otherwise, and ``unscored`` for a row that could not be scored;
explanation = the reason (redacted); annotator kind ``CODE`` for the offline heuristic judge (no model involved),
``LLM`` for every model-backed provider (replay too: recorded model answers); metadata names the run, the provider,
the model and the threshold.

Idempotent: Phoenix stores one annotation per (name, span, identifier) and updates it when the same triple comes
again (``POST /v1/span_annotations``, ``insert_on_conflict``). The identifier is ``rageval`` (a run of several
judge configurations adds ``:<judge id>``, so two models on one rubric stay two annotations), so pushing again —
the same run or a later one — replaces rather than adds. A row's trace is the dataset's ``trace_id`` when the
run's rows are at hand, else the row id (``import-traces`` and ``phoenix pull`` use the trace id as the row id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.analysis.trust.calibration import stored_thresholds
from rageval_core.core.method_labels import judge_of, result_method
from rageval_core.core.redact import redact_data, redact_optional
from rageval_core.core.types import MetricResult, Sample
from rageval_core.data.phoenix.client import PhoenixClient, Project, chunks
from rageval_core.data.phoenix.config import DEFAULT_IDENTIFIER, PhoenixError
from rageval_core.store.runs import RunInfo, Store

SEP = "·"
PASS, FAIL, UNSCORED = "pass", "fail", "unscored"

__all__ = ["PushReport", "RunAnnotation", "annotation_name", "push_annotations",
           "root_spans", "run_annotations"]


def annotation_name(metric: str, method: str) -> str:
    return f"{metric}{SEP}{method}"


@dataclass(frozen=True)
class RunAnnotation:
    """One result as a Phoenix span annotation, before its trace's root span is known."""

    sample_id: str
    trace_id: str
    name: str
    annotator_kind: str
    score: float | None
    label: str | None
    explanation: str | None
    identifier: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def payload(self, span_id: str) -> dict[str, Any]:
        """The ``SpanAnnotationData`` Phoenix's REST API takes."""
        return {"span_id": span_id, "name": self.name, "annotator_kind": self.annotator_kind,
                "result": {"score": self.score, "label": self.label, "explanation": self.explanation},
                "identifier": self.identifier, "metadata": self.metadata}

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.trace_id, self.name, self.identifier)


def run_annotations(store: Store, run_id: str, *, samples: Mapping[str, Sample] | None = None,
                    identifier: str = DEFAULT_IDENTIFIER) -> list[RunAnnotation]:
    """Every result of the run (repeat 0) as an annotation. ``samples``: the run's rows by id (their ``trace_id``);
    without them the rows the run keeps (for a run stored before runs kept them, its dataset file when unchanged),
    else the row ids are the trace ids."""
    info = store.get_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    if samples is None:
        from rageval_core.analysis.trust.run_report import samples_of_run

        samples = {s.id: s for s in samples_of_run(store, info) or []}
    thresholds = stored_thresholds(info.settings)
    out = []
    for _scorer, result in store.iter_results(run_id):
        sample = samples.get(result.sample_id)
        trace_id = str((sample.metadata.get("trace_id") if sample is not None else None) or result.sample_id)
        out.append(_annotation(info, result, trace_id, thresholds, identifier))
    return out


def _annotation(info: RunInfo, r: MetricResult, trace_id: str, thresholds: Mapping[tuple[str, str], float],
                identifier: str) -> RunAnnotation:
    judge = judge_of(r.details)
    provider = r.provider or info.provider or ""
    threshold = thresholds.get((r.metric, result_method(r)))
    label: str | None
    explanation: str | None
    if r.value is None:
        label = UNSCORED
        explanation = f"unscored: {r.unscored_reason}" + (f" — {r.reason}" if r.reason else "")
    else:
        label = None if threshold is None else (PASS if r.value >= threshold else FAIL)
        explanation = r.reason
    metadata = {"source": "rageval-workbench", "run_id": info.id, "row_id": r.sample_id, "metric": r.metric,
                "method": r.method, "judge": judge, "provider": provider, "model": r.model or info.model,
                "threshold": threshold, "threshold_source": None if threshold is None else "calibrated on dev",
                "unscored_reason": r.unscored_reason}
    return RunAnnotation(
        sample_id=r.sample_id, trace_id=trace_id, name=annotation_name(r.metric, r.method),
        annotator_kind="CODE" if provider == "offline" else "LLM", score=r.value, label=label,
        explanation=redact_optional(explanation), identifier=f"{identifier}:{judge}" if judge else identifier,
        metadata=redact_data({k: v for k, v in metadata.items() if v is not None}),
    )


def root_spans(client: PhoenixClient, project: Project, trace_ids: Sequence[str]) -> dict[str, str]:
    """``{trace_id: root span id}`` for the traces Phoenix holds in the project: the span without a parent, else
    (a parent recorded elsewhere) the earliest span whose parent is not in the trace."""
    wanted = list(dict.fromkeys(t for t in trace_ids if t))
    found: dict[str, str] = {}
    for ids in chunks(wanted):
        for span in client.spans(project, [("parent_id", "null"), *(("trace_id", t) for t in ids)]):
            tid = str((span.get("context") or {}).get("trace_id") or "")
            if tid in ids and not span.get("parent_id") and tid not in found:
                found[tid] = str(span["context"]["span_id"])
    orphans = [t for t in wanted if t not in found]
    for ids in chunks(orphans):
        by_trace: dict[str, list[Mapping[str, Any]]] = {}
        for span in client.spans(project, [("trace_id", t) for t in ids]):
            by_trace.setdefault(str((span.get("context") or {}).get("trace_id") or ""), []).append(span)
        for tid, spans in by_trace.items():
            own = {str((s.get("context") or {}).get("span_id")) for s in spans}
            tops = sorted((s for s in spans if str(s.get("parent_id")) not in own), key=lambda s: str(s.get("start_time")))
            if tid in ids and tops:
                found[tid] = str(tops[0]["context"]["span_id"])
    return found


@dataclass
class PushReport:
    """What a push did: annotations sent (new ones and updates of earlier ones), on how many root spans, and the
    rows whose trace is not in the project."""

    project: Project
    url: str
    sent: int
    new: int
    updated: int
    spans: int
    missing_traces: list[str]
    kinds: dict[str, int]

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.kinds.items()))
        text = (f"Phoenix {self.url}, project {self.project.name}: {self.sent} annotation(s) on {self.spans} root "
                f"span(s) ({self.new} new, {self.updated} updated; annotator {kinds or '-'})")
        if self.missing_traces:
            text += f"; {len(self.missing_traces)} row(s)' trace not in the project, not sent"
        return text


def push_annotations(client: PhoenixClient, project_name: str, annotations: Sequence[RunAnnotation]) -> PushReport:
    """Send the annotations to the root spans of their traces. Counts what Phoenix held before (same span, name and
    identifier) so the report says how many are new: a second push of the same run says 0 new."""
    if not annotations:
        raise PhoenixError("the run has no results to send")
    project = client.project(project_name)
    roots = root_spans(client, project, [a.trace_id for a in annotations])
    sendable = [a for a in annotations if a.trace_id in roots]
    missing = sorted({a.trace_id for a in annotations if a.trace_id not in roots})
    if not sendable:
        raise PhoenixError(f"none of the run's {len({a.trace_id for a in annotations})} trace id(s) is in project "
                           f"{project.name!r} on Phoenix at {client.shown} (first: {missing[0]!r}); was the run made on "
                           "rows imported from this project?")
    identifiers = sorted({a.identifier for a in sendable})
    before = {(str(x.get("span_id")), str(x.get("name")), str(x.get("identifier")))
              for x in client.span_annotations(project, sorted(set(roots.values())), identifiers)}
    payloads = [a.payload(roots[a.trace_id]) for a in sendable]
    client.annotate_spans(payloads)
    new = sum(1 for p in payloads if (p["span_id"], p["name"], p["identifier"]) not in before)
    kinds: dict[str, int] = {}
    for a in sendable:
        kinds[a.annotator_kind] = kinds.get(a.annotator_kind, 0) + 1
    return PushReport(project, client.shown, len(payloads), new, len(payloads) - new,
                      len({roots[a.trace_id] for a in sendable}), missing, kinds)
