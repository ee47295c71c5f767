"""Key functions the pathway watches share: which graphs a change of a program's object
re-queues. Each program's ``connect`` uses them (a pathway's own live in its package); each watch
exists only while its API is served.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from syncagent.kube import kinds
from syncagent.programs.view import Store
from syncagent.runtime.cache import object_key


def namespace_graphs(store: Store, add: Callable[[str], None]) -> Callable[[Any], None]:
    """A handler re-queueing every graph in the namespace of the changed object."""

    def handle(change: Any) -> None:
        for graph in store.list(kinds.DGD.kind, change.namespace):
            add(object_key(change.namespace, str(graph["metadata"]["name"])))

    return handle


__all__ = ["namespace_graphs", "object_key"]
