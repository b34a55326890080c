"""Rubrics for one-call judges: criteria with a scale and a description for every level.

A rubric is data the user edits in the workbench; the judge prompt is rendered from it, so a changed
level description changes the prompt (and therefore the request and cache keys). Presets live as JSON
files under ``rageval_core/scoring/presets/rubrics/<lang>/<id>.json``; the phrases that turn a rubric into prompt
text (headings, level lines, the JSON answer block) live in ``presets/judge_phrases.json``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rageval_core.core.messages import say
from rageval_core.core.errors import ConfigError

PRESETS_DIR = Path(__file__).resolve().parent / "presets"
RUBRICS_DIR = PRESETS_DIR / "rubrics"
PRESET_IDS: tuple[str, ...] = ("rubric5", "binary", "binary-strict")
LANGUAGES: tuple[str, ...] = ("ja", "en")
# Inputs a criterion may need besides the answer; a row without them leaves the criterion unscored
# (missing_field) instead of asking the model to judge against nothing.
REQUIREMENTS: tuple[str, ...] = ("question", "contexts", "ground_truth")

_CRITERION_ID = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
# Rubric ids appear in method strings (``judge:<id>``) and CLI thresholds (``judge:<id>:<criterion>=0.8``).
_RUBRIC_ID = re.compile(r"^[^\W_][\w.\-]*$")


class RubricError(ConfigError):
    """A rubric or criterion that cannot be used; ``problems`` lists every reason, not just the first."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


def _int_key(key: Any) -> int:
    if isinstance(key, bool):
        raise ValueError(key)
    if isinstance(key, int):
        return key
    text = str(key).strip()
    if not re.fullmatch(r"-?\d+", text):
        raise ValueError(key)
    return int(text)


@dataclass(frozen=True, eq=True)
class Criterion:
    """One judged aspect: an integer scale ``min..max`` with a description for every level."""

    id: str
    name: str
    description: str
    min: int
    max: int
    levels: Mapping[int, str]
    requires: tuple[str, ...] = ()

    __hash__ = None  # type: ignore[assignment]  # levels is a dict

    def __post_init__(self) -> None:
        problems: list[str] = []
        where = say("rubric.criterion", id=repr(self.id))
        if not isinstance(self.id, str) or not _CRITERION_ID.match(self.id):
            problems.append(say("rubric.bad_id", where=where))
        if not str(self.name or "").strip():
            problems.append(say("rubric.no_name", where=where))
        for bound in ("min", "max"):
            value = getattr(self, bound)
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(say("rubric.bound_not_int", where=where, bound=bound, value=repr(value)))
        levels: dict[int, str] = {}
        for key, text in dict(self.levels or {}).items():
            try:
                score = _int_key(key)
            except ValueError:
                problems.append(say("rubric.level_not_int", where=where, level=repr(key)))
                continue
            levels[score] = str(text if text is not None else "")
        if not problems:
            if self.min >= self.max:
                problems.append(say("rubric.min_max", where=where, min=self.min, max=self.max))
            elif self.max - self.min > 100:
                problems.append(say("rubric.too_long", where=where, n=self.max - self.min + 1))
            else:
                scale = range(self.min, self.max + 1)
                undescribed = [s for s in scale if not levels.get(s, "").strip()]
                if undescribed:
                    problems.append(say("rubric.undescribed", where=where, levels=undescribed))
                outside = sorted(s for s in levels if s not in scale)
                if outside:
                    problems.append(say("rubric.outside", where=where, levels=outside, min=self.min, max=self.max))
        unknown = [r for r in self.requires if r not in REQUIREMENTS]
        if unknown:
            problems.append(say("rubric.unknown_requirement", where=where, unknown=unknown, known=", ".join(REQUIREMENTS)))
        if problems:
            raise RubricError(problems)
        # Highest level first, as the RAGAS-vs-judge article's prompt lists them.
        object.__setattr__(self, "levels", {s: levels[s].strip() for s in sorted(levels, reverse=True)})
        object.__setattr__(self, "requires", tuple(dict.fromkeys(self.requires)))
        object.__setattr__(self, "name", self.name.strip())
        object.__setattr__(self, "description", (self.description or "").strip())

    def normalise(self, score: float) -> float:
        """Map a raw score onto [0, 1]: (s − min) / (max − min). Out-of-range scores are an error, never clamped."""
        if not (self.min <= score <= self.max):
            raise ValueError(f"{self.id}: score {score} is outside {self.min}..{self.max}")
        return (score - self.min) / (self.max - self.min)

    def with_level(self, score: int, text: str) -> Criterion:
        """A copy with one level description replaced (what the rubric editor does)."""
        return replace(self, levels={**self.levels, score: text})

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "min": self.min,
            "max": self.max,
            "levels": {str(s): t for s, t in self.levels.items()},
            "requires": list(self.requires),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Criterion:
        missing = [k for k in ("id", "name", "min", "max", "levels") if k not in data]
        if missing:
            raise RubricError([f"criterion {data.get('id', '?')!r}: missing field(s) {missing}"])
        return cls(
            id=data["id"],
            name=data["name"],
            description=data.get("description", ""),
            min=data["min"],
            max=data["max"],
            levels=dict(data["levels"]),
            requires=tuple(data.get("requires", ())),
        )


