"""Records that a desired object was converged at a resourceVersion (design §4.2 steps 1, 5)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from syncagent.kube.objects import ObjectRef


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


class ConvergenceCache:
    """(object, manager, subresource) -> (desired digest, resourceVersion), least recently used
    evicted first. A hit proves an apply would change nothing, so it needs no request."""

    def __init__(self, *, max_entries: int = 200_000) -> None:
        self._entries: OrderedDict[CacheKey, tuple[str, str]] = OrderedDict()
        self._max = max_entries

    def converged(self, key: CacheKey, *, digest: str, resource_version: str) -> bool:
        record = self._entries.get(key)
        if record is None or not resource_version:
            return False
        self._entries.move_to_end(key)
        return record == (digest, resource_version)

    def recorded(self, key: CacheKey) -> tuple[str, str] | None:
        """The (digest, resourceVersion) last recorded for ``key``, if any."""
        return self._entries.get(key)

    def record(self, key: CacheKey, *, digest: str, resource_version: str) -> None:
        if not resource_version:
            return
        self._entries[key] = (digest, resource_version)
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
