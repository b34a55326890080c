"""The rubric as two editable tables (criteria, level descriptions) and back, for the Prompts & rubric page.

Validation stays in the core: the tables are turned into a dict and read by ``Rubric.from_dict``, whose
``RubricError`` lists every problem (missing level, bad id, min ≥ max, ...).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from rageval_core.scoring.rubric import Rubric

CRITERIA_COLUMNS = ["id", "name", "description", "min", "max", "requires"]
LEVEL_COLUMNS = ["criterion", "score", "description"]


def rubric_to_frames(rubric: Rubric) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per criterion, and one row per (criterion, score level), highest level first."""
    criteria = pd.DataFrame(
        [
            {
                "id": c.id,
                "name": c.name,
                "description": c.description,
                "min": c.min,
                "max": c.max,
                "requires": ", ".join(c.requires),
            }
            for c in rubric.criteria
        ],
        columns=CRITERIA_COLUMNS,
    )
    levels = pd.DataFrame(
        [{"criterion": c.id, "score": score, "description": text} for c in rubric.criteria for score, text in c.levels.items()],
        columns=LEVEL_COLUMNS,
    )
    return criteria, levels


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value)) or (isinstance(value, str) and not value.strip())


def _int(value: Any) -> Any:
    if _blank(value):
        return None
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        return value  # the core names the bad value
    return int(as_float) if as_float.is_integer() else value


def frames_to_rubric(base: Rubric, criteria: pd.DataFrame, levels: pd.DataFrame, *, rubric_id: str, instructions: str) -> Rubric:
    """Build a rubric from the edited tables; raises ``RubricError`` naming every problem."""
    items: list[dict[str, Any]] = []
    for row in criteria.to_dict("records"):
        if all(_blank(row.get(c)) for c in CRITERIA_COLUMNS):
            continue
        cid = "" if _blank(row.get("id")) else str(row["id"]).strip()
        own = [lv for lv in levels.to_dict("records") if str(lv.get("criterion") or "").strip() == cid]
        items.append(
            {
                "id": cid,
                "name": "" if _blank(row.get("name")) else str(row["name"]),
                "description": "" if _blank(row.get("description")) else str(row["description"]),
                "min": _int(row.get("min")),
                "max": _int(row.get("max")),
                "levels": {str(_int(lv["score"])): str(lv.get("description") or "") for lv in own if not _blank(lv.get("score"))},
                "requires": [r.strip() for r in str(row.get("requires") or "").split(",") if r.strip()],
            }
        )
    data = base.to_dict()
    new_id = rubric_id.strip() or base.id
    # Keep the base's display name unless the rubric was renamed: an untouched preset stays that preset.
    data.update(id=new_id, name=base.name if new_id == base.id else new_id, instructions=instructions, criteria=items)
    return Rubric.from_dict(data)


def add_missing_levels(criteria: pd.DataFrame, levels: pd.DataFrame) -> pd.DataFrame:
    """Level rows for every score of every criterion's scale that has none yet (blank text to fill in)."""
    have = {(str(r["criterion"]), _int(r["score"])) for r in levels.to_dict("records")}
    extra = []
    for row in criteria.to_dict("records"):
        lo, hi = _int(row.get("min")), _int(row.get("max"))
        if isinstance(lo, int) and isinstance(hi, int) and 0 <= hi - lo <= 100:
            extra.extend(
                {"criterion": str(row["id"]), "score": s, "description": ""}
                for s in range(hi, lo - 1, -1)
                if (str(row["id"]), s) not in have
            )
    if not extra:
        return levels
    return pd.concat([levels, pd.DataFrame(extra, columns=LEVEL_COLUMNS)], ignore_index=True)
