"""Migration between the Component and DisaggregatedSet programs (issue 6 acceptance 4, 5;
spec/routing.md §3). A recorder watching the graph's LeaderWorkerSets and Services proves that
every component always had a Service selecting a ready workload."""

from __future__ import annotations

from tests.cluster.support.dsgraph import (
    add_scaling_adapter,
    ds_step,
    enable_ds,
    owner_uids,
    wait_fallen_back,
    wait_ready,
)
from tests.cluster.support.serving import ServingRecorder
from tests.support.agent import running_agent
from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE, simulate_dcd_ready
from tests.support.graphs import ENABLE_DS, ds_components, ds_graph
from tests.support.kube import (
    DCD,
    DGD,
    DS,
    Kube,
    condition,
    controller,
    error_events,
    events_for,
    names,
    ready_reason,
    service_selector,
)
from tests.support.polling import eventually

G = "vllm-disagg"
MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
MODEL_SERVICE = "dynamo-model-fb68f5a6"


def test_component_to_ds_cutover_keeps_every_component_served(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, G, ds_components()))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, fake, what="the Component graph to be Ready")
        dcd_selectors = {
            c: service_selector(kube, namespace, f"{G}-{c}") for c in ("decode", "prefill")
        }
        assert all("disaggregatedset.x-k8s.io/name" not in s for s in dcd_selectors.values())
        graph_uid = kube.get(DGD, namespace, G)["metadata"]["uid"]
        with ServingRecorder(kube, namespace, G, ["decode", "prefill"]) as recorder:
            fake.ready = False  # hold the DS not ready to see the intermediate state
            enable_ds(kube, namespace, G)
            eventually(
                lambda: (
                    kube.get(DS, namespace, G) is not None
                    and all(
                        controller(kube.get("Service", namespace, f"{G}-{c}")).get("uid")
                        == graph_uid
                        for c in ("decode", "prefill")
                    )
                ),
                deadline=DEADLINE,
                step=ds_step(kube, namespace, fake),
                what="the DS and the Service handoff",
            )
            # selectors unchanged, old DCDs still serving while the DS is not ready
            for c in ("decode", "prefill"):
                assert service_selector(kube, namespace, f"{G}-{c}") == dcd_selectors[c]
                svc = kube.get("Service", namespace, f"{G}-{c}")
                assert len(svc["metadata"]["ownerReferences"]) == 1
                holders = {
                    m["manager"]
                    for m in svc["metadata"]["managedFields"]
                    if "f:ownerReferences" in str(m.get("fieldsV1", {}).get("f:metadata", {}))
                }
                # docs/write-protocol.md (supersedes routing.md §3 example 9): created under
                # its DCD by one content apply, the Service changed hands in one content apply
                # that swapped the reference item, held by the content manager alone.
                assert holders == {"syncagent/services"}
            assert {f"{G}-decode", f"{G}-prefill", f"{G}-frontend"} <= names(kube, DCD, namespace)
            # The status is written at the end of the reconcile that handed the Services over.
            eventually(
                lambda: (
                    (p := condition(kube.get(DGD, namespace, G), "WorkloadPathway"))
                    and (p["status"], p["reason"]) == ("False", "DisaggregatedSet")
                ),
                deadline=DEADLINE,
                step=ds_step(kube, namespace, fake),
                what="WorkloadPathway False/DisaggregatedSet while the DS is not ready",
            )

            seen_order: list[str] = []

            def observe() -> bool:
                switched = all(
                    "disaggregatedset.x-k8s.io/revision"
                    in service_selector(kube, namespace, f"{G}-{c}")
                    for c in ("decode", "prefill")
                )
                gone = not ({f"{G}-decode", f"{G}-prefill"} & names(kube, DCD, namespace))
                if gone and not switched:
                    seen_order.append("DCDs deleted before the selectors moved")
                return switched and gone

            fake.ready = True
            eventually(
                observe,
                deadline=DEADLINE,
                step=ds_step(kube, namespace, fake),
                what="selector switch and cutover",
            )
            assert seen_order == []
            eventually(
                lambda: (
                    condition(kube.get(DGD, namespace, G), "WorkloadPathway").get("status")
                    == "True"
                    and ready_reason(kube, namespace, G) == "all_resources_are_ready"
                ),
                deadline=DEADLINE,
                step=ds_step(kube, namespace, fake),
                what="WorkloadPathway=True",
            )
            assert names(kube, DCD, namespace) == {f"{G}-frontend"}
            eventually(
                lambda: _stale_deleted(kube, namespace) >= {f"{G}-decode", f"{G}-prefill"},
                deadline=30,
                what="StaleWorkloadDeleted for both replaced DCDs",
            )
        assert recorder.events > 0
        assert recorder.violations == []


