"""Records that a desired object was converged at a resourceVersion (design §4.2 steps 1, 5).

A record also keeps the object's *fingerprint* when the object has one: its generation with its
labels, annotations and owner references, for a desired object that sets nothing but metadata
and ``spec``. The API server bumps ``metadata.generation`` on every change of ``spec`` (all
workload kinds, and custom resources with a status subresource), and the rest of what our
apply compares is in the fingerprint, so a new resourceVersion with the same fingerprint is a
status-only change (a controller reporting progress): still converged, no dry run
(docs/write-protocol.md).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from syncagent.kube.objects import Body, ObjectRef

_SPEC_ONLY = frozenset({"apiVersion", "kind", "metadata", "spec"})


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
    """Generation, labels, annotations and owner references of ``obj``, hashed; "" when they
    cannot stand for the object (no generation, a status apply, or ``desired`` sets more than
    metadata and ``spec``)."""
    meta = Body(obj).meta.raw
    if subresource or not meta.get("generation") or not set(desired) <= _SPEC_ONLY:
        return ""
    parts = [meta.get(k) for k in ("generation", "labels", "annotations", "ownerReferences")]
    return hashlib.blake2b(
        orjson.dumps(parts, option=orjson.OPT_SORT_KEYS), digest_size=12
    ).hexdigest()


class ConvergenceCache:
    """(object, manager, subresource) -> (desired digest, resourceVersion, fingerprint), least
    recently used evicted first. A hit proves an apply would change nothing, so it needs no
    request."""

    def __init__(self, *, max_entries: int = 200_000) -> None:
        self._entries: OrderedDict[CacheKey, tuple[str, str, str, bool]] = OrderedDict()
        self._max = max_entries

    def converged(
        self, key: CacheKey, *, digest: str, resource_version: str, fingerprint: str = ""
    ) -> bool:
        record = self._entries.get(key)
        if record is None or not resource_version or record[0] != digest:
            return False
        self._entries.move_to_end(key)
        return record[1] == resource_version or (bool(fingerprint) and record[2] == fingerprint)

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
