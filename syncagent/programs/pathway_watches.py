"""Watches of the DS and Grove pathways and the graphs their changes re-queue
(spec/disaggregatedset.md §6.3, grove.md §2). Each exists only while its API is served.

- DisaggregatedSet, PodCliqueSet -> the controlling DGD.
- LeaderWorkerSet (all, labels ignored) -> its controller DS (name + UID verified) -> that DS's
  controlling DGD.
- PodClique / PodCliqueScalingGroup -> every DGD in the namespace (their owner is the PCS).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from syncagent.programs.view import Store
from syncagent.runtime.cache import Cache, controller_owner_key, enqueue, object_key, split_key

DS_GROUP = "disaggregatedset.x-k8s.io"
Watch = Callable[..., list[Cache[Any]]]


def ds_child_key(store: Store) -> Callable[[dict[str, Any]], list[str]]:
    """LWS -> the DGD controlling its controller DS (labels never establish ownership)."""
    graph_of = controller_owner_key("DynamoGraphDeployment", api_group="nvidia.com")

    def keys(obj: dict[str, Any]) -> list[str]:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        for ref in meta.get("ownerReferences") or ():
            if not ref.get("controller") or ref.get("kind") != "DisaggregatedSet":
                continue
            if ref.get("apiVersion") != f"{DS_GROUP}/v1":
                continue
            ds = store.get("DisaggregatedSet", namespace, str(ref.get("name")))
            if ds is None or (ds.get("metadata") or {}).get("uid") != ref.get("uid"):
                return []
            return list(graph_of(ds))
        return []

    return keys


def add_pathway_watches(
    watch: Watch, store: Store, add: Callable[[str], None], graphs: Iterable[Cache[Any]]
) -> None:
    """Add the watches with ``watch(kind, group, version, resource, **kw)`` and connect them."""
    graph_owner = controller_owner_key("DynamoGraphDeployment", api_group="nvidia.com")
    graph_caches = list(graphs)
    for cache in watch("DisaggregatedSet", DS_GROUP, "v1", "disaggregatedsets"):
        cache.add_handler(enqueue(add, graph_owner))
    for cache in watch("LeaderWorkerSet", "leaderworkerset.x-k8s.io", "v1", "leaderworkersets"):
        cache.add_handler(enqueue(add, ds_child_key(store)))
    for cache in watch("PodCliqueSet", "grove.io", "v1alpha1", "podcliquesets"):
        cache.add_handler(enqueue(add, graph_owner))
    children = watch("PodClique", "grove.io", "v1alpha1", "podcliques")
    children += watch("PodCliqueScalingGroup", "grove.io", "v1alpha1", "podcliquescalinggroups")
    for cache in children:
        cache.add_handler(_namespace_graphs(add, graph_caches))


def _namespace_graphs(add: Callable[[str], None], graphs: list[Cache[Any]]) -> Any:
    def handle(change: Any) -> None:
        for cache in graphs:
            for key in cache.keys():  # noqa: SIM118 - a Cache iterates over objects
                if split_key(key)[0] == change.namespace:
                    add(key)

    return handle


__all__ = ["add_pathway_watches", "ds_child_key", "object_key"]
