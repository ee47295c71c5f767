"""The agent's ownership history (docs/ownership.md §6): recorded from its watches, served
read-only on a port of its own.

Every watch that keeps whole objects gets :meth:`HistoryRecorder.handler`: each new version of
an object one of the agent's field managers holds (before or after) is compared with the
version before it (``ssa/history.py``), and what changed hands goes into the bounded log
(``ssa/historylog.py``). A first sight (the initial list, a create) is no transition: the
object's owners then are in its managedFields, which the reader has. A delete forgets nothing:
a label-selected watch also reports an object that merely stopped matching as deleted; the
budget ages a deleted object's history out, and a new UID under its name starts afresh.

``controller/historyapi.py`` serves it as an aggregated API, to callers who may get the object.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import fieldmanagers
from syncagent.rest.resource import Resource
from syncagent.runtime.cache import Change, ChangeType
from syncagent.ssa.history import transition
from syncagent.ssa.historylog import HistoryLog, ObjectKey

log = logging.getLogger(__name__)


def _uid(obj: Mapping[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("uid") or "")


def _ours(obj: Mapping[str, Any]) -> bool:
    entries = (obj.get("metadata") or {}).get("managedFields") or ()
    return any(fieldmanagers.is_ours(str(e.get("manager", ""))) for e in entries)


class HistoryRecorder:
    """Feeds the log from cache changes (``controller/historyapi.py`` serves it)."""

    def __init__(self, log: HistoryLog, *, clock: Callable[[], float] = time.time) -> None:
        self.log = log
        self._clock = clock
        # (group, kind) -> the resource recorded: who may read an object is asked by resource.
        self.resources: dict[tuple[str, str], Resource] = {}

    def handler(self, kind: Resource) -> Callable[[Change[Any]], None]:
        """The cache handler of one kind's watch (a watch without a transform)."""
        self.resources[(kind.group, kind.kind)] = kind

        def handle(change: Change[Any]) -> None:
            key: ObjectKey = (kind.group, kind.kind, change.namespace, change.name)
            old, new = change.old, change.new
            if change.type is ChangeType.DELETED or old is None or new is None:
                return
            if _uid(old) != _uid(new):
                self.log.forget(key)  # a new incarnation under the same name
                return
            if not (_ours(new) or _ours(old)):
                return
            found = transition(old, new, time=self._clock(), tracked=fieldmanagers.is_ours)
            if found is not None:
                self.log.record(key, _uid(new), found)

        return handle