@dataclass(frozen=True, eq=True)
class Rubric:
    """A named list of criteria judged in one prompt, in one language.

    ``instructions`` is the role line that opens the prompt (the RAGAS-vs-judge article's "あなたは…専門家です。");
    ``description`` explains the rubric to people (UI, README) and is not sent to the model.
    """

    id: str
    name: str
    language: str
    criteria: tuple[Criterion, ...]
    instructions: str = ""
    description: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    __hash__ = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not isinstance(self.id, str) or not _RUBRIC_ID.match(self.id):
            problems.append(say("rubric.bad_rubric_id", id=repr(self.id)))
        if self.language not in LANGUAGES:
            problems.append(f"rubric {self.id!r}: language must be one of {', '.join(LANGUAGES)}, not {self.language!r}")
        criteria = tuple(self.criteria)
        if not criteria:
            problems.append(say("rubric.no_criteria", id=repr(self.id)))
        seen: set[str] = set()
        for c in criteria:
            if not isinstance(c, Criterion):
                problems.append(f"rubric {self.id!r}: {c!r} is not a Criterion")
            elif c.id in seen:
                problems.append(say("rubric.twice", id=repr(self.id), criterion=repr(c.id)))
            else:
                seen.add(c.id)
        if problems:
            raise RubricError(problems)
        object.__setattr__(self, "criteria", criteria)
        object.__setattr__(self, "name", (self.name or self.id).strip())
        object.__setattr__(self, "instructions", (self.instructions or "").strip())
        object.__setattr__(self, "metadata", dict(self.metadata or {}))

    # ------------------------------------------------------------------ access
    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.criteria)

    def criterion(self, criterion_id: str) -> Criterion:
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(f"rubric {self.id!r} has no criterion {criterion_id!r}; it has {', '.join(self.ids)}")

    def normalise(self, criterion_id: str, score: float) -> float:
        return self.criterion(criterion_id).normalise(score)

    @property
    def uniform_scale(self) -> tuple[int, int] | None:
        """(min, max) when every criterion shares one scale, else None."""
        scales = {(c.min, c.max) for c in self.criteria}
        return next(iter(scales)) if len(scales) == 1 else None

    # ------------------------------------------------------------------ editing (new objects)
    def with_criterion(self, criterion: Criterion) -> Rubric:
        """A copy with ``criterion`` added, or replacing the criterion with the same id in place."""
        if criterion.id in self.ids:
            return replace(self, criteria=tuple(criterion if c.id == criterion.id else c for c in self.criteria))
        return replace(self, criteria=self.criteria + (criterion,))

    def without_criterion(self, criterion_id: str) -> Rubric:
        self.criterion(criterion_id)
        return replace(self, criteria=tuple(c for c in self.criteria if c.id != criterion_id))

    def with_level(self, criterion_id: str, score: int, text: str) -> Rubric:
        return self.with_criterion(self.criterion(criterion_id).with_level(score, text))

    def renamed(self, rubric_id: str, name: str | None = None) -> Rubric:
        """"Save as": a copy under a new id, so an edited preset is reported as ``judge:<new id>``."""
        return replace(self, id=rubric_id, name=name or rubric_id)

    def subset(self, criterion_ids: Iterable[str]) -> Rubric:
        """The same rubric restricted to some criteria (per-criterion calls, rows missing an input)."""
        wanted = set(criterion_ids)
        return replace(self, criteria=tuple(c for c in self.criteria if c.id in wanted))

    # ------------------------------------------------------------------ serialisation and hashing
    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "language": self.language,
            "description": self.description,
            "instructions": self.instructions,
            "criteria": [c.to_dict() for c in self.criteria],
        }
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rubric:
        if not isinstance(data, Mapping):
            raise RubricError([f"a rubric is a JSON object, not {type(data).__name__}"])
        missing = [k for k in ("id", "language", "criteria") if k not in data]
        if missing:
            raise RubricError([f"rubric: missing field(s) {missing}"])
        problems: list[str] = []
        criteria: list[Criterion] = []
        for item in data["criteria"]:
            try:
                criteria.append(Criterion.from_dict(item))
            except RubricError as exc:
                problems.extend(exc.problems)
        if problems:
            raise RubricError(problems)
        return cls(
            id=data["id"],
            name=data.get("name", data["id"]),
            language=data["language"],
            criteria=tuple(criteria),
            instructions=data.get("instructions", ""),
            description=data.get("description", ""),
            metadata=data.get("metadata", {}),
        )

    @classmethod
    def from_json(cls, text: str) -> Rubric:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RubricError([f"rubric JSON: {exc}"]) from None
        return cls.from_dict(data)

    @property
    def content_hash(self) -> str:
        """sha256 of the canonical JSON (sorted keys): the version id stored with every judge result."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def short_hash(self) -> str:
        return self.content_hash[:12]


def rubric_record(rubric: Rubric) -> dict[str, Any]:
    """The rubric keyed by criterion id (order kept in ``order``), as a run records it.

    Nested mappings instead of lists, so comparing two runs' settings names the leaf that changed
    (``criteria.faithfulness.levels.2``) instead of two whole criterion lists.
    """
    data = rubric.to_dict()
    criteria = data.pop("criteria")
    data["order"] = [c["id"] for c in criteria]
    data["criteria"] = {c.pop("id"): c for c in criteria}
    return data


def rubric_from_record(data: Mapping[str, Any]) -> Rubric:
    """The rubric back from ``rubric_record`` (to reuse or diff a run's rubric as text)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("criteria"), Mapping):
        raise RubricError(["not a recorded rubric: expected a 'criteria' mapping keyed by criterion id"])
    criteria = data["criteria"]
    order = list(data.get("order") or criteria)
    plain = {k: v for k, v in data.items() if k not in ("order", "criteria")}
    plain["criteria"] = [{"id": cid, **criteria[cid]} for cid in order if cid in criteria]
    return Rubric.from_dict(plain)


# ---------------------------------------------------------------------- presets


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise RubricError([f"language must be one of {', '.join(LANGUAGES)}, not {language!r}"])


@functools.lru_cache(maxsize=32)
def _load_preset(rubric_id: str, language: str) -> Rubric:
    path = RUBRICS_DIR / language / f"{rubric_id}.json"
    return Rubric.from_json(path.read_text(encoding="utf-8"))


def load_rubric(id_or_path: str | Path, language: str = "ja") -> Rubric:
    """A preset by id (``rubric5``, ``binary``, ``binary-strict``) in ``language``, or a rubric JSON file."""
    if isinstance(id_or_path, str) and id_or_path in PRESET_IDS:
        _check_language(language)
        return _load_preset(id_or_path, language)
    path = Path(id_or_path)
    if path.is_file():
        return Rubric.from_json(path.read_text(encoding="utf-8-sig"))
    raise RubricError([f"no rubric {str(id_or_path)!r}: not a preset ({', '.join(PRESET_IDS)}) and not a file"])


def preset_rubrics(language: str = "ja") -> list[Rubric]:
    """Every preset in one language, in PRESET_IDS order."""
    return [load_rubric(rubric_id, language) for rubric_id in PRESET_IDS]


def is_preset(rubric: Rubric) -> bool:
    """True when ``rubric`` is an unedited preset (same content hash as the shipped file)."""
    if rubric.id not in PRESET_IDS or rubric.language not in LANGUAGES:
        return False
    return load_rubric(rubric.id, rubric.language).content_hash == rubric.content_hash


# ---------------------------------------------------------------------- rendering into prompt text


@functools.lru_cache(maxsize=1)
def _all_phrases() -> dict[str, dict[str, str]]:
    return json.loads((PRESETS_DIR / "judge_phrases.json").read_text(encoding="utf-8"))


def judge_phrases(language: str) -> dict[str, str]:
    """The per-language phrases that turn a rubric into prompt text (data, not code)."""
    _check_language(language)
    return dict(_all_phrases()[language])


def render_overview(rubric: Rubric) -> str:
    """The line under the role line: how many criteria, on which scale (the RAGAS-vs-judge article's wording; a 0/1 scale is
    worded as the synthetic-QA article's pass / fail judgement)."""
    p = judge_phrases(rubric.language)
    scale = rubric.uniform_scale
    if len(rubric.criteria) == 1 and scale is not None:  # per-criterion calls: no "each of 1 criteria"
        key = "overview_single_binary" if scale == (0, 1) else "overview_single"
        return p[key].format(min=scale[0], max=scale[1])
    if scale == (0, 1):
        return p["overview_binary"].format(count=len(rubric.criteria))
    if scale is not None:
        return p["overview_uniform"].format(count=len(rubric.criteria), min=scale[0], max=scale[1])
    return p["overview_mixed"].format(count=len(rubric.criteria))


def render_criterion(criterion: Criterion, index: int, language: str) -> str:
    """One criterion block: heading with its scale, description, then every level, highest first."""
    p = judge_phrases(language)
    heading = p["heading_binary"] if (criterion.min, criterion.max) == (0, 1) else p["heading"]
    lines = [heading.format(index=index, name=criterion.name, min=criterion.min, max=criterion.max)]
    if criterion.description:
        lines.append(criterion.description)
    lines.extend(p["level"].format(score=s, text=t) for s, t in criterion.levels.items())
    return "\n".join(lines)


def render_rubric(rubric: Rubric) -> str:
    """Every criterion block, numbered, separated by a blank line."""
    return "\n\n".join(render_criterion(c, i, rubric.language) for i, c in enumerate(rubric.criteria, 1))


def render_output_format(rubric: Rubric) -> str:
    """The JSON answer block of the RAGAS-vs-judge article's prompt: flat ``<id>_score`` and ``<id>_reason`` keys."""
    p = judge_phrases(rubric.language)
    lines = []
    for c in rubric.criteria:
        lines.append(f'"{c.id}_score": {p["score_hint"].format(min=c.min, max=c.max)},')
        lines.append(f'"{c.id}_reason": "{p["reason_hint"]}",')
    if lines:
        lines[-1] = lines[-1].rstrip(",")
    return "{\n" + "\n".join(lines) + "\n}"

