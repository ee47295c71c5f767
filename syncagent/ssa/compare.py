"""Does applying change anything? Compare a dry-run result with the live object (docs/write-protocol.md §1).

Never compare desired with live: the server adds defaults, so only two server answers compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncagent.kube.objects import Body
from syncagent.ssa import managedfields, quirks

_METADATA_FIELDS = ("labels", "annotations", "ownerReferences")


def differences(
    live: Mapping[str, Any],
    dry_run: Mapping[str, Any],
    *,
    manager: str,
    subresource: str = "",
) -> list[str]:
    """The compared parts that differ, named readably; empty means the apply is a no-op.

    Compared: every top-level field except ``metadata`` and ``status`` (``status`` only, for a
    status apply); the whole labels, annotations and ownerReferences; and ``manager``'s Apply
    entry for this subresource as a field set, ignoring ``time``.
    """
    before, after = quirks.normalise(live), quirks.normalise(dry_run)
    out = [f".{f}" for f in _top_level(before, after, subresource) if before.get(f) != after.get(f)]
    meta_b, meta_a = Body(before).meta.raw, Body(after).meta.raw
    out += [f".metadata.{f}" for f in _METADATA_FIELDS if meta_b.get(f) != meta_a.get(f)]
    if not _same_entry(before, after, manager=manager, subresource=subresource):
        out.append(f"managedFields[manager={manager}]")
    return out


def _top_level(before: Mapping[str, Any], after: Mapping[str, Any], subresource: str) -> list[str]:
    if subresource == "status":
        return ["status"]
    # apiVersion and kind name the object rather than describe it, and list/watch items of
    # a collection omit them, so a watch-cache view would otherwise always differ.
    fields = (set(before) | set(after)) - {"metadata", "status", "apiVersion", "kind"}
    return sorted(fields)


def _same_entry(
    before: Mapping[str, Any], after: Mapping[str, Any], *, manager: str, subresource: str
) -> bool:
    entry_b = managedfields.entry_for(before, manager, subresource=subresource)
    entry_a = managedfields.entry_for(after, manager, subresource=subresource)
    if entry_b is None or entry_a is None:
        return entry_b is entry_a
    return entry_b.same_set(entry_a)
