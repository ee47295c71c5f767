"""The Grove program through the agent (issue 6 acceptance 6). No Grove operator runs here:
:func:`simulate_grove` plays it (PCS status, PodClique / PodCliqueScalingGroup children)."""

from __future__ import annotations

from tests.cluster.support.grove import GROVE_AUTO, PCS, grove_step
from tests.support.agent import running_agent
from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE
from tests.support.graphs import (
    ENABLE_DS,
    ENABLE_GROVE,
    annotate,
    component,
    ds_components,
    ds_graph,
    grove_components,
)
from tests.support.kube import (
    DCD,
    DGD,
    DS,
    condition,
    controller,
    events_for,
    names,
    ready_reason,
)
from tests.support.polling import eventually


def test_grove_pcs_readiness_scale_writes_and_clique_set_refusal(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, "gm", grove_components()))
    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "gm") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=grove_step(kube, namespace),
            what="the Grove graph to be Ready",
        )
        pcs = kube.get(PCS, namespace, "gm")
        assert controller(pcs)["kind"] == DGD
        assert [c["name"] for c in pcs["spec"]["template"]["cliques"]] == [
            "frontend",
            "decode-ldr",
            "decode-wkr",
        ]
        graph = kube.get(DGD, namespace, "gm")
        assert graph["status"]["routing"] == {"pathway": "Grove"}
        assert graph["status"]["components"]["decode"]["componentKind"] == "PodCliqueScalingGroup"
        assert names(kube, DCD, namespace) == set()
        svc = kube.get("Service", namespace, "gm-decode")
        assert controller(svc)["kind"] == DGD
        assert svc["spec"]["selector"]["role"] == "leader"

        # scale writes: a merge patch on the scaling group's scale subresource, no PCS write
        pcs_rv = kube.get(PCS, namespace, "gm")["metadata"]["resourceVersion"]

        def scale(g: dict) -> None:
            g["spec"]["components"][1]["replicas"] = 3

        kube.edit_graph(namespace, "gm", scale)
        eventually(
            lambda: (
                kube.get("PodCliqueScalingGroup", namespace, "gm-0-decode")["spec"]["replicas"] == 3
            ),
            deadline=DEADLINE,
            what="the scaling group scaled to 3",
        )
        pcs = kube.get(PCS, namespace, "gm")
        assert pcs["spec"]["template"]["podCliqueScalingGroups"][0]["replicas"] == 1
        assert pcs["metadata"]["resourceVersion"] == pcs_rv

        # the clique set cannot change: refused before any write
        def add_planner(g: dict) -> None:
            g["spec"]["components"].append(component("planner", "planner"))

        kube.edit_graph(namespace, "gm", add_planner)
        eventually(
            lambda: ready_reason(kube, namespace, "gm") == "failed_to_reconcile_the_resources",
            deadline=DEADLINE,
            what="the clique-set refusal",
        )
        assert condition(kube.get(DGD, namespace, "gm"), "Ready")["message"] == (
            "PodCliqueSet gm: the set of cliques cannot change (added: planner, removed: none); "
            "delete and recreate the graph to change it"
        )
        assert [
            c["name"] for c in kube.get(PCS, namespace, "gm")["spec"]["template"]["cliques"]
        ] == [
            "frontend",
            "decode-ldr",
            "decode-wkr",
        ]


def test_component_graph_stays_when_grove_appears_until_its_annotation_changes(
    control_plane, kube, namespace
):
    kube.create(ds_graph(namespace, "cg", grove_components()))
    with running_agent(control_plane.kubeconfig, namespace=namespace):  # grove=false
        eventually(
            lambda: ready_reason(kube, namespace, "cg") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=grove_step(kube, namespace, grove=False),
            what="the Component graph to be Ready",
        )
    uids = {d["metadata"]["name"]: d["metadata"]["uid"] for d in kube.list(DCD, namespace)}
    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):

        def held_back() -> bool:
            cond = condition(kube.get(DGD, namespace, "cg"), "WorkloadPathway")
            return cond.get("message", "").endswith(
                'Grove is available: set nvidia.com/enable-grove: "true" to move this graph to it'
            )

        eventually(held_back, deadline=DEADLINE, what="the Component graph kept in place")
        assert kube.list(PCS, namespace) == []
        assert {
            d["metadata"]["name"]: d["metadata"]["uid"] for d in kube.list(DCD, namespace)
        } == uids
        kube.edit_graph(
            namespace,
            "cg",
            annotate({ENABLE_GROVE: "true"}),
        )
        eventually(lambda: kube.get(PCS, namespace, "cg"), deadline=DEADLINE, what="the PCS")
        # the DCDs keep serving until the PCS is ready
        assert set(uids) <= names(kube, DCD, namespace)
        cond = condition(kube.get(DGD, namespace, "cg"), "WorkloadPathway")
        assert cond.get("reason") in ("Grove", "Component")
        eventually(
            lambda: (
                names(kube, DCD, namespace) == set()
                and ready_reason(kube, namespace, "cg") == "all_resources_are_ready"
            ),
            deadline=DEADLINE,
            step=grove_step(kube, namespace),
            what="the DCDs deleted after the PCS is ready",
        )
        graph = kube.get(DGD, namespace, "cg")
        assert graph["status"]["routing"] == {"pathway": "Grove", "groveAnnotation": "true"}


def test_grove_to_ds_removes_the_pcs_only_after_the_ds_is_ready(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, "gd", ds_components()))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "gd") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=grove_step(kube, namespace),
            what="the Grove graph to be Ready",
        )
        fake.ready = False
        kube.edit_graph(
            namespace,
            "gd",
            annotate({ENABLE_GROVE: "false", ENABLE_DS: "true"}),
        )
        eventually(
            lambda: (
                kube.get(DS, namespace, "gd") is not None
                and "gd-frontend" in names(kube, DCD, namespace)
            ),
            deadline=DEADLINE,
            step=grove_step(kube, namespace, fake=fake),
            what="the DS and the frontend DCD",
        )
        assert kube.get(PCS, namespace, "gd") is not None
        fake.ready = True
        eventually(
            lambda: (
                kube.get(PCS, namespace, "gd") is None
                and ready_reason(kube, namespace, "gd") == "all_resources_are_ready"
            ),
            deadline=DEADLINE,
            step=grove_step(kube, namespace, fake=fake),
            what="the PCS removed after the DS is ready",
        )
        eventually(
            lambda: any(
                "PodCliqueSet gd " in e["message"]
                for e in events_for(kube, namespace, "gd", "StaleWorkloadDeleted")
            ),
            deadline=30,
            what="StaleWorkloadDeleted for the PCS",
        )
