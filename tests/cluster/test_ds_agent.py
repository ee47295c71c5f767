"""The DisaggregatedSet program through the agent (issue 6 acceptance 1, 2, 8, 9).

``syncagent run`` runs as a subprocess; :class:`FakeDsController` plays the DS controller.
"""

from __future__ import annotations

import base64

import orjson
import pytest

from tests.cluster.support.dsgraph import ds_step
from tests.support.agent import running_agent
from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE
from tests.support.graphs import ENABLE_DS, annotate, component, ds_components, ds_graph
from tests.support.kube import (
    DCD,
    DGD,
    DS,
    LWS,
    Kube,
    condition,
    controller,
    events_for,
    names,
    ready_reason,
)
from tests.support.polling import eventually

SLICE = "disaggregatedset.x-k8s.io/slice"


def test_happy_path_one_ds_two_roles_frontend_dcd_then_no_writes(control_plane, kube, namespace):
    _happy_path(control_plane, kube, namespace, v010=False)


@pytest.mark.lws("v0.10.0")
def test_happy_path_on_v010_converges_with_server_defaults(control_plane, kube, namespace):
    _happy_path(control_plane, kube, namespace, v010=True)
    assert kube.get(DS, namespace, "vllm-disagg")["spec"]["slices"] == 1  # never sent by us
    children = [c for c in kube.list(LWS, namespace) if controller(c).get("kind") == DS]
    assert len(children) == 2
    assert all(c["metadata"]["labels"][SLICE] == "0" for c in children)


