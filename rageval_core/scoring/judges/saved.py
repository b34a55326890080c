"""Saved judge configurations: the workbench's list, kept as ``judges.json`` in the state folder.

The same format ``--judges FILE`` reads (a JSON list), so a list built on the Evaluate page runs in CI as is.
Keys are never saved (``parse_judges`` refuses them); a configuration names its key variable instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from rageval_core.core import paths
from rageval_core.scoring.judges.config import JudgeConfig, JudgeConfigError, dump_judges, load_judges, parse_judges
from rageval_core.core.messages import say
from rageval_core.core.private import write_private_text

FILE_NAME = "judges.json"


def saved_path() -> Path:
    return paths.home() / FILE_NAME


def load_saved(path: str | Path | None = None) -> list[JudgeConfig]:
    """The saved configurations (none when the file does not exist yet)."""
    p = Path(path) if path is not None else saved_path()
    return load_judges(p) if p.is_file() else []


def save_all(judges: Sequence[JudgeConfig], path: str | Path | None = None) -> Path:
    """Replace the saved list (checked as a judges file is: unique ids, known fields, no keys)."""
    if judges:
        parse_judges([j.to_dict() for j in judges])
    p = Path(path) if path is not None else saved_path()
    if not judges:
        p.unlink(missing_ok=True)
        return p
    write_private_text(p, dump_judges(judges) + "\n")
    return p


def add(judge: JudgeConfig, path: str | Path | None = None) -> list[JudgeConfig]:
    """Add (or replace, by id) one configuration and save the list."""
    current = [j for j in load_saved(path) if j.id != judge.id] + [judge]
    save_all(current, path)
    return current


def remove(judge_id: str, path: str | Path | None = None) -> list[JudgeConfig]:
    current = [j for j in load_saved(path) if j.id != judge_id]
    save_all(current, path)
    return current


def import_text(text: str, name: str = "judges") -> list[JudgeConfig]:
    """Configurations from uploaded YAML or JSON text (JSON first, then YAML), within the file limits."""
    from rageval_core.scoring.judges.config import MAX_JUDGES_BYTES

    if len(text.encode("utf-8")) > MAX_JUDGES_BYTES:
        raise JudgeConfigError(say("judges.too_large", source=name, size=f"{len(text.encode('utf-8')):,}", limit=f"{MAX_JUDGES_BYTES:,}"))
    try:
        data = json.loads(text)
    except RecursionError:
        raise JudgeConfigError(say("judges.neither", name=name, error="nested too deeply")) from None
    except json.JSONDecodeError:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise JudgeConfigError(say("judges.neither", name=name, error=str(exc))) from None
    return parse_judges(data, source=name)
