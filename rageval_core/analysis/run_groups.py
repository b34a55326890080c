"""The user's runs and the side runs made for them: probes (a perturbed copy of a run's rows, scored to see whether
the score moves), "vs people" runs (a rubric version judged on the labelled dev rows) and prompt tests (the Prompts
page's quick runs on pinned rows, its step tests and its version grid).

A side run says what it is in its settings: ``{"probe": name, "base_run": id}``, ``{"versus": {...}}``,
``{"prompt_test": what}``; runs stored before the prompt-test tag are known by the names the workbench gave them.
Run pickers list the user's runs (newest first) and show side runs only when asked; History puts each side run
under the run it was made for (a probe's base run), and side runs with no stored parent together by kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rageval_core.store.runs import RunInfo

PROBE, VERSUS, PROMPT_TEST = "probe", "versus", "prompt_test"
SIDE_KINDS = (PROBE, VERSUS, PROMPT_TEST)
# Names the workbench gave side runs before they carried a tag (prompt tests and step tests, in both UI languages).
_LEGACY_SUFFIXES = {" · prompt test": PROMPT_TEST}
_LEGACY_PREFIXES = {"step test · ": PROMPT_TEST, "ステップの試行 · ": PROMPT_TEST}


def side_kind(info: RunInfo) -> str | None:
    """``"probe"``, ``"versus"`` or ``"prompt_test"`` for a side run; None for a run the user started."""
    settings = info.settings or {}
    for kind in SIDE_KINDS:
        if settings.get(kind):
            return kind
    name = info.dataset_name or ""
    for suffix, kind in _LEGACY_SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    for prefix, kind in _LEGACY_PREFIXES.items():
        if name.startswith(prefix):
            return kind
    return None


def side_detail(info: RunInfo) -> str:
    """What a side run tried, in a word or two: the probe's name, the rubric version, the prompt test's step."""
    settings = info.settings or {}
    kind = side_kind(info)
    if kind == PROBE:
        return str(settings.get(PROBE))
    if kind == VERSUS:
        versus = settings.get(VERSUS)
        return str(versus.get("version", "")) if isinstance(versus, dict) else ""
    if kind == PROMPT_TEST:
        tag = settings.get(PROMPT_TEST)
        return "" if tag in (None, True) else str(tag)
    return ""


def parent_of(info: RunInfo) -> str | None:
    """The run a side run was made for (a probe's base run), when it names one."""
    parent = (info.settings or {}).get("base_run")
    return str(parent) if parent else None


def is_side(info: RunInfo) -> bool:
    return side_kind(info) is not None


def newest_first(infos: Iterable[RunInfo]) -> list[RunInfo]:
    return sorted(infos, key=lambda i: -i.created_at)


def user_runs(infos: Iterable[RunInfo]) -> list[RunInfo]:
    """The runs the user started (no side runs), newest first."""
    return newest_first(i for i in infos if not is_side(i))


@dataclass(frozen=True)
class RunGroup:
    """A run the user started and the side runs made for it; ``run`` None: side runs of ``kind`` with no stored
    parent (vs people runs and prompt tests are made on the Prompts page, not for a run)."""

    run: RunInfo | None
    side: tuple[RunInfo, ...]
    kind: str | None = None

    def ids(self) -> list[str]:
        return ([self.run.id] if self.run is not None else []) + [s.id for s in self.side]


def group_runs(infos: Sequence[RunInfo], order: Sequence[str] | None = None) -> list[RunGroup]:
    """Each user run with its side runs (newest first), in ``order`` (run ids; default newest first), then the side
    runs whose parent is not among ``infos``, one group per kind. A side run of a side run (a probe of a probe run)
    goes under the user run at the top of its chain."""
    by_id = {i.id: i for i in infos}
    rank = {run_id: n for n, run_id in enumerate(order)} if order is not None else None

    def position(info: RunInfo) -> tuple[float, float]:
        return (rank.get(info.id, len(rank)), 0.0) if rank is not None else (0.0, -info.created_at)

    def top(info: RunInfo) -> RunInfo | None:
        seen: set[str] = set()
        current = info
        while is_side(current):
            parent = parent_of(current)
            if parent is None or parent not in by_id or parent in seen:
                return None
            seen.add(parent)
            current = by_id[parent]
        return current

    children: dict[str, list[RunInfo]] = {}
    orphans: dict[str, list[RunInfo]] = {}
    for info in infos:
        if not is_side(info):
            continue
        owner = top(info)
        if owner is None:
            orphans.setdefault(side_kind(info) or PROMPT_TEST, []).append(info)
        else:
            children.setdefault(owner.id, []).append(info)
    mains = sorted((i for i in infos if not is_side(i)), key=position)
    groups = [RunGroup(m, tuple(newest_first(children.get(m.id, ())))) for m in mains]
    groups += [RunGroup(None, tuple(newest_first(orphans[k])), k) for k in SIDE_KINDS if k in orphans]
    return groups


def picker_runs(infos: Sequence[RunInfo], *, with_side: bool = False, keep: str | None = None) -> list[RunInfo]:
    """What a run picker lists: the user's runs newest first; ``with_side``: each followed by its side runs, then
    the side runs with no stored parent. ``keep``: a run id listed in any case (the session's selected run, which
    may be a side run opened from History)."""
    if with_side:
        by_id = {i.id: i for i in infos}
        return [by_id[run_id] for group in group_runs(infos) for run_id in group.ids()]
    out = user_runs(infos)
    if keep is not None and keep not in {i.id for i in out}:
        out += [i for i in infos if i.id == keep]
    return out


def grouped_ids(infos: Sequence[RunInfo], order: Sequence[str], *, with_side: bool) -> list[str]:
    """``order`` (a leaderboard's run ids, filtered and sorted) with every side run moved under its parent run;
    without ``with_side``, only the user's runs of ``order``."""
    wanted = set(order)
    shown = [i for i in infos if i.id in wanted]
    if not with_side:
        side = {i.id for i in shown if is_side(i)}
        return [run_id for run_id in order if run_id not in side]
    return [run_id for group in group_runs(shown, order) for run_id in group.ids()]


def side_counts(infos: Sequence[RunInfo]) -> dict[str, int]:
    """Per user run: how many side runs were made for it (directly or through another side run)."""
    return {g.run.id: len(g.side) for g in group_runs(infos) if g.run is not None}


__all__ = ["PROBE", "PROMPT_TEST", "SIDE_KINDS", "VERSUS", "RunGroup", "group_runs", "grouped_ids", "is_side",
           "newest_first", "parent_of", "picker_runs", "side_counts", "side_detail", "side_kind", "user_runs"]
