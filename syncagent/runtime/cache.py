"""An in-memory store of one watched kind, by namespace/name, with change notifications.

A watch (``watch.py``) feeds it; reconcilers read it. Handlers turn changes into work-queue keys
with a key function (:func:`self_key`, :func:`controller_owner_key`, :func:`label_key`), from
both the old and the new object, so a change of owner re-queues both owners.

Objects are stored as ``transform(raw)``: the raw JSON dict by default, or whatever smaller
shape a reconcile needs (a digest, a few fields). Key functions see the stored shape.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio

log = logging.getLogger(__name__)

T = TypeVar("T")
Obj = dict[str, Any]


class ChangeType(enum.Enum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True)
class Change(Generic[T]):
    type: ChangeType
    namespace: str
    name: str
    old: T | None
    new: T | None


Handler = Callable[[Change[T]], None]
KeyFunc = Callable[[T], Iterable[str]]


def object_key(namespace: str | None, name: str) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects (client-go's key format)."""
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name


def meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def self_key(obj: Obj) -> list[str]:
    m = meta(obj)
    return [object_key(m.get("namespace"), m["name"])]


def controller_owner_key(kind: str, *, api_group: str | None = None) -> KeyFunc[Obj]:
    """Keys of the controlling owner of ``kind`` (and API group, when given)."""

    def keys(obj: Obj) -> list[str]:
        m = meta(obj)
        for ref in m.get("ownerReferences") or ():
            if not ref.get("controller") or ref.get("kind") != kind:
                continue
            group = ref.get("apiVersion", "").rpartition("/")[0]
            if api_group is None or group == api_group:
                return [object_key(m.get("namespace"), ref["name"])]
        return []

    return keys


def owner_keys(kind: str, *, api_group: str | None = None) -> KeyFunc[Obj]:
    """Keys of every owner of ``kind``, controller or not (shared objects)."""

    def keys(obj: Obj) -> list[str]:
        m = meta(obj)
        return [
            object_key(m.get("namespace"), ref["name"])
            for ref in m.get("ownerReferences") or ()
            if ref.get("kind") == kind
            and (api_group is None or ref.get("apiVersion", "").rpartition("/")[0] == api_group)
        ]

    return keys


def label_key(label: str) -> KeyFunc[Obj]:
    """The key ``namespace/<value of label>``; objects without the label map to nothing."""

    def keys(obj: Obj) -> list[str]:
        m = meta(obj)
        value = (m.get("labels") or {}).get(label)
        return [object_key(m.get("namespace"), value)] if value else []

    return keys


def enqueue(add: Callable[[str], None], key_func: KeyFunc[T]) -> Handler[T]:
    """A handler adding the keys of the old and the new object with ``add`` (e.g. queue.add)."""

    def handle(change: Change[T]) -> None:
        keys: set[str] = set()
        for obj in (change.old, change.new):
            if obj is not None:
                keys.update(key_func(obj))
        for key in sorted(keys):
            add(key)

    return handle


def identity(raw: Obj) -> Any:
    return raw


class Cache(Generic[T]):
    """Objects of one watched kind by (namespace, name)."""

    def __init__(self, resource: str, *, transform: Callable[[Obj], T] = identity) -> None:
        self.resource = resource
        self.transform = transform
        self._objects: dict[tuple[str, str], T] = {}
        self._handlers: list[Handler[T]] = []
        self._synced = False
        self._synced_event: anyio.Event | None = None
        self.resource_version = ""

    # -- reading ---------------------------------------------------------------------------
    def get(self, namespace: str | None, name: str) -> T | None:
        return self._objects.get((namespace or "", name))

    def list(self, namespace: str | None = None) -> list[T]:
        if namespace is None:
            return list(self._objects.values())
        return [obj for (ns, _), obj in self._objects.items() if ns == namespace]

    def keys(self) -> list[str]:
        return [object_key(ns, name) for ns, name in self._objects]

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._objects.values()))

    @property
    def synced(self) -> bool:
        """True once the first list has been stored."""
        return self._synced

    async def wait_synced(self) -> None:
        while not self._synced:
            if self._synced_event is None:
                self._synced_event = anyio.Event()
            await self._synced_event.wait()

    def add_handler(self, handler: Handler[T]) -> None:
        self._handlers.append(handler)

    # -- writing (the watch) ------------------------------------------------------------------
    def upsert(self, raw: Obj) -> None:
        m = meta(raw)
        ident = (m.get("namespace") or "", m["name"])
        new = self.transform(raw)
        old = self._objects.get(ident)
        self._objects[ident] = new
        kind = ChangeType.ADDED if old is None else ChangeType.MODIFIED
        self._notify(Change(kind, ident[0], ident[1], old, new))

    def delete(self, raw: Obj) -> None:
        m = meta(raw)
        ident = (m.get("namespace") or "", m["name"])
        old = self._objects.pop(ident, None)
        # A DELETED event for an object we never saw still carries its last state.
        self._notify(Change(ChangeType.DELETED, ident[0], ident[1], old, None))

    def replace(self, items: Iterable[Obj], resource_version: str) -> None:
        """Store a full list: add or update every item, delete what the list no longer has."""
        seen: set[tuple[str, str]] = set()
        for raw in items:
            m = meta(raw)
            seen.add((m.get("namespace") or "", m["name"]))
            self.upsert(raw)
        for ident in [i for i in self._objects if i not in seen]:
            old = self._objects.pop(ident)
            self._notify(Change(ChangeType.DELETED, ident[0], ident[1], old, None))
        self.resource_version = resource_version
        self._mark_synced()

    def clear(self) -> None:
        """Forget everything (the API stopped being served): each object is reported deleted."""
        for ident, old in list(self._objects.items()):
            del self._objects[ident]
            self._notify(Change(ChangeType.DELETED, ident[0], ident[1], old, None))
        self._synced = False
        self.resource_version = ""

    def _mark_synced(self) -> None:
        self._synced = True
        if self._synced_event is not None:
            self._synced_event.set()
            self._synced_event = None

    def _notify(self, change: Change[T]) -> None:
        for handler in list(self._handlers):
            try:
                handler(change)
            except Exception:
                log.exception(
                    "cache handler failed",
                    extra={
                        "resource": self.resource,
                        "object": f"{change.namespace}/{change.name}",
                    },
                )
