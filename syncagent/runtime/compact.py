"""How a watch cache holds its objects: deflated JSON, decoded on access (issue 16).

A decoded object takes about ten times its JSON size in Python dicts and strings (measured:
12 KB per cached object, ``bench/memory.py --trace``), and a watch cache holds every object of
its kind for the agent's lifetime. Objects of one kind repeat each other (the same keys, the
same managers, the same labels and templates), so each is kept as its ``orjson`` bytes deflated
against a dictionary: the first object the cache stored. Measured on the bench's objects: a
Deployment of 7.6 KB of JSON keeps 0.3 KB, a DCD of 2.7 KB 0.2 KB. A read inflates and decodes
(tens of microseconds) and returns a fresh dict, so no caller can change what the cache holds.

Nothing is left out: ``managedFields`` stay whole, because convergence (``ssa/compare.py``),
the certain-write rule (``ssa/certain.py``), adoption (``ssa/ownership.py``) and takeover
(``ssa/takeover.py``) all read them from the cached view.

:class:`Objects` also indexes objects by namespace and by the UIDs their ``ownerReferences``
name, so listing one owner's children decodes those children only, not a whole namespace.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

import orjson

S = TypeVar("S")
Obj = dict[str, Any]
Ident = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


def encode(obj: Mapping[str, Any]) -> bytes:
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        # orjson refuses more than 255 levels of nesting; the API server stores deeper objects
        # (a graph with a deep unknown field), and orjson reads them back (up to 1,024 levels).
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def decode(data: bytes) -> Obj:
    out: Obj = orjson.loads(data)
    return out


def owner_uids(obj: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The UIDs ``obj``'s ownerReferences name (controller or not), in order, without repeats."""
    refs = ((obj or {}).get("metadata") or {}).get("ownerReferences") or ()
    return tuple(dict.fromkeys(str(r["uid"]) for r in refs if isinstance(r, dict) and r.get("uid")))


class Objects(Generic[S]):
    """Stored objects by namespace and name, with an index of owner UID -> names.

    ``S`` is whatever the cache stores (bytes, or a transform's result); the index is kept from
    the raw objects, so it works for any stored shape.
    """

    def __init__(self) -> None:
        self._by_ns: dict[str, dict[str, S]] = {}
        self._owned: dict[tuple[str, str], set[str]] = {}  # (namespace, owner uid) -> names
        self._owners: dict[Ident, tuple[str, ...]] = {}  # the reverse, to unindex
        self._count = 0

    def get(self, ident: Ident) -> S | None:
        return self._by_ns.get(ident[0], {}).get(ident[1])

    def put(self, ident: Ident, stored: S, raw: Mapping[str, Any]) -> S | None:
        """Store ``stored`` (made from ``raw``); returns what it replaced."""
        names = self._by_ns.setdefault(ident[0], {})
        old = names.get(ident[1])
        names[ident[1]] = stored
        self._count += old is None
        self._index(ident, owner_uids(raw))
        return old

    def pop(self, ident: Ident) -> S | None:
        names = self._by_ns.get(ident[0])
        if names is None or ident[1] not in names:
            return None
        old = names.pop(ident[1])
        if not names:
            del self._by_ns[ident[0]]
        self._count -= 1
        self._index(ident, ())
        return old

    def _index(self, ident: Ident, uids: tuple[str, ...]) -> None:
        before = self._owners.get(ident, ())
        if before == uids:
            return
        for uid in before:
            names = self._owned.get((ident[0], uid))
            if names is not None:
                names.discard(ident[1])
                if not names:
                    del self._owned[(ident[0], uid)]
        for uid in uids:
            self._owned.setdefault((ident[0], uid), set()).add(ident[1])
        if uids:
            self._owners[ident] = uids
        else:
            self._owners.pop(ident, None)

    def select(self, namespace: str | None = None, *, owner: str | None = None) -> list[S]:
        """Stored objects of one namespace (or all), optionally only those ``owner`` (a UID)
        is named by in their ownerReferences; in name order within a namespace."""
        if owner is not None:
            spaces = [namespace] if namespace is not None else list(self._by_ns)
            return [
                self._by_ns[ns][name]
                for ns in spaces
                for name in sorted(self._owned.get((ns, owner), ()))
            ]
        if namespace is not None:
            return list(self._by_ns.get(namespace, {}).values())
        return [stored for names in self._by_ns.values() for stored in names.values()]

    def idents(self) -> list[Ident]:
        return [(ns, name) for ns, names in self._by_ns.items() for name in names]

    def items(self) -> Iterator[tuple[Ident, S]]:
        for ns, names in list(self._by_ns.items()):
            for name, stored in list(names.items()):
                yield (ns, name), stored

    def __len__(self) -> int:
        return self._count


class Codec(Generic[S]):
    """How raw objects are stored and read back: ``store(raw)``, ``load(stored)``."""

    def __init__(self, store: Callable[[Obj], S], load: Callable[[S], Any]) -> None:
        self.store = store
        self.load = load


def _same(value: Any) -> Any:
    return value


def transformed(transform: Callable[[Obj], Any]) -> Codec[Any]:
    """Store ``transform(raw)`` as it is (a cache that keeps a few fields or a digest)."""
    return Codec(transform, _same)


_WBITS = -15  # raw deflate: no header or checksum per object (orjson output is checked on load)
_LEVEL = 6
_MAX_DICTIONARY = 32 * 1024  # deflate's window: a longer dictionary is not used


class Compact(Codec[bytes]):
    """Deflated JSON against this cache's dictionary (one codec per cache: one kind)."""

    def __init__(self) -> None:
        super().__init__(self._store, self._load)
        self._dictionary: bytes | None = None

    def _store(self, raw: Obj) -> bytes:
        data = encode(raw)
        if self._dictionary is None:
            self._dictionary = data[-_MAX_DICTIONARY:]
        deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, zdict=self._dictionary)
        return deflate.compress(data) + deflate.flush()

    def _load(self, stored: bytes) -> Obj:
        inflate = zlib.decompressobj(_WBITS, zdict=self._dictionary or b"")
        return decode(inflate.decompress(stored) + inflate.flush())
