"""Scaling adapters on the real API server (docs/api.md §4): a component with
``scalingAdapter`` gets its DGDSA as upstream makes it, seeded once, and loses it when it stops
asking for one."""

from __future__ import annotations

from typing import Any

from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.kube import Kube, controller, names
from tests.support.polling import eventually

DEADLINE = 60.0
DGDSA = "DynamoGraphDeploymentScalingAdapter"


def _adapted_graph(ns: str) -> dict[str, Any]:
    return graph(
        ns,
        "scaled",
        [
            component("Frontend", "frontend", replicas=1),
            component("decode", "decode", replicas=2, scalingAdapter={}),
        ],
    )


def test_a_component_with_scaling_adapter_gets_its_adapter_as_upstream_makes_it(
    control_plane, kube: Kube, namespace: str
) -> None:
    created = kube.create(_adapted_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: names(kube, DGDSA, namespace) == {"scaled-decode"},
            deadline=DEADLINE,
            what="the decode component's adapter, and no other",
        )
        adapter = kube.get(DGDSA, namespace, "scaled-decode")
        assert adapter is not None
        assert adapter["spec"] == {
            "replicas": 2,
            "dgdRef": {"name": "scaled", "componentName": "decode"},
        }
        assert adapter["metadata"]["labels"] == {
            "nvidia.com/dynamo-graph-deployment-name": "scaled",
            "nvidia.com/dynamo-component": "decode",
        }
        assert controller(adapter)["uid"] == created["metadata"]["uid"]
        # Created by the seed's plain POST; the content applies after it change nothing, so
        # write nothing (and add no entry).
        managers = {e["manager"] for e in adapter["metadata"]["managedFields"]}
        assert "syncagent/scaling-adapter-seed" in managers
        assert all(m.startswith("syncagent/scaling-adapter") for m in managers), managers


def test_the_adapter_keeps_its_replicas_and_goes_when_the_component_stops_asking(
    control_plane, kube: Kube, namespace: str
) -> None:
    kube.create(_adapted_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: kube.get(DGDSA, namespace, "scaled-decode") is not None,
            deadline=DEADLINE,
            what="the adapter",
        )
        kube.merge(DGDSA, namespace, "scaled-decode", {"spec": {"replicas": 4}}, sub="scale")

        # A spec change the agent must render: once it reached the Deployment, a reconcile ran
        # after the scale.
        def more_frontends(g: dict[str, Any]) -> None:
            g["spec"]["components"][0]["replicas"] = 2

        kube.edit_graph(namespace, "scaled", more_frontends)
        eventually(
            lambda: _replicas(kube, namespace, "scaled-frontend") == 2,
            deadline=DEADLINE,
            what="the frontend Deployment at 2 replicas",
        )
        assert kube.get(DGDSA, namespace, "scaled-decode")["spec"]["replicas"] == 4

        def stop(g: dict[str, Any]) -> None:
            for c in g["spec"]["components"]:
                c.pop("scalingAdapter", None)

        kube.edit_graph(namespace, "scaled", stop)
        eventually(
            lambda: names(kube, DGDSA, namespace) == set(),
            deadline=DEADLINE,
            what="the adapter deleted once decode no longer asks for one",
        )


def _replicas(kube: Kube, ns: str, name: str) -> int | None:
    deployment = kube.get("Deployment", ns, name)
    return None if deployment is None else deployment["spec"].get("replicas")


def test_scaling_the_adapter_moves_the_graph_and_the_deployment(
    control_plane, kube: Kube, namespace: str
) -> None:
    kube.create(_adapted_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        selector = (
            "nvidia.com/dynamo-component=decode,nvidia.com/dynamo-graph-deployment-name=scaled"
        )
        eventually(
            lambda: _scale(kube, namespace).get("status", {}).get("selector") == selector,
            deadline=DEADLINE,
            what="the adapter's /scale to show the decode pods' selector",
        )
        for replicas in (4, 0):
            kube.merge(
                DGDSA, namespace, "scaled-decode", {"spec": {"replicas": replicas}}, sub="scale"
            )
            eventually(
                lambda r=replicas: _component_replicas(kube, namespace, "decode") == r,
                deadline=DEADLINE,
                what=f"the graph's decode component at {replicas} replicas",
            )
            eventually(
                lambda r=replicas: _replicas(kube, namespace, "scaled-decode") == r,
                deadline=DEADLINE,
                what=f"the decode Deployment at {replicas} replicas",
            )
            eventually(
                lambda r=replicas: (
                    _scale(kube, namespace).get("status", {}).get("replicas", 0) == r
                ),
                deadline=DEADLINE,
                what=f"the adapter's status at {replicas} replicas",
            )
        adapter = kube.get(DGDSA, namespace, "scaled-decode")
        assert adapter["status"].get("lastScaleTime")
        g = kube.get("DynamoGraphDeployment", namespace, "scaled")
        owners = {
            e["manager"]
            for e in g["metadata"]["managedFields"]
            if "f:spec" in (e.get("fieldsV1") or {})
        }
        assert "syncagent/scaling-adapter-replicas" in owners
        assert _replicas(kube, namespace, "scaled-frontend") == 1
        scaled = [
            e["message"]
            for e in kube.list("Event", namespace)
            if e["reason"] == "Scaled" and e["involvedObject"]["name"] == "scaled"
        ]
        assert "Scaled component decode from 2 to 4 replicas (its scaling adapter)" in scaled


def _scale(kube: Kube, ns: str) -> dict[str, Any]:
    return kube.request("GET", kube.path(DGDSA, ns, "scaled-decode", "scale"))


def _component_replicas(kube: Kube, ns: str, name: str) -> int | None:
    g = kube.get("DynamoGraphDeployment", ns, "scaled") or {"spec": {"components": []}}
    (c,) = [c for c in g["spec"]["components"] if c["name"] == name] or [{}]
    return c.get("replicas")
