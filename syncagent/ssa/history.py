"""Ownership transitions: what changed between two ``managedFields`` snapshots of one object.

managedFields say who owns each field now, never who owned it before. The agent sees every
version of the objects it watches, so it can keep the difference between consecutive versions
(docs/ownership.md §6): per field manager entry (manager, operation, subresource) the paths it
gained and the paths it lost, and, for the paths a ``tracked`` manager (the agent's own) holds
before or after, the value before and after when it changed. Pure: the caller says when it saw the change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from syncagent.ssa.managedfields import decode_fields
from syncagent.ssa.paths import FieldPath, lookup, render

MAX_VALUE = 200  # characters of a value's JSON kept; a longer one ends with "..."

EntryKey = tuple[str, str, str]  # manager, operation, subresource


@dataclass(frozen=True, slots=True)
class ManagerChange:
    """One managedFields entry's field set moved: the paths it gained and lost."""

    manager: str
    operation: str
    subresource: str
    gained: tuple[str, ...]
    lost: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ValueChange:
    """A tracked path's value before and after, when it changed (compact JSON; None: absent)."""

    path: str
    before: str | None
    after: str | None


@dataclass(frozen=True, slots=True)
class Transition:
    """The ownership changes of one new version of an object, as the agent saw it."""

    time: float  # seconds since the epoch, when the agent saw the version
    resource_version: str
    changes: tuple[ManagerChange, ...]
    values: tuple[ValueChange, ...] = ()

    def to_doc(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "resourceVersion": self.resource_version,
            "changes": [
                {
                    "manager": c.manager,
                    "operation": c.operation,
                    "subresource": c.subresource,
                    "gained": list(c.gained),
                    "lost": list(c.lost),
                }
                for c in self.changes
            ],
            "values": [{"path": v.path, "before": v.before, "after": v.after} for v in self.values],
        }


def from_doc(doc: Mapping[str, Any]) -> Transition:
    """A transition back from :meth:`Transition.to_doc` (what the history endpoint serves)."""
    return Transition(
        time=float(doc["time"]),
        resource_version=str(doc.get("resourceVersion") or ""),
        changes=tuple(
            ManagerChange(
                str(c["manager"]),
                str(c.get("operation") or ""),
                str(c.get("subresource") or ""),
                tuple(c.get("gained") or ()),
                tuple(c.get("lost") or ()),
            )
            for c in doc.get("changes") or ()
        ),
        values=tuple(
            ValueChange(str(v["path"]), v.get("before"), v.get("after"))
            for v in doc.get("values") or ()
        ),
    )


def _raw_sets(obj: Mapping[str, Any] | None) -> dict[EntryKey, list[Mapping[str, Any]]]:
    """Each entry's raw fieldsV1 (several when the server lists a key twice, per apiVersion)."""
    out: dict[EntryKey, list[Mapping[str, Any]]] = {}
    meta = (obj or {}).get("metadata") or {}
    for raw in meta.get("managedFields") or ():
        key = (
            str(raw.get("manager", "")),
            str(raw.get("operation", "")),
            raw.get("subresource") or "",
        )
        out.setdefault(key, []).append(raw.get("fieldsV1") or {})
    return out


def _paths(raws: Iterable[Mapping[str, Any]]) -> frozenset[FieldPath]:
    out: frozenset[FieldPath] = frozenset()
    for fields in raws:
        out |= decode_fields(fields)
    return out


def transition(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    time: float,
    tracked: Callable[[str], bool],
) -> Transition | None:
    """The ownership changes from ``old`` to ``new``; None when no field changed hands.

    Only entries whose fieldsV1 differ are decoded: most new versions (status writes, a
    resync's no-op) move an entry's ``time`` and nothing else.
    """
    before, after = _raw_sets(old), _raw_sets(new)
    changes: list[ManagerChange] = []
    ours: set[FieldPath] = set()
    moved: set[FieldPath] = set()
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key, []), after.get(key, [])
        if was == now:
            continue
        old_paths, new_paths = _paths(was), _paths(now)
        gained, lost = new_paths - old_paths, old_paths - new_paths
        if not gained and not lost:
            continue
        changes.append(ManagerChange(*key, _rendered(gained), _rendered(lost)))
        moved |= gained | lost
        if tracked(key[0]):
            ours |= old_paths | new_paths
    if not changes:
        return None
    ours |= _tracked_paths(before, after, tracked, moved)
    values = tuple(v for p in sorted(moved & ours, key=render) if (v := _value(old, new, p)))
    rv = str(((new.get("metadata") or {}).get("resourceVersion")) or "")
    return Transition(time, rv, tuple(changes), values)


def _tracked_paths(
    before: Mapping[EntryKey, Sequence[Mapping[str, Any]]],
    after: Mapping[EntryKey, Sequence[Mapping[str, Any]]],
    tracked: Callable[[str], bool],
    moved: set[FieldPath],
) -> set[FieldPath]:
    """The moved paths a tracked entry holds, before or after, though its own set is unchanged
    (a co-owner joined or left beside it)."""
    found: set[FieldPath] = set()
    for sets in (before, after):
        for key, raws in sets.items():
            if tracked(key[0]) and before.get(key) == after.get(key):
                found |= moved & _paths(raws)
    return found


def _rendered(paths: Iterable[FieldPath]) -> tuple[str, ...]:
    return tuple(sorted(render(p) for p in paths))


_ABSENT = object()


def _value(old: Mapping[str, Any], new: Mapping[str, Any], path: FieldPath) -> ValueChange | None:
    """The path's value before and after, when it changed (a takeover moves owners only)."""
    before, after = next(lookup(old, path), _ABSENT), next(lookup(new, path), _ABSENT)
    if before == after:
        return None
    return ValueChange(render(path), _json(before), _json(after))


def _json(value: Any) -> str | None:
    if value is _ABSENT:
        return None
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "..."
