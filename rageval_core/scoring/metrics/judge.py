"""The one-call rubric judge (LLM-as-a-judge as in the RAGAS-vs-judge article): one prompt, every criterion, a score and a reason each.

The prompt is rendered from a ``Rubric`` into the ``judge`` template of the rubric's language (or a raw
template the user edited), so editing a level description changes the prompt and with it the request
and cache keys. Parsing is a pure function: code fences and prose around the JSON are tolerated, flat
``<id>_score``/``<id>_reason`` and nested ``{"<id>": {"score", "reason"}}`` are both read, and anything
else makes only that criterion unscored (``parse_error``, raw text kept) — never clamped, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rageval_core.llm.base import LLMRequest, ProviderError
from rageval_core.core.messages import say
from rageval_core.scoring.metrics.base import (
    CallEstimate,
    CallTrace,
    EvalContext,
    summarize_traces,
)
from rageval_core.scoring.prompts import PromptTemplate, TemplateError
from rageval_core.scoring.rubric import (
    PRESET_IDS,
    Criterion,
    Rubric,
    is_preset,
    judge_phrases,
    load_rubric,
    render_output_format,
    render_overview,
    render_rubric,
    rubric_record,
)
from rageval_core.scoring.few_shot import render_examples
from rageval_core.core.tasks import JUDGE, judge_schema
from rageval_core.core.tokens import current_counter
from rageval_core.scoring.metrics.judge_parse import (  # noqa: F401 - re-exported: callers read the parser from here
    DECLARABLE_REASONS,
    UNSCORED_KEY,
    UNSUPPORTED_KEY,
    CriterionVerdict,
    JudgeParse,
    parse_judge_output,
)
from rageval_core.scoring.metrics.judge_template import (  # noqa: F401 - re-exported: callers read the templates from here
    JUDGE_VARIABLES,
    TemplateMismatchError,
    check_template,
    judge_template,
    literal_output_keys,
    literal_score_ranges,
    template_from_text,
    template_notes,
)
from rageval_core.scoring.metrics.scoring import AGGREGATES, aggregate_repeats
from rageval_core.scoring.metrics.prefix import lead_text, repeated
from rageval_core.scoring.metrics.steps import reask_limit, reask_request, sample_language
from rageval_core.core.types import MetricResult, Sample, Unscored, judge_method
from rageval_core.core.errors import ConfigError

Aggregate = Literal["mean", "median", "majority", "majority_or_median"]
_OUTPUT_TOKENS_PER_CRITERION = 80  # a score and a 1–2 sentence reason


def prompt_values(rubric: Rubric, sample: Sample) -> dict[str, Any]:
    """Every judge variable for one row; the rubric parts are rendered from the rubric (no stale text)."""
    phrases = judge_phrases(rubric.language)
    contexts = [c for c in sample.contexts]
    return {
        "instructions": rubric.instructions,
        "overview": render_overview(rubric),
        "rubric": render_rubric(rubric),
        "examples": render_examples(rubric),
        "output_format": render_output_format(rubric),
        "question": sample.question or "",
        "contexts": contexts,
        "context": "\n".join(contexts),
        "ground_truth": sample.ground_truth if (sample.ground_truth or "").strip() else phrases["no_ground_truth"],
        "answer": sample.answer or "",
    }


def render_judge_prompt(rubric: Rubric, sample: Sample, template: PromptTemplate | None = None) -> str:
    """The prompt text the judge sends for ``sample`` (what docs/judges.md and the prompt editor show)."""
    template = template or judge_template(rubric.language)
    values = prompt_values(rubric, sample)
    return template.render(**{k: v for k, v in values.items() if k in template.variables})


REASON_CAP_KEY = "reason_max_chars"  # rubric metadata: a maxLength on every reason (small local models loop without one)


def judge_output_schema(rubric: Rubric) -> dict[str, Any]:
    """``tasks.judge_schema`` for the rubric's criteria, with each criterion's own score bounds, and a
    ``maxLength`` on the reasons when the rubric sets ``metadata["reason_max_chars"]`` (none by default, so
    the presets' requests are unchanged)."""
    scale = rubric.uniform_scale
    if scale is not None:
        schema = judge_schema(rubric.ids, min_score=scale[0], max_score=scale[1])
    else:
        schema = judge_schema(rubric.ids)
        for c in rubric.criteria:
            schema["properties"][f"{c.id}_score"] = {"type": "integer", "minimum": c.min, "maximum": c.max}
    cap = rubric.metadata.get(REASON_CAP_KEY)
    if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
        for cid in rubric.ids:
            schema["properties"][f"{cid}_reason"] = {"type": "string", "maxLength": cap}
    return schema


def aggregate_scores(scores: Sequence[int], how: Aggregate) -> float | None:
    """Combine repeated raw scores with ``rageval_core.scoring.metrics.scoring.aggregate_repeats`` (``None``: no majority)."""
    return aggregate_repeats(scores, how)


# ---------------------------------------------------------------------------------------- scorer


def _present(sample: Sample, field_name: str) -> bool:
    if field_name == "contexts":
        return any((c or "").strip() for c in sample.contexts)
    return bool((getattr(sample, field_name) or "").strip())


_ROW_VARIABLES = ("question", "contexts", "context", "ground_truth", "answer")


def _row_tokens(sample: Sample) -> dict[str, int]:
    """Tokens of each row text a judge prompt can hold (the no-reference phrase is in the fixed part)."""
    contexts = _estimate_tokens("\n".join(sample.contexts)) if sample.contexts else 0
    reference = sample.ground_truth if (sample.ground_truth or "").strip() else ""
    return {
        "question": _estimate_tokens(sample.question or ""), "contexts": contexts, "context": contexts,
        "ground_truth": _estimate_tokens(reference) if reference else 0, "answer": _estimate_tokens(sample.answer or ""),
    }


def _estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by the counter the estimate counts with (``core.tokens.counting``) when it is a real
    tokenizer; otherwise a rough count: ~4 ASCII characters or ~1.3 other characters (kana, kanji) per token."""
    counter = current_counter()
    if counter.counted:
        return counter.count(text)
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return int(ascii_chars / 4 + (len(text) - ascii_chars) / 1.3) + 1


@dataclass
class _Repeat:
    index: int
    request_key: str
    parse: JudgeParse | None = None
    provider: str | None = None
    model: str | None = None
    verdicts: dict[str, CriterionVerdict] = field(default_factory=dict)
    reasked: tuple[str, ...] = ()  # criteria whose first answer was unusable and were re-asked
    recovered: tuple[str, ...] = ()  # of those, the ones a re-ask answered


def _reask(ctx: EvalContext, trace: list[CallTrace], request: LLMRequest, text: str, rubric: Rubric, rep: _Repeat) -> None:
    """Re-ask (up to ``reask_limit``) while some criterion is a ``parse_error``, stating each problem; a
    criterion keeps the first usable score it gets, the others their first reason. Never silent: the
    re-asked and recovered criteria are recorded on the repeat and the calls are marked in the trace."""
    current = request
    for _ in range(reask_limit(ctx)):
        broken = [v for v in rep.verdicts.values() if v.unscored_reason == Unscored.PARSE_ERROR]
        if not broken:
            return
        rep.reasked = tuple(dict.fromkeys(rep.reasked + tuple(v.criterion for v in broken)))
        current = reask_request(ctx, current, text, "; ".join(v.error or v.criterion for v in broken))
        try:
            completion = ctx.call(current, trace)
        except ProviderError:
            return  # the first problem stays the reason; the failed call is in the trace and the call log
        text = completion.text
        again = parse_judge_output(text, rubric.criteria).verdicts
        fixed = [v.criterion for v in broken if again[v.criterion].score is not None]
        for cid in fixed:
            rep.verdicts[cid] = again[cid]
        rep.recovered = rep.recovered + tuple(fixed)
        if fixed and len(fixed) == len(broken):
            trace[-1].recovered = True


def _reask_details(cid: str, repeats: Sequence[_Repeat]) -> dict[str, Any]:
    """``{"reask": {"asked", "recovered"}}`` for one criterion (counted per metric in the summary), or nothing."""
    asked = sum(1 for rep in repeats if cid in rep.reasked)
    if not asked:
        return {}
    return {"reask": {"asked": asked, "recovered": sum(1 for rep in repeats if cid in rep.recovered)}}


class JudgeScorer:
    """A one-call judge over a rubric, implementing the ``Scorer`` protocol; method ``judge:<rubric id>``.

    ``rubric`` is a ``Rubric`` or a preset id (then the preset in the data's language is used per row).
    ``template`` is a ``PromptTemplate`` or raw text (raw-template mode); it is checked against the
    rubric here, before any call. ``per_criterion`` sends one call per criterion instead of one for all;
    ``repeats`` sends the same prompt n times (seed = repeat index from the second on) and aggregates
    by ``mean``, ``median``, ``majority`` (no value held by more than half of the scored repeats → unscored
    ``no_majority``) or ``majority_or_median``. Results: one ``MetricResult`` per criterion, value normalised, raw score kept.
    """

    def __init__(
        self,
        rubric: Rubric | str | Mapping[str, Rubric],
        *,
        template: PromptTemplate | str | None = None,
        per_criterion: bool = False,
        repeats: int = 1,
        aggregate: Aggregate = "mean",
        temperature: float = 0.0,
        max_output_tokens: int | None = None,
    ) -> None:
        self._by_language = isinstance(rubric, Mapping)  # one rubric per language, each row judged in its own
        self._fixed: Rubric | None
        if isinstance(rubric, Mapping):
            self._rubrics, self._fixed = dict(rubric), None
        elif isinstance(rubric, str):
            if rubric not in PRESET_IDS:
                rubric = load_rubric(rubric)  # a rubric JSON file
                self._rubrics = {rubric.language: rubric}
                self._fixed = rubric
            else:
                self._rubrics = {lang: load_rubric(rubric, lang) for lang in ("ja", "en")}
                self._fixed = None
        else:
            self._rubrics = {rubric.language: rubric}
            self._fixed = rubric
        if repeats < 1:
            raise ConfigError("repeats must be at least 1")
        if aggregate not in AGGREGATES:
            raise ConfigError(f"aggregate must be one of {', '.join(AGGREGATES)}, not {aggregate!r}")
        first = next(iter(self._rubrics.values()))
        self.rubric_id, self.name, self.method = first.id, judge_method(first.id), judge_method(first.id)
        self.metrics: tuple[str, ...] = first.ids
        self.per_criterion, self.repeats, self.aggregate = per_criterion, repeats, aggregate
        self.temperature, self.max_output_tokens = temperature, max_output_tokens
        self._template: PromptTemplate | None = None
        # Non-blocking notes on a raw template (rubric edits it does not send); shown with the run settings.
        self.notes: list[str] = []
        if template is not None:
            if isinstance(template, str):
                try:
                    template = template_from_text(template, first.language)
                except TemplateError as exc:
                    raise TemplateMismatchError([str(exc)]) from None
            problems: list[str] = []
            for r in (x for x in self._rubrics.values() if not self._by_language or x.language == first.language):
                found = check_template(template, r, per_criterion=per_criterion)
                problems.extend(p for p in found if p not in problems)
            if problems:
                raise TemplateMismatchError(problems)
            self._template = template
            self.notes = template_notes(template, first)

    # ------------------------------------------------------------------ helpers
    def describe(self) -> dict[str, Any]:
        """The judge's settings, recorded with a run (the runner adds rubric and template hashes).

        An edited or custom rubric and a raw template are recorded in full, so two runs can be diffed as
        text even when the user never saved a version; shipped presets and templates are named by hash.
        """
        out: dict[str, Any] = {
            "rubric_id": self.rubric_id,
            "rubric_languages": sorted(self._rubrics),
            "template": self._template.label if self._template else "shipped",
            "per_criterion": self.per_criterion,
            "repeats": self.repeats,
            "aggregate": self.aggregate,
            "temperature": self.temperature,
        }
        if self._fixed is not None and not is_preset(self._fixed):
            out["rubric"] = rubric_record(self._fixed)
        elif self._by_language:
            out["rubrics"] = {lang: rubric_record(r) for lang, r in self._rubrics.items() if not is_preset(r)}
        if self._template is not None:
            out["template_text"] = self._template.source or self._template.text
        if self.notes:
            out["template_notes"] = list(self.notes)
        return out

    def rubric_for(self, sample: Sample) -> Rubric:
        """The rubric used for a row: the fixed one, or the preset in the row's language."""
        if self._fixed is not None:
            return self._fixed
        return self._rubrics.get(sample_language(sample)) or next(iter(self._rubrics.values()))

    def template_for(self, rubric: Rubric) -> PromptTemplate:
        """The raw template, else the shipped one; per language, a raw template serves its own language only."""
        if self._template is not None and not (self._by_language and rubric.language != self._template.language):
            return self._template
        return judge_template(rubric.language)

    def _groups(self, rubric: Rubric, sample: Sample) -> tuple[list[list[Criterion]], dict[str, tuple[str, str]]]:
        """Criteria to send, grouped per call, and those left unscored before any call (reason, message)."""
        if not (sample.answer or "").strip():
            return [], {c.id: (Unscored.EMPTY_ANSWER, say("judge.blank_answer")) for c in rubric.criteria}
        skipped: dict[str, tuple[str, str]] = {}
        active: list[Criterion] = []
        for c in rubric.criteria:
            missing = [need for need in c.requires if not _present(sample, need)]
            if missing:
                skipped[c.id] = (Unscored.MISSING_FIELD, say("judge.needs", criterion=c.id, fields=", ".join(missing)))
            else:
                active.append(c)
        if not active:
            return [], skipped
        return ([[c] for c in active] if self.per_criterion else [active]), skipped

    def build_request(self, rubric: Rubric, sample: Sample, *, repeat: int = 0, language: str | None = None) -> LLMRequest:
        """The judge request for ``rubric`` (already narrowed to the criteria of one call) and one row."""
        template = self.template_for(rubric)
        values = prompt_values(rubric, sample)
        messages = template.to_messages(**{k: v for k, v in values.items() if k in template.variables})
        return LLMRequest(
            task=JUDGE,
            messages=messages,
            schema=judge_output_schema(rubric),
            inputs={
                "question": sample.question,
                "contexts": list(sample.contexts),
                "answer": sample.answer,
                "ground_truth": sample.ground_truth,
                "criteria": [{"id": c.id, "name": c.name, "min": c.min, "max": c.max} for c in rubric.criteria],
            },
            language=language or sample_language(sample),
            temperature=self.temperature,
            n=1,
            # Repeat 0 is the plain request (shared with a single-run judge's cache entry); later
            # repeats carry their index as seed so they are distinct requests, not cache hits.
            seed=None if repeat == 0 else repeat,
            max_output_tokens=self.max_output_tokens,
        )

    # ------------------------------------------------------------------ Scorer protocol
    def estimate(self, sample: Sample) -> CallEstimate:
        """Calls and tokens for one row: the prompt's fixed part (template and rubric) is counted once per
        rubric and criteria group, the row's own texts each row, so estimating 100,000 rows renders no prompt."""
        rubric = self.rubric_for(sample)
        groups, _ = self._groups(rubric, sample)
        total = CallEstimate()
        row: dict[str, int] | None = None
        for group in groups:
            fixed, used, lead = self._fixed_tokens(rubric, tuple(c.id for c in group))
            if row is None:
                row = _row_tokens(sample)
            prompt = fixed + sum(row[v] for v in used)
            total = total + CallEstimate(
                llm_calls=self.repeats,
                input_tokens=self.repeats * prompt,
                output_tokens=self.repeats * _OUTPUT_TOKENS_PER_CRITERION * len(group),
                prompts=repeated(prompt, lead, self.repeats),
            )
        return total

    def _fixed_tokens(self, rubric: Rubric, ids: tuple[str, ...]) -> tuple[int, tuple[str, ...], int]:
        """Tokens of the prompt for ``rubric``'s criteria ``ids`` without the row's texts, the row variables the
        template uses, and the tokens of its lead (what every row's prompt starts with: ``prefix.lead_text``);
        cached per rubric object and group (the rubric is kept, so its id is never reused)."""
        cache = self.__dict__.setdefault("_fixed_cache", {})
        key = (id(rubric), ids, current_counter())
        found = cache.get(key)
        if found is None or found[2] is not rubric:
            sub = rubric.subset(ids)
            template = self.template_for(sub)
            blank = Sample("estimate", "", (), "")  # its no-reference phrase stays in the fixed part
            values = {**prompt_values(sub, blank), "question": "", "contexts": [], "context": "", "answer": ""}
            messages = template.to_messages(**{k: v for k, v in values.items() if k in template.variables})
            text = "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)
            fixed_values = {k: v for k, v in prompt_values(sub, blank).items() if k not in _ROW_VARIABLES}
            lead = _estimate_tokens(lead_text(template, fixed_values))
            found = (_estimate_tokens(text), tuple(v for v in _ROW_VARIABLES if v in template.variables), rubric, lead)
            if len(cache) > 64:
                cache.clear()
            cache[key] = found
        return found[0], found[1], found[3]

    def score(self, sample: Sample, ctx: EvalContext) -> list[MetricResult]:
        rubric = self.rubric_for(sample)
        language = sample_language(sample)
        template = self.template_for(rubric)
        groups, skipped = self._groups(rubric, sample)
        common = {
            "rubric_id": rubric.id,
            "rubric_hash": rubric.content_hash,
            "rubric_language": rubric.language,
            "template": template.label,
            "template_hash": template.sha256,
            "per_criterion": self.per_criterion,
            "aggregate": self.aggregate,
        }
        results: dict[str, MetricResult] = {}
        for cid, (reason, message) in skipped.items():
            results[cid] = MetricResult(
                sample_id=sample.id, metric=cid, method=self.method, value=None,
                unscored_reason=reason, reason=message, details={**common, "error": message},
            )
        for group in groups:
            results.update(self._score_group(rubric.subset(c.id for c in group), sample, ctx, language, common))
        return [results[cid] for cid in rubric.ids]

    def _score_group(
        self, rubric: Rubric, sample: Sample, ctx: EvalContext, language: str, common: Mapping[str, Any]
    ) -> dict[str, MetricResult]:
        """Send one call (times ``repeats``) for the criteria of ``rubric`` and turn it into results."""
        trace: list[CallTrace] = []
        repeats: list[_Repeat] = []
        for i in range(self.repeats):
            request = self.build_request(rubric, sample, repeat=i, language=language)
            rep = _Repeat(index=i, request_key=request.key())
            try:
                completion = ctx.call(request, trace)
            except ProviderError as exc:
                rep.verdicts = {
                    c.id: CriterionVerdict(c.id, None, None, exc.unscored_reason, f"{exc.kind}: {exc}")
                    for c in rubric.criteria
                }
            else:
                rep.provider, rep.model = completion.provider, completion.model
                rep.parse = parse_judge_output(completion.text, rubric.criteria)
                rep.verdicts = dict(rep.parse.verdicts)
                _reask(ctx, trace, request, completion.text, rubric, rep)
            repeats.append(rep)
        out: dict[str, MetricResult] = {}
        for position, c in enumerate(rubric.criteria):
            result = self._criterion_result(c, sample, repeats, common)
            if position == 0:
                own_reask = result.details.get("reask")
                summarize_traces(result, trace)
                result.details.pop("reask", None)  # a judge counts re-asks per criterion, not per call
                if own_reask:
                    result.details["reask"] = own_reask
            else:
                # One call serves every criterion of the group: its usage and cost are counted once, on the
                # group's first criterion, so sums over a row's results equal what was really spent.
                result.details["calls"] = [t.to_dict() for t in trace]
                result.details["calls_counted_on"] = rubric.criteria[0].id
            answered = next((rep for rep in repeats if rep.provider), None)
            if answered is not None:
                result.provider, result.model = answered.provider, answered.model
            out[c.id] = result
        return out

    def _criterion_result(
        self, c: Criterion, sample: Sample, repeats: Sequence[_Repeat], common: Mapping[str, Any]
    ) -> MetricResult:
        verdicts = [rep.verdicts[c.id] for rep in repeats]
        first = repeats[0]
        details: dict[str, Any] = {
            **common,
            "criterion": {"id": c.id, "name": c.name, "min": c.min, "max": c.max},
            "raw_text": first.parse.raw if first.parse else None,
            "parsed": first.parse.parsed if first.parse else None,
            "request_keys": [rep.request_key for rep in repeats],
            **_reask_details(c.id, repeats),
            "repeats": [
                {
                    "index": rep.index,
                    **rep.verdicts[c.id].to_dict(),
                    "raw_text": rep.parse.raw if rep.parse else None,
                    "parsed": rep.parse.parsed if rep.parse else None,
                }
                for rep in repeats
            ],
        }
        scored = [v for v in verdicts if v.score is not None]
        if not scored:
            failure = verdicts[0]
            details["error"] = failure.error
            # Unscored: the reason says why (the offline judge's own explanation when it gave one).
            offline_reason = failure.unscored_reason in DECLARABLE_REASONS and failure.reason
            return MetricResult(
                sample_id=sample.id, metric=c.id, method=self.method, value=None,
                unscored_reason=failure.unscored_reason or Unscored.PARSE_ERROR,
                reason=offline_reason or failure.error,
                details=details,
            )
        raw = aggregate_scores([v.score for v in scored if v.score is not None], self.aggregate)
        details["scored_repeats"] = len(scored)
        if raw is None:
            message = (
                f"no majority among {len(scored)} scored repeats ({', '.join(str(v.score) for v in scored)}); "
                "aggregate 'majority_or_median' takes the median instead"
            )
            details["error"] = message
            return MetricResult(
                sample_id=sample.id, metric=c.id, method=self.method, value=None,
                unscored_reason=Unscored.NO_MAJORITY, reason=message, details=details,
            )
        # The reason shown is one from a repeat whose score is closest to the aggregate.
        chosen = min(scored, key=lambda v: (abs((v.score or 0) - raw), verdicts.index(v)))
        return MetricResult(
            sample_id=sample.id, metric=c.id, method=self.method,
            value=c.normalise(raw), raw_score=raw, reason=chosen.reason, details=details,
        )