def _stale_deleted(kube: Kube, namespace: str) -> set[str]:
    """Names in the StaleWorkloadDeleted events of the graph ("Deleted <Kind> <name> ...")."""
    return {e["message"].split()[2] for e in events_for(kube, namespace, G, "StaleWorkloadDeleted")}


def test_ds_fallback_to_dcds_hands_services_back_and_deletes_ds_last(
    control_plane, kube, namespace
):
    kube.create(ds_graph(namespace, G, ds_components(**MODEL), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, fake, what="the DS graph to be Ready")
        model = kube.get("Service", namespace, MODEL_SERVICE)
        assert controller(model)["kind"] == DGD
        kube.delete("Service", namespace, MODEL_SERVICE)
        eventually(
            lambda: (
                kube.get("Service", namespace, MODEL_SERVICE) is None
                or kube.get("Service", namespace, MODEL_SERVICE)["metadata"]["uid"]
                != model["metadata"]["uid"]
            ),
            deadline=DEADLINE,
            what="the model Service to go",
        )
        ds_selectors = {
            c: service_selector(kube, namespace, f"{G}-{c}") for c in ("decode", "prefill")
        }
        with ServingRecorder(kube, namespace, G, ["decode", "prefill"]) as recorder:
            kube.edit_graph(namespace, G, add_scaling_adapter)
            # DCDs are not made ready yet: the DS must stay while they are not
            eventually(
                lambda: (
                    {f"{G}-decode", f"{G}-prefill"} <= names(kube, DCD, namespace)
                    and all(
                        controller(kube.get("Service", namespace, f"{G}-{c}")).get("kind") == DCD
                        for c in ("decode", "prefill")
                    )
                ),
                deadline=DEADLINE,
                step=ds_step(kube, namespace, fake, dcds=False),
                what="replacement DCDs owning their Services",
            )
            for c in ("decode", "prefill"):
                svc = kube.get("Service", namespace, f"{G}-{c}")
                assert svc["spec"]["selector"] == ds_selectors[c]
            model = eventually(
                lambda: kube.get("Service", namespace, MODEL_SERVICE),
                deadline=DEADLINE,
                what="the recreated model Service",
            )
            # the first formerly selected DCD takes it, unless a replacement DCD's own
            # reconcile recreated it first: "already controlled by any DCD of this DGD is
            # accepted as is" (routing.md §3)
            dcd_uids = {
                kube.get(DCD, namespace, f"{G}-{c}")["metadata"]["uid"]
                for c in ("decode", "prefill")
            }
            eventually(
                lambda: (
                    controller(kube.get("Service", namespace, MODEL_SERVICE)).get("uid") in dcd_uids
                ),
                deadline=DEADLINE,
                what="the model Service controlled by a replacement DCD",
            )
            assert kube.get(DS, namespace, G) is not None

            def fallback_reported() -> bool:
                graph = kube.get(DGD, namespace, G)
                eligible = condition(graph, "DisaggregatedSetEligible")
                pathway = condition(graph, "WorkloadPathway")
                return (eligible.get("status"), eligible.get("reason")) == (
                    "False",
                    "FallbackToComponentProgram",
                ) and (pathway.get("status"), pathway.get("reason")) == ("False", "Component")

            eventually(fallback_reported, deadline=DEADLINE, what="the fallback conditions")
            assert kube.get(DS, namespace, G) is not None
            assert (
                "DisaggregatedSet vllm-disagg"
                in condition(kube.get(DGD, namespace, G), "WorkloadPathway")["message"]
            )
            eventually(
                lambda: events_for(kube, namespace, G, "DisaggregatedSetFallback"),
                deadline=DEADLINE,
                what="the DisaggregatedSetFallback event",
            )
            assert len(events_for(kube, namespace, G, "DisaggregatedSetFallback")) == 1
            wait_fallen_back(
                kube, namespace, G, fake, what="the DS deleted once the DCDs are ready"
            )
            for c in ("decode", "prefill"):
                assert "disaggregatedset.x-k8s.io/name" not in service_selector(
                    kube, namespace, f"{G}-{c}"
                )
            eventually(
                lambda: owner_uids(kube.get("Service", namespace, MODEL_SERVICE)) == dcd_uids,
                deadline=DEADLINE,
                what="both DCDs (and not the graph) owning the model Service",
            )
        assert recorder.violations == []
        assert len(events_for(kube, namespace, G, "DisaggregatedSetFallback")) == 1


def test_services_go_back_to_the_dcds_when_the_ds_is_already_gone(control_plane, kube, namespace):
    """Issue 14 item 1: the hand-back must not depend on the old DS still existing (deleted by
    hand while the agent was down, then the graph falls back to the Component program)."""
    kube.create(ds_graph(namespace, G, ds_components(**MODEL), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, fake, what="the DS graph to be Ready")
    graph_uid = kube.get(DGD, namespace, G)["metadata"]["uid"]
    assert controller(kube.get("Service", namespace, f"{G}-decode"))["uid"] == graph_uid
    kube.edit_graph(namespace, G, add_scaling_adapter)
    kube.delete(DS, namespace, G)
    eventually(lambda: kube.get(DS, namespace, G) is None, deadline=DEADLINE, what="the DS gone")
    with running_agent(control_plane.kubeconfig, namespace=namespace):

        def handed_back() -> bool:
            dcds = {
                c: (kube.get(DCD, namespace, f"{G}-{c}") or {}).get("metadata", {}).get("uid")
                for c in ("decode", "prefill")
            }
            return all(
                dcds[c]
                and controller(kube.get("Service", namespace, f"{G}-{c}")).get("uid") == dcds[c]
                for c in dcds
            ) and (ready_reason(kube, namespace, G) == "all_resources_are_ready")

        eventually(
            handed_back,
            deadline=DEADLINE,
            step=lambda: simulate_dcd_ready(kube, namespace),
            what="the Services handed to the DCDs and the graph Ready",
        )
        eventually(
            lambda: graph_uid not in owner_uids(kube.get("Service", namespace, MODEL_SERVICE)),
            deadline=DEADLINE,
            what="the graph to leave the model Service",
        )


def test_component_to_ds_with_a_model_hands_the_model_service_over_cleanly(
    control_plane, kube, namespace
):
    """Issue 14 item 2: the model Service changes controller (a DCD -> the graph) while both
    reconcilers run; neither may act on a stale view of it (no spurious errors)."""
    kube.create(ds_graph(namespace, G, ds_components(**MODEL)))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, fake, what="the Component graph to be Ready")
        assert controller(kube.get("Service", namespace, MODEL_SERVICE))["kind"] == DCD
        graph_uid = kube.get(DGD, namespace, G)["metadata"]["uid"]
        enable_ds(kube, namespace, G)
        eventually(
            lambda: (
                names(kube, DCD, namespace) == {f"{G}-frontend"}
                and controller(kube.get("Service", namespace, MODEL_SERVICE)).get("uid")
                == graph_uid
                and ready_reason(kube, namespace, G) == "all_resources_are_ready"
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the cutover to the DS with the model Service under the graph",
        )
        errors = error_events(kube, namespace)
        assert not errors, "\n".join(errors)
