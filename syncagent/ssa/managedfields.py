"""Decode ``metadata.managedFields`` into per-manager field sets with readable paths.

This is the data ``blame`` and ``conflicts`` read: who owns which field, with which operation,
on which subresource. The ``fieldsV1`` encoding (structured-merge-diff) nests one JSON object per
path element: ``f:<name>`` a field, ``k:<json object>`` a list item by key, ``v:<json>`` a set
member, ``i:<n>`` a list position; a ``"."`` member marks the node itself as owned, and an empty
object is an owned leaf.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from syncagent.kube.objects import Body
from syncagent.ssa.paths import Element, Field, FieldPath, Index, Key, Scalar, Value, render


@dataclass(frozen=True, slots=True)
class ManagerEntry:
    """One managedFields entry: a manager's field set for one operation and subresource."""

    manager: str
    operation: str
    subresource: str = ""
    api_version: str = ""
    time: str | None = None
    fields: frozenset[FieldPath] = field(default_factory=frozenset)

    def paths(self) -> list[str]:
        """The owned paths, rendered and sorted."""
        return sorted(render(p) for p in self.fields)

    def owns(self, path: FieldPath) -> bool:
        return path in self.fields

    def same_set(self, other: ManagerEntry) -> bool:
        """Equal as field sets, ignoring ``time`` (the comparison of docs/write-protocol.md §1)."""
        return (
            self.manager == other.manager
            and self.operation == other.operation
            and self.subresource == other.subresource
            and self.api_version == other.api_version
            and self.fields == other.fields
        )


@dataclass(frozen=True, slots=True)
class Owner:
    """Who owns one path: the manager, its operation and subresource."""

    manager: str
    operation: str
    subresource: str = ""


def decode_fields(fields_v1: Mapping[str, Any]) -> frozenset[FieldPath]:
    """The set of owned paths in one ``fieldsV1`` object."""
    out: set[FieldPath] = set()
    _walk(fields_v1, (), out)
    return frozenset(out)


def _walk(node: Mapping[str, Any], prefix: FieldPath, out: set[FieldPath]) -> None:
    for raw, child in node.items():
        if raw == ".":
            out.add(prefix)
            continue
        path = (*prefix, decode_element(raw))
        if not child:
            out.add(path)
        else:
            _walk(child, path, out)


def decode_element(raw: str) -> Element:
    """One ``fieldsV1`` member name as a path element."""
    kind, _, rest = raw.partition(":")
    if kind == "f":
        return Field(rest)
    if kind == "k":
        key = json.loads(rest)
        return Key(tuple((name, _scalar(value)) for name, value in key.items()))
    if kind == "v":
        return Value(_scalar(json.loads(rest)))
    if kind == "i":
        return Index(int(rest))
    raise ValueError(f"unknown managedFields element {raw!r}")


def _scalar(value: Any) -> Scalar:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    # Keys are scalars in every built-in and CRD schema; keep anything else hashable and readable.
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def decode_entry(raw: Mapping[str, Any]) -> ManagerEntry:
    return ManagerEntry(
        manager=raw.get("manager", ""),
        operation=raw.get("operation", ""),
        subresource=raw.get("subresource", "") or "",
        api_version=raw.get("apiVersion", ""),
        time=raw.get("time"),
        fields=decode_fields(raw.get("fieldsV1") or {}),
    )


def decode(obj: Mapping[str, Any]) -> list[ManagerEntry]:
    """Every managedFields entry of a live object, in the server's order."""
    return [decode_entry(entry) for entry in Body(obj).meta.managed_fields]


def entry_for(
    obj: Mapping[str, Any], manager: str, *, operation: str = "Apply", subresource: str = ""
) -> ManagerEntry | None:
    """The entry of ``manager`` for this operation and subresource, if any (only that one is
    decoded: this runs after every write)."""
    for raw in Body(obj).meta.managed_fields:
        key = (raw.get("manager", ""), raw.get("operation", ""), raw.get("subresource") or "")
        if key == (manager, operation, subresource):
            return decode_entry(raw)
    return None


def owners_by_path(entries: Iterable[ManagerEntry]) -> dict[FieldPath, list[Owner]]:
    """Blame: each owned path and every manager owning it (shared ownership lists several)."""
    owners: dict[FieldPath, list[Owner]] = {}
    for entry in entries:
        owner = Owner(entry.manager, entry.operation, entry.subresource)
        for path in entry.fields:
            owners.setdefault(path, []).append(owner)
    return owners


def blame(obj: Mapping[str, Any]) -> dict[str, list[Owner]]:
    """Blame keyed by readable path, sorted by path."""
    by_path = owners_by_path(decode(obj))
    return {render(p): by_path[p] for p in sorted(by_path, key=render)}


def managers_under(obj: Mapping[str, Any], prefix: FieldPath) -> set[str]:
    """Managers owning ``prefix`` itself or anything below it. Follows ``prefix`` down each
    entry's fieldsV1 instead of decoding every path (this runs before every owned write)."""
    found = set()
    for raw in Body(obj).meta.managed_fields:
        fields = raw.get("fieldsV1") or {}
        if _reaches(fields, prefix) if prefix else fields:  # an empty set owns no path
            found.add(str(raw.get("manager", "")))
    return found


def _reaches(node: Mapping[str, Any], prefix: FieldPath) -> bool:
    """Whether the fieldsV1 set ``node`` owns ``prefix`` or a path below it. A member that
    exists always owns a path (itself when empty, else ``.`` or a member below)."""
    if not prefix:
        return True
    head, rest = prefix[0], prefix[1:]
    if isinstance(head, Field):
        child = node.get(f"f:{head.name}")
        return child is not None and _reaches(child, rest)
    return any(
        raw != "." and decode_element(raw) == head and _reaches(child, rest)
        for raw, child in node.items()
    )


def managed_fields_patch(
    managed_fields: list[dict[str, Any]], resource_version: str
) -> list[dict[str, Any]]:
    """A JSON patch replacing managedFields (nothing else), guarded by the resourceVersion.

    Replacing (not testing) the resourceVersion makes it a precondition of the write, so a
    concurrent change fails with 409 Conflict from storage rather than a patch error (as
    client-go's csaupgrade does).
    """
    return [
        {"op": "replace", "path": "/metadata/managedFields", "value": managed_fields},
        {"op": "replace", "path": "/metadata/resourceVersion", "value": resource_version},
    ]
