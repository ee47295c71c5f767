"""Records that a desired object was converged at a resourceVersion (docs/write-protocol.md §1).

A record also keeps the object's *fingerprint*: its UID and the live values of what the desired
object sets (each top-level field but metadata, the labels and annotations it sets, other
metadata it sets, and the owner reference items of the owners it names). An apply of the same
desired object onto the same values changes nothing, so a new resourceVersion with the same
fingerprint is a change our apply would not undo: a controller reporting status or writing its
own annotation (the Deployment controller's revision, which also bumps the Deployment's
generation), a label someone else added, another co-owner joining a shared Service. Still
converged, no dry run (docs/write-protocol.md).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from syncagent.kube.objects import Body, ObjectRef

_IDENTITY = frozenset({"apiVersion", "kind", "metadata"})
_KEYED = ("labels", "annotations")
# Metadata the fingerprint takes apart (identity and preconditions: none; keyed: by key).
_META_APART = frozenset({"name", "namespace", "uid", "resourceVersion", "ownerReferences", *_KEYED})


@dataclass(frozen=True, slots=True)
class CacheKey:
    group: str
    kind: str
    namespace: str
    name: str
    manager: str
    subresource: str

    @classmethod
    def of(cls, ref: ObjectRef, *, manager: str, subresource: str = "") -> CacheKey:
        return cls(ref.group, ref.kind, ref.namespace, ref.name, manager, subresource)


def fingerprint(
    obj: Mapping[str, Any] | None, desired: Mapping[str, Any], *, subresource: str = ""
) -> str:
    """The live values of what ``desired`` sets (module doc), hashed; "" for a status apply,
    whose live status other writers share (its record keeps the resourceVersion rule)."""
    if subresource:
        return ""
    body = Body(obj)
    live, meta, wanted = body.raw, body.meta.raw, desired.get("metadata") or {}
    parts = [
        # a record is of one object: a recreated one (same name, same content) is another
        meta.get("uid"),
        [(key, live.get(key)) for key in sorted(desired) if key not in _IDENTITY],
        [_only(meta.get(key), wanted.get(key)) for key in _KEYED],
        [(key, meta.get(key)) for key in sorted(wanted) if key not in _META_APART],
        _items_of(meta.get("ownerReferences"), wanted.get("ownerReferences")),
    ]
    return hashlib.blake2b(
        orjson.dumps(parts, option=orjson.OPT_SORT_KEYS), digest_size=12
    ).hexdigest()


def _only(live: Mapping[str, str] | None, wanted: Mapping[str, str] | None) -> list[Any]:
    """The live values of the keys ``wanted`` sets: an apply neither reads nor touches the
    others."""
    live = live or {}
    return [(key, live.get(key)) for key in sorted(wanted or ())]


def _items_of(live: list[Any] | None, wanted: list[Any] | None) -> list[Any]:
    """The live owner reference items of the owners ``wanted`` names (a map-list keyed by
    uid): an apply neither reads nor touches another owner's item."""
    uids = {item.get("uid") for item in wanted or ()}
    return [item for item in live or () if item.get("uid") in uids]


class ConvergenceCache:
    """(object, manager, subresource) -> (desired digest, resourceVersion, fingerprint), least
    recently used evicted first. A hit proves an apply would change nothing, so it needs no
    request."""

    def __init__(self, *, max_entries: int = 200_000) -> None:
        self._entries: OrderedDict[CacheKey, tuple[str, str, str, bool]] = OrderedDict()
        self._max = max_entries

    def converged(
        self,
        key: CacheKey,
        *,
        digest: str,
        resource_version: str,
        fingerprint: Callable[[], str] = str,
    ) -> bool:
        """``fingerprint`` is asked only when the resourceVersion moved: it hashes the live
        values of everything the desired object sets, and a converged resync needs none."""
        record = self._entries.get(key)
        if record is None or not resource_version or record[0] != digest:
            return False
        self._entries.move_to_end(key)
        if record[1] == resource_version:
            return True
        return bool(record[2]) and record[2] == fingerprint()

    def recorded(self, key: CacheKey) -> tuple[str, str] | None:
        """The (digest, resourceVersion) last recorded for ``key``, if any. A ``partial``
        record (some paths were yielded) says nothing about the caller's whole intent."""
        record = self._entries.get(key)
        return None if record is None or record[3] else (record[0], record[1])

    def record(
        self,
        key: CacheKey,
        *,
        digest: str,
        resource_version: str,
        fingerprint: str = "",
        partial: bool = False,
    ) -> None:
        if not resource_version:
            return
        self._entries[key] = (digest, resource_version, fingerprint, partial)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def forget(self, ref: ObjectRef) -> None:
        """Drop every record of one object (after a delete)."""
        for key in [
            k
            for k in self._entries
            if (k.group, k.kind, k.namespace, k.name)
            == (ref.group, ref.kind, ref.namespace, ref.name)
        ]:
            del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
