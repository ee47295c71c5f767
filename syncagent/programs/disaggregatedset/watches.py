"""Which graph a change of a DisaggregatedSet's LeaderWorkerSet re-queues
(docs/disaggregatedset.md §6)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from syncagent.kube import kinds
from syncagent.kube.objects import Body
from syncagent.programs.view import Store
from syncagent.runtime.cache import controller_owner_key


def ds_child_key(store: Store) -> Callable[[dict[str, Any]], list[str]]:
    """LWS -> the DGD controlling its controller DS (labels never establish ownership)."""
    graph_of = controller_owner_key(kinds.DGD.kind, api_group=kinds.DGD.group)
    ds_kind = kinds.DISAGGREGATED_SET

    def keys(obj: dict[str, Any]) -> list[str]:
        child = Body(obj)
        ref = child.controller_of_kind(ds_kind.kind)
        if ref is None or ref.api_version != ds_kind.api_version:
            return []
        ds = store.get(ds_kind.kind, child.meta.namespace, ref.name)
        if ds is None or Body(ds).meta.uid != ref.uid:
            return []
        return list(graph_of(ds))

    return keys