def _happy_path(control_plane, kube: Kube, namespace, *, v010: bool) -> None:
    kube.create(ds_graph(namespace, "vllm-disagg", ds_components(), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace, v010=v010)
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        ds = eventually(
            lambda: kube.get(DS, namespace, "vllm-disagg"), deadline=DEADLINE, what="the DS"
        )
        assert [r["name"] for r in ds["spec"]["roles"]] == ["decode", "prefill"]
        for role in ds["spec"]["roles"]:
            assert role["spec"]["replicas"] == 1
            assert role["spec"]["leaderWorkerTemplate"]["size"] == 2
            assert role["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {
                "maxSurge": 1,
                "maxUnavailable": 0,
                "partition": 0,
            }
            assert role["spec"]["networkConfig"] == {"subdomainPolicy": "Shared"}
            assert len(role["metadata"]["annotations"]["nvidia.com/dynamo-ds-template-hash"]) == 16
        graph = kube.get(DGD, namespace, "vllm-disagg")
        assert controller(ds)["uid"] == graph["metadata"]["uid"]
        eventually(
            lambda: ready_reason(kube, namespace, "vllm-disagg") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the DS graph to become Ready",
        )
        assert names(kube, DCD, namespace) == {"vllm-disagg-frontend"}
        done = kube.get(DGD, namespace, "vllm-disagg")
        assert done["status"]["routing"] == {"pathway": "DisaggregatedSet"}
        assert condition(done, "DisaggregatedSetEligible")["reason"] == "Selected"
        assert condition(done, "WorkloadPathway")["status"] == "True"
        decode = done["status"]["components"]["decode"]
        assert decode["componentKind"] == LWS
        assert decode["readyReplicas"] == 1
        svc = kube.get("Service", namespace, "vllm-disagg-decode")
        assert svc["spec"]["selector"]["disaggregatedset.x-k8s.io/role"] == "decode"
        assert controller(svc)["kind"] == DGD

        writes = agent.scrape().writes()
        before = agent.dgd_reconciles()
        kube.edit_graph(
            namespace,
            "vllm-disagg",
            annotate({"touch": "1"}),
        )
        eventually(
            lambda: agent.dgd_reconciles() > before, deadline=DEADLINE, what="another reconcile"
        )
        fake.sync()
        assert agent.scrape().writes() == writes


def test_readiness_needs_target_children_ready_and_drained_old_ones(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, "rd", ds_components(), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    fake.ready = False
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: len(names(kube, LWS, namespace)) == 2,
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="two children",
        )
        # stale roleStatuses without generation evidence are ignored (the v0.9 CRD prunes
        # status.observedGeneration, so this status carries no evidence)
        ds = kube.get(DS, namespace, "rd")
        kube.merge(
            DS,
            namespace,
            "rd",
            {
                "status": {
                    "roleStatuses": [
                        {"name": "decode", "replicas": 1, "readyReplicas": 1, "updatedReplicas": 1}
                    ]
                }
            },
            sub="status",
        )
        eventually(
            lambda: (
                "replicas not ready"
                in condition(kube.get(DGD, namespace, "rd"), "Ready").get("message", "")
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="not ready from the children",
        )
        message = condition(kube.get(DGD, namespace, "rd"), "Ready")["message"]
        assert (
            'decode role "decode" slice 0 replicas not ready (desired=1 replicas=1 updated=1 ready=0)'
            in message
        )
        fake.ready = True
        eventually(
            lambda: ready_reason(kube, namespace, "rd") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="Ready once the children are",
        )
        old_children = names(kube, LWS, namespace)
        old_revisions = {_revision(kube, namespace, n) for n in old_children}
        # A template change: the old revision keeps serving, the new one is not ready yet.
        fake.ready_revisions = old_revisions
        kube.edit_graph(namespace, "rd", lambda g: g["spec"].update({"labels": {"env": "prod"}}))
        eventually(
            lambda: len(names(kube, LWS, namespace)) == 4,
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="new-revision children",
        )
        new_children = names(kube, LWS, namespace) - old_children
        eventually(
            lambda: "replicas not ready" in _ready_message(kube, namespace, "rd"),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="not ready while only the old revision serves",
        )
        assert all(_ready_replicas(kube, namespace, n) == 1 for n in old_children)
        assert all(_ready_replicas(kube, namespace, n) == 0 for n in new_children)
        assert ds["metadata"]["uid"] == kube.get(DS, namespace, "rd")["metadata"]["uid"]
        # The new revision is ready at full size, the old one has not drained: still not Ready.
        fake.ready_revisions, fake.drain = None, False
        message = eventually(
            lambda: (
                all(_ready_replicas(kube, namespace, n) == 1 for n in new_children)
                and "replicas not ready" not in (m := _ready_message(kube, namespace, "rd"))
                and m
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="new children ready, old ones not drained",
        )
        assert all(f'"{n}" has not scaled to zero' in message for n in old_children)
        assert ready_reason(kube, namespace, "rd") != "all_resources_are_ready"
        fake.drain = True
        eventually(
            lambda: (
                ready_reason(kube, namespace, "rd") == "all_resources_are_ready"
                and not (names(kube, LWS, namespace) & old_children)
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="Ready after the old revision drained",
        )


def _ready_message(kube: Kube, ns: str, name: str) -> str:
    return str(condition(kube.get(DGD, ns, name), "Ready").get("message", ""))


def _ready_replicas(kube: Kube, ns: str, name: str) -> int:
    return int(((kube.get(LWS, ns, name) or {}).get("status") or {}).get("readyReplicas") or 0)


def _revision(kube: Kube, ns: str, name: str) -> str:
    return kube.get(LWS, ns, name)["metadata"]["labels"]["disaggregatedset.x-k8s.io/revision"]


def test_foreign_metadata_on_ds_and_services_survives(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, "fm", ds_components(), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        eventually(
            lambda: ready_reason(kube, namespace, "fm") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="Ready",
        )
        cm = kube.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra"}},
        )
        foreign_ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "extra",
            "uid": cm["metadata"]["uid"],
        }
        for kind, name in ((DS, "fm"), ("Service", "fm-decode")):
            obj = kube.get(kind, namespace, name)
            refs = [*obj["metadata"]["ownerReferences"], foreign_ref]
            kube.merge(
                kind,
                namespace,
                name,
                {
                    "metadata": {
                        "labels": {"team": "x"},
                        "annotations": {"a": "b"},
                        "ownerReferences": refs,
                    }
                },
            )
        before = agent.dgd_reconciles()
        kube.edit_graph(namespace, "fm", lambda g: g["spec"].update({"labels": {"env": "prod"}}))
        eventually(
            # The reconcile count alone can be met by reconciles of the merges above, before
            # the graph change is handled (seen on a loaded machine): wait for its effect too.
            lambda: (
                agent.dgd_reconciles() > before + 1
                and ready_reason(kube, namespace, "fm") == "all_resources_are_ready"
                and kube.get(DS, namespace, "fm")["metadata"].get("labels", {}).get("env") == "prod"
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="reconciles after a graph change",
        )
        for kind, name in ((DS, "fm"), ("Service", "fm-decode")):
            obj = kube.get(kind, namespace, name)
            assert obj["metadata"]["labels"]["team"] == "x", kind
            assert obj["metadata"]["annotations"]["a"] == "b", kind
            assert len(obj["metadata"]["ownerReferences"]) == 2, kind
            assert controller(obj)["kind"] == DGD
        assert kube.get(DS, namespace, "fm")["metadata"]["labels"]["env"] == "prod"


def test_ds_and_service_controlled_by_someone_else_are_left_untouched(
    control_plane, kube, namespace
):
    cm = kube.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}},
    )
    other = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "other",
        "uid": cm["metadata"]["uid"],
        "controller": True,
    }
    foreign_ds = {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": DS,
        "metadata": {"name": "taken", "namespace": namespace, "ownerReferences": [other]},
        "spec": {"roles": _minimal_roles()},
    }
    created = kube.create(foreign_ds)
    kube.create(ds_graph(namespace, "taken", ds_components(), **{ENABLE_DS: "true"}))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "taken") == "failed_to_reconcile_the_resources",
            deadline=DEADLINE,
            what="the refusal",
        )
        ready = condition(kube.get(DGD, namespace, "taken"), "Ready")
        assert ready["message"] == (
            "refusing to reconcile DisaggregatedSet taken because it is not controlled by "
            f"DynamoGraphDeployment {namespace}/taken"
        )
        eventually(
            lambda: events_for(kube, namespace, "taken", "OwnershipConflict"),
            deadline=DEADLINE,
            what="an OwnershipConflict event",
        )
        live = kube.get(DS, namespace, "taken")
        assert live["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert live["metadata"]["ownerReferences"] == [other]

    # a Service of a selected component controlled by someone else
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svcx-decode", "namespace": namespace, "ownerReferences": [other]},
        "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]},
    }
    svc_created = kube.create(svc)
    kube.create(ds_graph(namespace, "svcx", ds_components(), **{ENABLE_DS: "true"}))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "svcx") == "failed_to_reconcile_the_resources",
            deadline=DEADLINE,
            what="the Service refusal",
        )
        ready = condition(kube.get(DGD, namespace, "svcx"), "Ready")
        assert ready["message"] == (
            f'Service {namespace}/svcx-decode is controlled by v1/ConfigMap "other"'
        )
        eventually(
            lambda: events_for(kube, namespace, "svcx", "OwnershipConflict"),
            deadline=DEADLINE,
            what="an OwnershipConflict event",
        )
        live = kube.get("Service", namespace, "svcx-decode")
        assert live["metadata"]["resourceVersion"] == svc_created["metadata"]["resourceVersion"]
        assert live["spec"]["selector"] == {"app": "x"}
        assert live["metadata"]["ownerReferences"] == [other]


