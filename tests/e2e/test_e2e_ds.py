"""The DisaggregatedSet pathway on the real LWS v0.9.0 manager (the seed's live suite): readiness,
the metadata watch, sequential restart, the fallback to DCDs with a deleted model Service,
the Component -> DS cutover with its Service handoff, and a revision rollout.

Nothing here writes a workload's status: the DS controller creates the child LeaderWorkerSets,
the LWS controller their StatefulSets, kube-controller-manager the pods, kube-scheduler places
them on kwok nodes and kwok makes them Ready. Rollouts and cutovers run under an
:class:`EndpointRecorder`: the EndpointSlice controller must always have listed a ready endpoint
behind every component Service.
"""

from __future__ import annotations

from tests.e2e.support.observe import (
    DEADLINE,
    DS_NAME,
    DS_REVISION,
    DS_ROLE,
    EndpointRecorder,
    ds_children,
    graph_ready,
    pod_ready,
    pods,
    wait_ready,
    wait_ready_endpoints,
)
from tests.support.agent import running_agent
from tests.support.graphs import ENABLE_DS, annotate, ds_components, ds_graph
from tests.support.kube import (
    DCD,
    DGD,
    DS,
    Kube,
    condition,
    controller,
    events_for,
    names,
    service_selector,
)
from tests.support.polling import eventually

G = "vllm-disagg"
ROLES = ("decode", "prefill")
SERVICES = [f"{G}-{r}" for r in ROLES]
MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
MODEL_SERVICE = "dynamo-model-fb68f5a6"
SLICE = "disaggregatedset.x-k8s.io/slice"
RESTART_AT = "nvidia.com/restartAt"
TEMPLATE_HASH = "nvidia.com/dynamo-ds-template-hash"


def _revisions(kube: Kube, ns: str) -> set[str]:
    ds = kube.get(DS, ns, G)
    return (
        {c["metadata"]["labels"][DS_REVISION] for c in ds_children(kube, ns, ds)} if ds else set()
    )


def _ds_graph(ns: str, **extra) -> dict:
    return ds_graph(ns, G, ds_components(**extra), **{ENABLE_DS: "true"})


