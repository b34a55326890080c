"""What changed between two runs' recorded versions and settings (rubric and template hashes, sampling
settings): a plain diff of nested mappings, used by the runner's resume check and by Compare."""

from __future__ import annotations

from typing import Any, Mapping


def version_changes(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any, Any]]:
    """Leaves that differ between two nested mappings (a run's versions or settings), as (path, a, b).

    This is what tells two prompt versions apart: a changed rubric hash, template hash or setting.
    """
    out: list[tuple[str, Any, Any]] = []
    for key in list(dict.fromkeys([*a.keys(), *b.keys()])):
        path = f"{prefix}{key}"
        va, vb = a.get(key), b.get(key)
        if isinstance(va, Mapping) and isinstance(vb, Mapping):
            out.extend(version_changes(va, vb, path + "."))
        elif va != vb:
            out.append((path, va, vb))
    return out
