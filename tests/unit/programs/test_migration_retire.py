"""The one gate of every migration (``programs.migration.retire``, docs/routing.md §3): a
serving workload is deleted only once its replacement is ready, only when this graph controls
it, and only with its UID as the delete's precondition."""

from __future__ import annotations

from typing import Any

from syncagent.programs.migration import retirable

GRAPH = "graph-uid"


def obj(name: str, *, controller: str | None = GRAPH, uid: str = "", deleting: bool = False):
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}"}
    if controller is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeployment",
                "name": "g",
                "uid": controller,
                "controller": True,
            }
        ]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "metadata": meta}


def names(objects: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objects]


def test_nothing_is_retired_before_the_replacement_is_ready():
    stale = [obj("a"), obj("b")]
    assert retirable(stale, when=False, controller=GRAPH) == []


def test_once_ready_every_object_the_graph_controls_is_retired():
    stale = [obj("a"), obj("b")]
    assert names(retirable(stale, when=True, controller=GRAPH)) == ["a", "b"]


def test_an_object_another_owner_controls_or_none_controls_is_never_retired():
    stale = [obj("theirs", controller="other-uid"), obj("nobodys", controller=None), obj("ours")]
    assert names(retirable(stale, when=True, controller=GRAPH)) == ["ours"]


def test_an_object_without_a_uid_is_never_deleted_without_its_precondition():
    no_uid = obj("a")
    no_uid["metadata"]["uid"] = ""
    assert retirable([no_uid], when=True, controller=GRAPH) == []


def test_an_object_being_deleted_is_left_to_finish():
    stale = [obj("going", deleting=True), obj("ours")]
    assert names(retirable(stale, when=True, controller=GRAPH)) == ["ours"]