def test_ds_graph_becomes_ready_through_the_real_controllers(control_plane, kube, namespace):
    kube.create(_ds_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        wait_ready(kube, namespace, G, what="the DS graph Ready")
        ds = kube.get(DS, namespace, G)
        # v0.9.0 never writes DS status (third-party.md §2, acceptance 1 of the status rule)
        assert not ds.get("status")
        children = ds_children(kube, namespace, ds)
        assert sorted(c["metadata"]["labels"][DS_ROLE] for c in children) == sorted(ROLES)
        (revision,) = {c["metadata"]["labels"][DS_REVISION] for c in children}
        graph = kube.get(DGD, namespace, G)
        for role in ROLES:
            group = pods(kube, namespace, **{DS_NAME: G, DS_ROLE: role})
            # one group of two: leader and worker, scheduled on kwok nodes and Ready
            assert len(group) == 2, group
            assert all(pod_ready(p) for p in group), group
            for pod in group:
                assert pod["spec"]["serviceAccountName"] == f"{G}-k8s-service-discovery"
                env = {e["name"] for e in pod["spec"]["containers"][0].get("env", [])}
                assert {"LWS_LEADER_ADDRESS", "LWS_WORKER_INDEX", "LWS_GROUP_SIZE"} <= env
            assert service_selector(kube, namespace, f"{G}-{role}")[DS_REVISION] == revision
            wait_ready_endpoints(kube, namespace, f"{G}-{role}", 1)
            status = graph["status"]["components"][role]
            assert status["componentKind"] == "LeaderWorkerSet"
            assert (status["replicas"], status["readyReplicas"]) == (1, 1)
        assert names(kube, DCD, namespace) == {f"{G}-frontend"}
        wait_ready_endpoints(kube, namespace, f"{G}-frontend", 1)
        # converged: a forced reconcile on live controllers writes nothing
        writes, before = agent.scrape().writes(), agent.dgd_reconciles()
        kube.edit_graph(namespace, G, annotate({"touch": "1"}))
        eventually(lambda: agent.dgd_reconciles() > before, deadline=DEADLINE, what="a reconcile")
        assert graph_ready(kube, namespace, G)
        assert agent.scrape().writes() == writes


def test_label_changes_on_the_ds_and_a_child_requeue_the_graph(control_plane, kube, namespace):
    """disaggregatedset.md §6.3: label updates on the DS and on its child LWS re-queue the
    graph. Each change here has an effect only a reconcile produces: a label the agent owns
    comes back on the DS; a child relabelled into another slice stops counting as the target."""
    kube.create(_ds_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, what="the DS graph Ready")
        owned = "nvidia.com/dynamo-graph-deployment-name"
        kube.merge(DS, namespace, G, {"metadata": {"labels": {owned: None, "team": "x"}}})
        eventually(
            lambda: kube.get(DS, namespace, G)["metadata"]["labels"].get(owned) == G,
            deadline=DEADLINE,
            what="the agent's label back on the DS",
        )
        assert kube.get(DS, namespace, G)["metadata"]["labels"]["team"] == "x"

        ds = kube.get(DS, namespace, G)
        child = next(
            c
            for c in ds_children(kube, namespace, ds)
            if c["metadata"]["labels"][DS_ROLE] == "decode"
        )
        name = child["metadata"]["name"]
        # v0.9.0's DS controller has no slices and ignores this label; our readiness reads it.
        kube.merge("LeaderWorkerSet", namespace, name, {"metadata": {"labels": {SLICE: "1"}}})
        eventually(
            lambda: (
                'decode role "decode" slice 0 has 0 target LeaderWorkerSets'
                in condition(kube.get(DGD, namespace, G), "Ready").get("message", "")
            ),
            deadline=DEADLINE,
            what="the relabelled child no longer the target",
        )
        kube.merge("LeaderWorkerSet", namespace, name, {"metadata": {"labels": {SLICE: None}}})
        wait_ready(kube, namespace, G, what="Ready again once the label is gone")


def test_sequential_restart_rolls_one_revision_and_completes(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, G, ds_components()[1:], **{ENABLE_DS: "true"}))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, what="the DS graph Ready")
        (old,) = _revisions(kube, namespace)
        with EndpointRecorder(kube, namespace, SERVICES) as recorder:
            kube.edit_graph(
                namespace,
                G,
                lambda g: g["spec"].update(
                    restart={
                        "id": "r1",
                        "strategy": {"type": "Sequential", "order": ["prefill", "decode"]},
                    }
                ),
            )

            def completed() -> bool:
                restart = (kube.get(DGD, namespace, G) or {}).get("status", {}).get("restart")
                return restart == {"observedID": "r1", "phase": "Completed", "inProgress": []}

            eventually(completed, deadline=DEADLINE, what="the restart Completed")
            wait_ready(kube, namespace, G, what="Ready after the restart")
            eventually(
                lambda: len(_revisions(kube, namespace)) == 1,
                deadline=DEADLINE,
                what="the old revision deleted",
            )
        (new,) = _revisions(kube, namespace)
        assert new != old
        for child in ds_children(kube, namespace, kube.get(DS, namespace, G)):
            lwt = child["spec"]["leaderWorkerTemplate"]
            assert lwt["leaderTemplate"]["metadata"]["annotations"][RESTART_AT] == "r1"
            assert lwt["workerTemplate"]["metadata"]["annotations"][RESTART_AT] == "r1"
        assert all(service_selector(kube, namespace, f"{G}-{r}")[DS_REVISION] == new for r in ROLES)
        recorder.assert_served_throughout()


def test_image_change_rolls_the_ds_with_ready_endpoints_throughout(control_plane, kube, namespace):
    kube.create(_ds_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, what="the DS graph Ready")
        (old,) = _revisions(kube, namespace)
        old_pods = {p["metadata"]["uid"] for p in pods(kube, namespace, **{DS_NAME: G})}
        with EndpointRecorder(kube, namespace, SERVICES) as recorder:

            def new_image(g: dict) -> None:
                for c in g["spec"]["components"]:
                    if c["name"] == "decode":
                        c["podTemplate"]["spec"]["containers"][0]["image"] += "-hotfix"

            kube.edit_graph(namespace, G, new_image)
            eventually(
                lambda: (
                    graph_ready(kube, namespace, G)
                    and _revisions(kube, namespace) - {old}
                    and old not in _revisions(kube, namespace)
                ),
                deadline=DEADLINE,
                what="the new revision serving and the old one gone",
            )
        (new,) = _revisions(kube, namespace)
        assert all(service_selector(kube, namespace, f"{G}-{r}")[DS_REVISION] == new for r in ROLES)
        # the garbage collector deletes the old LeaderWorkerSet's pods after it, on its own time
        eventually(
            lambda: (
                not old_pods & {p["metadata"]["uid"] for p in pods(kube, namespace, **{DS_NAME: G})}
            ),
            deadline=DEADLINE,
            what="the old revision's pods deleted",
        )
        live = pods(kube, namespace, **{DS_NAME: G})
        decode = [p for p in live if p["metadata"]["labels"][DS_ROLE] == "decode"]
        assert all(p["spec"]["containers"][0]["image"].endswith("-hotfix") for p in decode)
        recorder.assert_served_throughout()


