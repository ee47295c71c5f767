"""The bounded ownership history: transitions per object, oldest dropped first (pure).

Each transition is kept as its JSON, deflated (``bytes``: a flip of one field takes about 150
bytes; a takeover, every path of an object twice, about 550 where its JSON has 10 KB), never
as Python objects, which would take several times that. One budget covers every object: when a
new transition would exceed it, the oldest transitions of the whole log go first, whichever
object they belong to. So every object's history is complete since one instant,
:attr:`HistoryLog.complete_since`: the start, or the time of the newest transition dropped. The cost of a transition
counts its bytes plus the bookkeeping around them (:data:`ENTRY_OVERHEAD`, and
:data:`OBJECT_OVERHEAD` per object), so the budget bounds what the log really holds
(``bench/history.py`` measures it with tracemalloc).

An object's history belongs to one incarnation (its UID): a new UID under the same name starts
it afresh. A version recorded twice (two watches of one kind, with overlapping label selectors,
both see it) is kept once.
"""

from __future__ import annotations

import zlib
from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson

from syncagent.ssa.history import Transition

ObjectKey = tuple[str, str, str, str]  # API group, kind, namespace, name

DEFAULT_BUDGET = 16 * 1024 * 1024
ENTRY_OVERHEAD = 64  # the bytes object's header and its slots in the record and the queue
OBJECT_OVERHEAD = 800  # the record, its list, its key tuple and strings, the dict slot


class _Record:
    __slots__ = ("entries", "key", "last_version", "uid")

    def __init__(self, key: ObjectKey, uid: str) -> None:
        self.key = key
        self.uid = uid
        self.entries: list[bytes] = []
        self.last_version = ""


@dataclass(frozen=True, slots=True)
class History:
    """One object's kept transitions (their JSON documents, oldest first)."""

    uid: str
    transitions: tuple[dict[str, Any], ...]


class HistoryLog:
    def __init__(self, *, start: float, budget: int = DEFAULT_BUDGET) -> None:
        if budget < OBJECT_OVERHEAD + ENTRY_OVERHEAD:
            raise ValueError(f"history budget {budget} bytes: too small for one transition")
        self.budget = budget
        self.start = start  # when the log began: nothing before it is known
        self.complete_since = start
        self.used = 0
        self.dropped = 0  # transitions dropped for the budget, since the start
        self._records: dict[ObjectKey, _Record] = {}
        self._order: deque[_Record] = deque()  # one per kept transition, oldest first

    def record(self, key: ObjectKey, uid: str, transition: Transition) -> None:
        rec = self._records.get(key)
        if rec is None or rec.uid != uid:
            self.forget(key)
            rec = self._records[key] = _Record(key, uid)
            self.used += OBJECT_OVERHEAD
        elif transition.resource_version and rec.last_version == transition.resource_version:
            return
        data = zlib.compress(orjson.dumps(transition.to_doc()))
        rec.last_version = transition.resource_version
        rec.entries.append(data)
        self._order.append(rec)
        self.used += len(data) + ENTRY_OVERHEAD
        while self.used > self.budget and self._order:
            self._drop_oldest()

    def forget(self, key: ObjectKey) -> None:
        """Drop an object's history (its queued slots become no-ops)."""
        rec = self._records.pop(key, None)
        if rec is not None:
            self.used -= OBJECT_OVERHEAD + sum(len(e) + ENTRY_OVERHEAD for e in rec.entries)
            rec.entries.clear()

    def _drop_oldest(self) -> None:
        rec = self._order.popleft()
        if not rec.entries:  # forgotten: already paid back
            return
        data = rec.entries.pop(0)
        self.used -= len(data) + ENTRY_OVERHEAD
        self.dropped += 1
        self.complete_since = max(self.complete_since, float(_load(data)["time"]))
        if not rec.entries and self._records.get(rec.key) is rec:
            # Nothing left to show; the object's history is empty since complete_since.
            del self._records[rec.key]
            self.used -= OBJECT_OVERHEAD

    def get(self, key: ObjectKey) -> History | None:
        rec = self._records.get(key)
        if rec is None:
            return None
        return History(rec.uid, tuple(_load(e) for e in rec.entries))

    def kept(self) -> list[ObjectKey]:
        """The objects that have a history kept."""
        return list(self._records)

    def __len__(self) -> int:
        return sum(len(r.entries) for r in self._records.values())

    def objects(self) -> int:
        return len(self._records)


def _load(data: bytes) -> dict[str, Any]:
    doc: dict[str, Any] = orjson.loads(zlib.decompress(data))
    return doc
