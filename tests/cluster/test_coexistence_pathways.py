"""Coexistence on the DisaggregatedSet and Grove pathways, with the real kubectl
(docs/ownership.md): labels, annotations and owner references users add to the DS, the
PodCliqueSet, the graph's Services and the co-owned model Service survive reconciles that
rewrite them. The fake DS controller and :func:`simulate_grove` play the missing controllers."""

from __future__ import annotations

from fake_ds_controller import FakeDsController
from test_agent_support import Kube, component, running_agent
from test_coexistence_support import (
    Target,
    add_foreign_metadata,
    check_foreign_metadata,
    keeper,
    labels_of,
)
from test_ds_harness import (
    DS,
    ENABLE_DS,
    ENABLE_GROVE,
    ds_components,
    ds_graph,
    ready_reason,
    simulate_dcd_ready,
    until,
)
from test_grove_agent import GROVE_AUTO, PCS, simulate_grove

MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
MODEL_SERVICE = "dynamo-model-fb68f5a6"


def _relabel(kube: Kube, ns: str, name: str) -> None:
    kube.edit_graph(ns, name, lambda g: g["spec"].update(labels={"release": "r2"}))


def test_ds_pathway_keeps_foreign_metadata(control_plane, client, namespace, kubectl):
    kube = Kube(client)
    owner = keeper(kube, namespace)
    kube.create(ds_graph(namespace, "dc", ds_components(**MODEL), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)

    def step() -> None:
        simulate_dcd_ready(kube, namespace)
        fake.sync()

    targets = [
        Target(DS, "dc"),
        Target("Service", "dc-decode"),
        Target("Service", "dc-prefill"),
    ]
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        until(
            lambda: ready_reason(kube, namespace, "dc") == "all_resources_are_ready",
            step=step,
            what="dc Ready",
        )
        add_foreign_metadata(kubectl, [*targets, Target("Service", MODEL_SERVICE)], owner)
        _relabel(kube, namespace, "dc")
        until(
            lambda: all(labels_of(kube, namespace, t).get("release") == "r2" for t in targets),
            step=step,
            what="the agent to rewrite the DS and its Services",
        )
        check_foreign_metadata(
            kube, namespace, [*targets, Target("Service", MODEL_SERVICE)], owner["metadata"]["uid"]
        )


def test_grove_pathway_keeps_foreign_metadata(control_plane, client, namespace, kubectl):
    kube = Kube(client)
    owner = keeper(kube, namespace)
    components = [
        component("frontend", "frontend"),
        component("decode", "decode", multinode=True, **MODEL),
    ]
    kube.create(ds_graph(namespace, "gc", components, **{ENABLE_GROVE: "true"}))

    def step() -> None:
        simulate_grove(kube, namespace)
        simulate_dcd_ready(kube, namespace)

    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        until(
            lambda: ready_reason(kube, namespace, "gc") == "all_resources_are_ready",
            step=step,
            what="gc Ready",
        )
        pcs = kube.list(PCS, namespace)[0]["metadata"]["name"]
        targets = [
            Target(PCS, pcs),
            Target("Service", "gc-frontend"),
            Target("Service", "gc-decode"),
        ]
        add_foreign_metadata(kubectl, [*targets, Target("Service", MODEL_SERVICE)], owner)
        _relabel(kube, namespace, "gc")
        until(
            lambda: all(labels_of(kube, namespace, t).get("release") == "r2" for t in targets),
            step=step,
            what="the agent to rewrite the PodCliqueSet and its Services",
        )
        check_foreign_metadata(
            kube, namespace, [*targets, Target("Service", MODEL_SERVICE)], owner["metadata"]["uid"]
        )