def test_component_to_ds_cutover_hands_services_over_without_an_endpoint_gap(
    control_plane, kube, namespace
):
    kube.create(ds_graph(namespace, G, ds_components()))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, what="the Component graph Ready")
        dcd_uids = {kube.get(DCD, namespace, f"{G}-{r}")["metadata"]["uid"] for r in ROLES}
        assert all(
            controller(kube.get("Service", namespace, s))["uid"] in dcd_uids for s in SERVICES
        )
        graph_uid = kube.get(DGD, namespace, G)["metadata"]["uid"]
        with EndpointRecorder(kube, namespace, SERVICES) as recorder:
            kube.edit_graph(
                namespace,
                G,
                annotate({ENABLE_DS: "true"}),
            )
            eventually(
                lambda: (
                    graph_ready(kube, namespace, G)
                    and names(kube, DCD, namespace) == {f"{G}-frontend"}
                    and condition(kube.get(DGD, namespace, G), "WorkloadPathway").get("status")
                    == "True"
                ),
                deadline=DEADLINE,
                what="the cutover to the DS",
            )
        for service in SERVICES:
            svc = kube.get("Service", namespace, service)
            assert controller(svc)["uid"] == graph_uid
            assert svc["spec"]["selector"][DS_NAME] == G
        # Events are written beside the reconcile that records them, not before its status
        eventually(
            lambda: all(
                any(
                    service in e["message"]
                    for e in events_for(kube, namespace, G, "ServiceOwnershipTransferred")
                )
                for service in SERVICES
            ),
            deadline=DEADLINE,
            what="a ServiceOwnershipTransferred event for each Service",
        )
        recorder.assert_served_throughout()


def test_fallback_to_dcds_recreates_the_model_service_and_keeps_endpoints(
    control_plane, kube, namespace
):
    kube.create(_ds_graph(namespace, **MODEL))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, what="the DS graph Ready")
        graph_uid = kube.get(DGD, namespace, G)["metadata"]["uid"]
        model = kube.get("Service", namespace, MODEL_SERVICE)
        assert controller(model)["uid"] == graph_uid
        kube.delete("Service", namespace, MODEL_SERVICE)
        recreated = eventually(
            lambda: (
                (svc := kube.get("Service", namespace, MODEL_SERVICE))
                and svc["metadata"]["uid"] != model["metadata"]["uid"]
                and svc
            ),
            deadline=DEADLINE,
            what="the deleted model Service recreated",
        )
        assert controller(recreated)["uid"] == graph_uid
        ds_uid = kube.get(DS, namespace, G)["metadata"]["uid"]
        with EndpointRecorder(kube, namespace, SERVICES) as recorder:
            # removing the opt-in annotation routes the graph back to the Component program
            kube.edit_graph(namespace, G, lambda g: g["metadata"]["annotations"].pop(ENABLE_DS))
            eventually(
                lambda: kube.get(DS, namespace, G) is None and graph_ready(kube, namespace, G),
                deadline=DEADLINE,
                what="the DS deleted once the DCDs serve",
            )
        dcd_uids = {kube.get(DCD, namespace, f"{G}-{r}")["metadata"]["uid"] for r in ROLES}
        for service in SERVICES:
            svc = kube.get("Service", namespace, service)
            assert controller(svc)["uid"] in dcd_uids
            assert DS_NAME not in svc["spec"]["selector"]
        eventually(
            lambda: (
                {
                    r["uid"]
                    for r in kube.get("Service", namespace, MODEL_SERVICE)["metadata"][
                        "ownerReferences"
                    ]
                }
                == dcd_uids
            ),
            deadline=DEADLINE,
            what="the replacement DCDs (not the graph) owning the model Service",
        )
        # garbage collection took the DS's children with it
        eventually(
            lambda: (
                not [
                    c
                    for c in kube.list("LeaderWorkerSet", namespace)
                    if controller(c).get("uid") == ds_uid
                ]
            ),
            deadline=DEADLINE,
            what="the DS children collected",
        )
        recorder.assert_served_throughout()
