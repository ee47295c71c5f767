"""Coexistence on the DisaggregatedSet and Grove pathways, with the real kubectl
(docs/ownership.md): labels, annotations and owner references users add to the DS, the
PodCliqueSet, the graph's Services and the co-owned model Service survive reconciles that
rewrite them. The fake DS controller and :func:`simulate_grove` play the missing controllers."""

from __future__ import annotations

from collections.abc import Callable

from tests.cluster.support.coexistence import (
    Target,
    add_foreign_metadata,
    check_foreign_metadata,
    keeper,
    labels_of,
)
from tests.cluster.support.grove import GROVE_AUTO, PCS, simulate_grove
from tests.support.agent import running_agent
from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE, simulate_dcd_ready
from tests.support.graphs import ENABLE_DS, ENABLE_GROVE, component, ds_components, ds_graph
from tests.support.kube import DS, Kube, ready_reason
from tests.support.kubectl import Kubectl
from tests.support.polling import eventually

MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
MODEL_SERVICE = "dynamo-model-fb68f5a6"


def _ready(kube: Kube, ns: str, name: str, step: Callable[[], None]) -> None:
    eventually(
        lambda: ready_reason(kube, ns, name) == "all_resources_are_ready",
        deadline=DEADLINE,
        step=step,
        what=f"{name} Ready",
    )


def _survive_a_rewrite(
    kube: Kube, kubectl: Kubectl, name: str, targets: list[Target], step: Callable[[], None]
) -> None:
    """kubectl adds metadata to ``targets`` and the model Service; a graph label change makes
    the agent rewrite the targets; everything kubectl added is still there."""
    ns = kubectl.namespace
    owner = keeper(kube, ns)
    marked = [*targets, Target("Service", MODEL_SERVICE)]
    add_foreign_metadata(kubectl, marked, owner)
    kube.edit_graph(ns, name, lambda g: g["spec"].update(labels={"release": "r2"}))
    eventually(
        lambda: all(labels_of(kube, ns, t).get("release") == "r2" for t in targets),
        deadline=DEADLINE,
        step=step,
        what=f"the agent to rewrite {', '.join(map(str, targets))}",
    )
    check_foreign_metadata(kube, ns, marked, owner["metadata"]["uid"])


def test_ds_pathway_keeps_foreign_metadata(control_plane, kube, namespace, kubectl):
    kube.create(ds_graph(namespace, "dc", ds_components(**MODEL), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)

    def step() -> None:
        simulate_dcd_ready(kube, namespace)
        fake.sync()

    targets = [Target(DS, "dc"), Target("Service", "dc-decode"), Target("Service", "dc-prefill")]
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        _ready(kube, namespace, "dc", step)
        _survive_a_rewrite(kube, kubectl, "dc", targets, step)


def test_grove_pathway_keeps_foreign_metadata(control_plane, kube, namespace, kubectl):
    components = [
        component("frontend", "frontend"),
        component("decode", "decode", nodes=2, **MODEL),
    ]
    kube.create(ds_graph(namespace, "gc", components, **{ENABLE_GROVE: "true"}))

    def step() -> None:
        simulate_grove(kube, namespace)
        simulate_dcd_ready(kube, namespace)

    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        _ready(kube, namespace, "gc", step)
        pcs = kube.list(PCS, namespace)[0]["metadata"]["name"]
        targets = [
            Target(PCS, pcs),
            Target("Service", "gc-frontend"),
            Target("Service", "gc-decode"),
        ]
        _survive_a_rewrite(kube, kubectl, "gc", targets, step)
