"""An in-memory store of one watched kind, by namespace/name, with change notifications.

A watch (``watch.py``) feeds it; reconcilers read it. Handlers turn changes into work-queue keys
with a key function (:func:`self_key`, :func:`controller_owner_key`, :func:`label_key`), from
both the old and the new object, so a change of owner re-queues both owners.

Objects are stored as deflated JSON decoded on every read (``compact.py``), or as
``transform(raw)`` when a cache needs only a smaller shape (a digest, a few fields). Key
functions see what readers see.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio

from syncagent.runtime import compact

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


# What a change must move to wake the object's own controller: everything but status (and the
# resourceVersion and managedFields any write moves).
_WAKES = (
    "generation",
    "annotations",
    "labels",
    "finalizers",
    "deletionTimestamp",
    "ownerReferences",
)


def beyond_status(handler: Handler[Obj]) -> Handler[Obj]:
    """``handler`` for creates, deletes and changes beyond ``status``: a controller's own status
    write does not wake it again (docs/disaggregatedset.md §6: a DGD is re-queued on create,
    delete, a ``generation`` change or an annotation change; labels, finalizers, deletion and
    owner references count too). ``generation`` moves with every ``spec`` change."""

    def handle(change: Change[Obj]) -> None:
        old, new = change.old, change.new
        if old is None or new is None or any(meta(old).get(k) != meta(new).get(k) for k in _WAKES):
            handler(change)

    return handle


def identity(raw: Obj) -> Any:
    return raw


class Cache(Generic[T]):
    """Objects of one watched kind by (namespace, name).

    By default objects are held as deflated JSON (``compact.py``) and every read returns a fresh
    decoded dict; with a ``transform`` the cache holds ``transform(raw)`` as it is. Handlers see
    the same shape as readers.
    """

    def __init__(self, resource: str, *, transform: Callable[[Obj], T] = identity) -> None:
        self.resource = resource
        self.transform = transform
        self._codec: compact.Codec[Any] = (
            compact.Compact() if transform is identity else compact.transformed(transform)
        )
        self._objects: compact.Objects[Any] = compact.Objects()
        self._handlers: list[Handler[T]] = []
        self._synced = False
        self._synced_event: anyio.Event | None = None
        self._sync_listeners: list[Callable[[], None]] = []
        self.resource_version = ""

    # -- reading ---------------------------------------------------------------------------
    def get(self, namespace: str | None, name: str) -> T | None:
        stored = self._objects.get((namespace or "", name))
        return None if stored is None else self._load(stored)

    def list(self, namespace: str | None = None, *, owner: str | None = None) -> list[T]:
        """Objects of ``namespace`` (None: all); with ``owner`` (a UID) only those whose
        ownerReferences name it, found through an index rather than by reading them all."""
        return [self._load(s) for s in self._objects.select(namespace, owner=owner)]

    def keys(self) -> list[str]:
        return [object_key(ns, name) for ns, name in self._objects.idents()]

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self) -> Iterator[T]:
        return iter(self.list())

    def _load(self, stored: Any) -> T:
        out: T = self._codec.load(stored)
        return out

    @property
    def synced(self) -> bool:
        """True once the first list has been stored."""
        return self._synced

    async def wait_synced(self) -> None:
        while not self._synced:
            if self._synced_event is None:
                self._synced_event = anyio.Event()
            await self._synced_event.wait()

    def add_sync_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` each time a full list has been stored (the cache is synced)."""
        self._sync_listeners.append(listener)

    def add_handler(self, handler: Handler[T]) -> None:
        self._handlers.append(handler)

    # -- writing (the watch) ------------------------------------------------------------------
    def upsert(self, raw: Obj) -> None:
        m = meta(raw)
        ident = (m.get("namespace") or "", m["name"])
        stored = self._codec.store(raw)
        old = self._objects.put(ident, stored, raw)
        new = raw if isinstance(self._codec, compact.Compact) else stored
        kind = ChangeType.ADDED if old is None else ChangeType.MODIFIED
        self._notify(Change(kind, ident[0], ident[1], self._old(old), new))

    def delete(self, raw: Obj) -> None:
        m = meta(raw)
        ident = (m.get("namespace") or "", m["name"])
        old = self._objects.pop(ident)
        # A DELETED event for an object we never saw still carries its last state.
        self._notify(Change(ChangeType.DELETED, ident[0], ident[1], self._old(old), None))

    def _old(self, stored: Any) -> T | None:
        return None if stored is None else self._load(stored)

    def relist(self) -> Relist[T]:
        """Store a full list page by page (``Relist.add``), then ``Relist.finish``."""
        return Relist(self)

    def replace(self, items: Iterable[Obj], resource_version: str) -> None:
        """Store a full list: add or update every item, delete what the list no longer has."""
        relist = self.relist()
        for raw in items:
            relist.add(raw)
        relist.finish(resource_version)

    def _drop_unseen(self, seen: set[tuple[str, str]]) -> None:
        for ident in [i for i in self._objects.idents() if i not in seen]:
            old = self._objects.pop(ident)
            self._notify(Change(ChangeType.DELETED, ident[0], ident[1], self._old(old), None))

    def clear(self) -> None:
        """Forget everything (the API stopped being served): each object is reported deleted."""
        self._drop_unseen(set())
        self._synced = False
        self.resource_version = ""

    def _mark_synced(self) -> None:
        self._synced = True
        if self._synced_event is not None:
            self._synced_event.set()
            self._synced_event = None
        for listener in list(self._sync_listeners):
            listener()

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


class Relist(Generic[T]):
    """One full list being stored: each item as it arrives, so a list of thousands of objects
    is never held decoded at once; ``finish`` deletes what the list did not have."""

    def __init__(self, cache: Cache[T]) -> None:
        self._cache = cache
        self._seen: set[tuple[str, str]] = set()

    def add(self, raw: Obj) -> None:
        m = meta(raw)
        self._seen.add((m.get("namespace") or "", m["name"]))
        self._cache.upsert(raw)

    def restart(self) -> None:
        """The list starts over (its continue token expired): forget what it saw."""
        self._seen.clear()

    def finish(self, resource_version: str) -> None:
        self._cache._drop_unseen(self._seen)
        self._cache.resource_version = resource_version
        self._cache._mark_synced()
