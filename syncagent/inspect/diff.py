"""Live object vs dry-run result, as a unified diff of YAML.

Both sides are server answers (docs/design.md §9), so server defaults appear on both and never show
as changes. Fields only the server sets per request (resourceVersion, uid, timestamps,
managedFields) and, for content applies, ``status`` are left out: they are not what a plan is
about. An absent side diffs as empty, so a created object shows every line added.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping
from typing import Any

import yaml

from syncagent.ssa import quirks

_VOLATILE = (
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
)


def comparable(obj: Mapping[str, Any] | None, *, keep_status: bool = False) -> dict[str, Any]:
    """The parts of ``obj`` a diff shows."""
    if not obj:
        return {}
    out = quirks.normalise(copy.deepcopy(dict(obj)))
    meta = out.get("metadata") or {}
    for key in _VOLATILE:
        meta.pop(key, None)
    if not keep_status:
        out.pop("status", None)
    return out


def to_yaml(obj: Mapping[str, Any]) -> list[str]:
    if not obj:
        return []
    text = yaml.safe_dump(dict(obj), sort_keys=True, default_flow_style=False, width=10_000)
    return text.splitlines()


def unified(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    *,
    keep_status: bool = False,
    context: int = 3,
) -> list[str]:
    """Diff lines (``-``, ``+``, `` `` and ``@@`` hunk headers); empty when equal."""
    old = to_yaml(comparable(before, keep_status=keep_status))
    new = to_yaml(comparable(after, keep_status=keep_status))
    if old == new:
        return []
    lines = list(difflib.unified_diff(old, new, "live", "planned", n=context, lineterm=""))
    return [line for line in lines if not line.startswith(("---", "+++"))]