def _minimal_roles() -> list[dict]:
    def role(name: str) -> dict:
        template = {"spec": {"containers": [{"name": "main", "image": "x"}]}}
        return {
            "name": name,
            "spec": {
                "replicas": 1,
                "rolloutStrategy": {"type": "RollingUpdate"},
                "leaderWorkerTemplate": {"size": 2, "workerTemplate": template},
            },
        }

    return [role("a"), role("b")]


def test_shared_model_service_is_co_owned_then_left(control_plane, kube, namespace):
    """disaggregatedset.md §5 examples 5 and 6: another graph's DCD controls the model Service;
    the DS graph adds only its own item, and removes only that item when it stops using it."""
    model = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
    other = ds_graph(namespace, "other", [component("decode", "decode", **model)])
    kube.create(other)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        shared = eventually(
            lambda: kube.get("Service", namespace, "dynamo-model-fb68f5a6"),
            deadline=DEADLINE,
            what="the model Service of the other graph",
        )
        other_dcd = kube.get(DCD, namespace, "other-decode")
        assert controller(shared)["uid"] == other_dcd["metadata"]["uid"]
        kube.create(ds_graph(namespace, "mine", ds_components(**model), **{ENABLE_DS: "true"}))
        graph_uid = eventually(
            lambda: kube.get(DGD, namespace, "mine"), deadline=DEADLINE, what="the graph"
        )["metadata"]["uid"]

        def joined() -> bool:
            refs = kube.get("Service", namespace, "dynamo-model-fb68f5a6")["metadata"]
            return any(r["uid"] == graph_uid for r in refs["ownerReferences"])

        eventually(joined, deadline=DEADLINE, what="the graph's own item")
        svc = kube.get("Service", namespace, "dynamo-model-fb68f5a6")
        assert controller(svc)["uid"] == other_dcd["metadata"]["uid"]
        mine = [r for r in svc["metadata"]["ownerReferences"] if r["uid"] == graph_uid]
        assert not mine[0].get("controller")
        holders = {
            m["manager"]
            for m in svc["metadata"]["managedFields"]
            if graph_uid in str(m.get("fieldsV1", {}))
        }
        assert holders == {f"syncagent/owner/{graph_uid}"}

        def drop_model(g: dict) -> None:
            for c in g["spec"]["components"]:
                c.pop("modelRef", None)

        fake = FakeDsController(kube, namespace)
        kube.edit_graph(namespace, "mine", drop_model)
        eventually(
            lambda: (
                ready_reason(kube, namespace, "mine") == "all_resources_are_ready" and not joined()
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the graph to leave the model Service",
        )
        svc = kube.get("Service", namespace, "dynamo-model-fb68f5a6")
        assert controller(svc)["uid"] == other_dcd["metadata"]["uid"]


def test_stale_component_service_goes_only_after_the_replacement_is_ready(
    control_plane, kube, namespace
):
    """A component renamed in a DS graph: its old Service stays while the new revision is not
    ready, and is deleted (StaleWorkloadDeleted row of disaggregatedset.md §5) once it is."""
    kube.create(ds_graph(namespace, "st", ds_components(), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "st") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the DS graph to be Ready",
        )
        old = kube.get("Service", namespace, "st-prefill")
        fake.ready_revisions = {_revision(kube, namespace, n) for n in names(kube, LWS, namespace)}

        def rename(g: dict) -> None:
            for c in g["spec"]["components"]:
                if c["name"] == "prefill":
                    c["name"] = "prefill2"

        kube.edit_graph(namespace, "st", rename)
        eventually(
            lambda: kube.get("Service", namespace, "st-prefill2"),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the renamed component's Service",
        )
        eventually(
            lambda: "replicas not ready" in _ready_message(kube, namespace, "st"),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the graph not Ready on the new revision",
        )
        # The graph wrote its status for the new generation: the stale Service is still there.
        assert (
            kube.get("Service", namespace, "st-prefill")["metadata"]["uid"]
            == old["metadata"]["uid"]
        )
        fake.ready_revisions = None
        eventually(
            lambda: (
                ready_reason(kube, namespace, "st") == "all_resources_are_ready"
                and kube.get("Service", namespace, "st-prefill") is None
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the stale Service deleted once the graph is Ready",
        )


def test_a_new_pull_secret_re_renders_the_ds_roles_without_a_resync(control_plane, kube, namespace):
    """Issue 14 item 3: namespace facts (image-pull Secrets, labelled component ServiceAccounts)
    re-queue graphs too, not only DCDs: DS roles are rendered from the graph."""
    components = ds_components()
    # The frontend DCD pulls from elsewhere: its reconcile must not be what re-queues the graph.
    components[0]["podTemplate"]["spec"]["containers"][0]["image"] = "ghcr.io/example/frontend:1"
    kube.create(ds_graph(namespace, "ps", components, **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, "--resync-period=1h", namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, "ps") == "all_resources_are_ready",
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the DS graph to be Ready",
        )
        auths = orjson.dumps({"auths": {"nvcr.io": {"auth": "dXNlcjpwYXNz"}}})
        kube.request(
            "POST",
            kube.path("Secret", namespace),
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "nvcr-pull", "namespace": namespace},
                "type": "kubernetes.io/dockerconfigjson",
                "data": {".dockerconfigjson": base64.b64encode(auths).decode()},
            },
        )

        def pull_secrets() -> list[list]:
            roles = kube.get(DS, namespace, "ps")["spec"]["roles"]
            return [
                r["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"].get(
                    "imagePullSecrets", []
                )
                for r in roles
            ]

        eventually(
            lambda: pull_secrets() == [[{"name": "nvcr-pull"}]] * 2,
            deadline=DEADLINE,
            what="both DS roles to name the new pull Secret",
        )
