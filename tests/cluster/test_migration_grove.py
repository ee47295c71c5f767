"""Migrations to and from the Grove program (spec/routing.md §3, grove.md §2 example 5)."""

from __future__ import annotations

from tests.cluster.support.grove import GROVE_AUTO, PCS, simulate_grove
from tests.support.agent import running_agent
from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE, simulate_dcd_ready
from tests.support.graphs import ENABLE_DS, ENABLE_GROVE, annotate, ds_components, ds_graph
from tests.support.kube import (
    DCD,
    DGD,
    DS,
    condition,
    controller,
    error_events,
    names,
    ready_reason,
)
from tests.support.polling import eventually


def test_grove_to_component_keeps_the_pcs_until_the_dcds_are_ready(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, "gc", ds_components()))
    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "gc") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=lambda: simulate_grove(kube, namespace),
            what="the Grove graph to be Ready",
        )
        kube.edit_graph(
            namespace,
            "gc",
            annotate({ENABLE_GROVE: "false"}),
        )
        eventually(
            lambda: (
                len(names(kube, DCD, namespace)) == 3
                and condition(kube.get(DGD, namespace, "gc"), "WorkloadPathway")
                .get("message", "")
                .endswith("waiting to remove PodCliqueSet gc")
            ),
            deadline=DEADLINE,
            what="DCDs created, the PCS kept and named",
        )
        assert kube.get(PCS, namespace, "gc") is not None
        # Services went to the DCDs at once
        eventually(
            lambda: all(
                controller(kube.get("Service", namespace, f"gc-{c}")).get("kind") == DCD
                for c in ("decode", "prefill", "frontend")
            ),
            deadline=DEADLINE,
            what="Services handed to the DCDs",
        )
        eventually(
            lambda: (
                kube.get(PCS, namespace, "gc") is None
                and ready_reason(kube, namespace, "gc") == "all_resources_are_ready"
            ),
            deadline=DEADLINE,
            step=lambda: simulate_dcd_ready(kube, namespace),
            what="the PCS removed once the DCDs are ready",
        )
        cond = condition(kube.get(DGD, namespace, "gc"), "WorkloadPathway")
        assert (cond["status"], cond["reason"]) == ("True", "Component")


def test_ds_to_grove_keeps_the_ds_until_the_pcs_is_ready(control_plane, kube, namespace):
    kube.create(
        ds_graph(namespace, "dg", ds_components(), **{ENABLE_DS: "true", ENABLE_GROVE: "false"})
    )
    fake = FakeDsController(kube, namespace)

    def ds_step() -> None:
        fake.sync()
        simulate_dcd_ready(kube, namespace)

    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "dg") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=ds_step,
            what="the DS graph to be Ready",
        )
        kube.edit_graph(namespace, "dg", lambda g: g["metadata"]["annotations"].pop(ENABLE_GROVE))
        eventually(lambda: kube.get(PCS, namespace, "dg"), deadline=DEADLINE, what="the PCS")
        assert kube.get(DS, namespace, "dg") is not None
        assert "dg-frontend" in names(kube, DCD, namespace)
        eventually(
            lambda: controller(kube.get("Service", namespace, "dg-frontend")).get("kind") == DGD,
            deadline=DEADLINE,
            what="the frontend Service handed to the graph",
        )

        def grove_step() -> None:
            fake.sync()
            simulate_grove(kube, namespace)

        eventually(
            lambda: (
                kube.get(DS, namespace, "dg") is None
                and names(kube, DCD, namespace) == set()
                and ready_reason(kube, namespace, "dg") == "all_resources_are_ready"
            ),
            deadline=DEADLINE,
            step=grove_step,
            what="the DS and the DCDs removed once the PCS is ready",
        )


def test_component_to_grove_with_a_model_hands_the_model_service_over_cleanly(
    control_plane, kube, namespace
):
    """Issue 14 item 2: the model Service moves from a DCD to the graph while both reconcilers
    run; no write decided on a stale view of it fails or undoes the handoff."""
    model = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
    kube.create(ds_graph(namespace, "cg", ds_components(**model), **{ENABLE_GROVE: "false"}))

    def step() -> None:
        simulate_dcd_ready(kube, namespace)
        simulate_grove(kube, namespace)

    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "cg") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=step,
            what="the Component graph to be Ready",
        )
        assert controller(kube.get("Service", namespace, "dynamo-model-fb68f5a6"))["kind"] == DCD
        graph_uid = kube.get(DGD, namespace, "cg")["metadata"]["uid"]
        kube.edit_graph(namespace, "cg", lambda g: g["metadata"]["annotations"].pop(ENABLE_GROVE))
        eventually(
            lambda: (
                not names(kube, DCD, namespace)
                and controller(kube.get("Service", namespace, "dynamo-model-fb68f5a6")).get("uid")
                == graph_uid
                and ready_reason(kube, namespace, "cg") == "all_resources_are_ready"
            ),
            deadline=DEADLINE,
            step=step,
            what="the cutover to Grove with the model Service under the graph",
        )
        errors = error_events(kube, namespace)
        assert not errors, "\n".join(errors)
