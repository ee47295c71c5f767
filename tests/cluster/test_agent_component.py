"""The agent (``syncagent run`` as a subprocess) on the Component pathway (issue 5 acceptance
1, 2, 3, 5, 6 and 9). No kubelet here: tests write workload status to simulate readiness."""

from __future__ import annotations

from typing import Any

from tests.support.agent import running_agent
from tests.support.fake_workloads import become_ready
from tests.support.graphs import component, example_graph, graph
from tests.support.kube import Kube, condition, events_for, names, ready_reason
from tests.support.kubectl import FieldWatch
from tests.support.polling import eventually

DEADLINE = 60.0
DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"


def _rvs(kube: Kube, ns: str, names: dict[str, list[str]]) -> dict[str, str]:
    out = {}
    for kind, items in names.items():
        for name in items:
            obj = kube.get(kind, ns, name)
            assert obj is not None, f"{kind} {name} is missing"
            out[f"{kind}/{name}"] = obj["metadata"]["resourceVersion"]
    return out


def _controller(obj: dict[str, Any]) -> dict[str, Any]:
    refs = [r for r in obj["metadata"].get("ownerReferences", []) if r.get("controller")]
    assert len(refs) == 1, obj["metadata"].get("ownerReferences")
    return refs[0]


def test_example_graph_yields_rendered_objects_and_becomes_ready(control_plane, kube, namespace):
    kube.create(example_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: names(kube, DCD, namespace) == {"demo-frontend", "demo-decode", "demo-prefill"},
            deadline=DEADLINE,
            what="three DCDs",
        )
        eventually(
            lambda: names(kube, "Deployment", namespace) == {"demo-frontend", "demo-decode"},
            deadline=DEADLINE,
            what="Deployments of the single-node components",
        )
        eventually(
            lambda: names(kube, "LeaderWorkerSet", namespace) == {"demo-prefill-0"},
            deadline=DEADLINE,
            what="the LeaderWorkerSet of the multinode component",
        )
        eventually(
            lambda: (
                {"demo-frontend", "demo-decode", "demo-prefill"}
                <= names(kube, "Service", namespace)
            ),
            deadline=DEADLINE,
            what="component Services",
        )
        graph_obj = kube.get(DGD, namespace, "demo")
        dcd = kube.get(DCD, namespace, "demo-decode")
        assert _controller(dcd)["uid"] == graph_obj["metadata"]["uid"]
        deployment = kube.get("Deployment", namespace, "demo-decode")
        assert _controller(deployment)["uid"] == dcd["metadata"]["uid"]
        assert deployment["spec"]["replicas"] == 2
        lws = kube.get("LeaderWorkerSet", namespace, "demo-prefill-0")
        assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
        service = kube.get("Service", namespace, "demo-prefill")
        assert service["spec"]["selector"]["role"] == "leader"
        assert "demo-k8s-service-discovery" in names(kube, "ServiceAccount", namespace)

        eventually(
            lambda: ready_reason(kube, namespace, "demo") == "some_resources_are_not_ready",
            deadline=DEADLINE,
            what="the graph to report pending",
        )
        pending = kube.get(DGD, namespace, "demo")
        assert pending["status"]["state"] == "pending"
        assert condition(pending, "Ready")["status"] == "False"
        assert pending["status"]["routing"] == {"pathway": "Component"}

        become_ready(kube, namespace, "demo", deadline=DEADLINE)
        done = kube.get(DGD, namespace, "demo")
        assert done["status"]["state"] == "successful"
        ready = condition(done, "Ready")
        assert (ready["status"], ready["message"]) == ("True", "All resources are ready")
        assert ready["observedGeneration"] == done["metadata"]["generation"]
        assert done["status"]["observedGeneration"] == done["metadata"]["generation"]
        decode = done["status"]["components"]["decode"]
        assert decode["componentKind"] == "Deployment"
        assert decode["componentNames"] == ["demo-decode"]
        assert decode["readyReplicas"] == 2
        assert done["status"]["components"]["prefill"]["componentKind"] == "LeaderWorkerSet"
        dcd = kube.get(DCD, namespace, "demo-decode")
        assert condition(dcd, "Available")["reason"] == "DeploymentReady"
        assert condition(dcd, "DynamoComponentReady")["reason"] == "ComponentReady"


def test_editing_one_component_changes_only_its_objects(control_plane, kube, namespace):
    kube.create(example_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        become_ready(kube, namespace, "demo", deadline=DEADLINE)
        others = {
            DCD: ["demo-frontend", "demo-prefill"],
            "Deployment": ["demo-frontend"],
            "LeaderWorkerSet": ["demo-prefill-0"],
            "Service": ["demo-frontend", "demo-prefill", "demo-decode"],
        }
        before_rvs = _rvs(kube, namespace, others)
        before = agent.scrape()

        def edit(g: dict[str, Any]) -> None:
            decode = next(c for c in g["spec"]["components"] if c["name"] == "decode")
            decode["replicas"] = 3
            decode["podTemplate"]["spec"]["containers"][0]["env"] = [
                {"name": "EXTRA", "value": "1"}
            ]

        kube.edit_graph(namespace, "demo", edit)

        def rolled() -> bool:
            dep = kube.get("Deployment", namespace, "demo-decode")
            env = dep["spec"]["template"]["spec"]["containers"][0].get("env", [])
            return dep["spec"]["replicas"] == 3 and any(e["name"] == "EXTRA" for e in env)

        eventually(rolled, deadline=DEADLINE, what="the decode Deployment to change")
        become_ready(kube, namespace, "demo", deadline=DEADLINE)
        after = agent.scrape()
        assert _rvs(kube, namespace, others) == before_rvs

        def delta(resource: str) -> float:
            return after.writes(resource=resource) - before.writes(resource=resource)

        # The request counters on /metrics: one content write for the decode DCD and one for
        # its Deployment; nothing for any other component's objects.
        assert delta("dynamocomponentdeployments") == 1
        assert delta("deployments") == 1
        assert delta("leaderworkersets") == 0
        assert delta("services") == 0
        assert delta("serviceaccounts") + delta("roles") + delta("rolebindings") == 0


def test_removing_a_component_deletes_its_dcd_and_workloads_only(control_plane, kube, namespace):
    kube.create(example_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        become_ready(kube, namespace, "demo", deadline=DEADLINE)
        kept = {
            DCD: ["demo-frontend", "demo-decode"],
            "Deployment": ["demo-frontend", "demo-decode"],
            "Service": ["demo-frontend", "demo-decode"],
        }
        before_rvs = _rvs(kube, namespace, kept)

        def remove(g: dict[str, Any]) -> None:
            g["spec"]["components"] = [c for c in g["spec"]["components"] if c["name"] != "prefill"]

        kube.edit_graph(namespace, "demo", remove)
        eventually(
            lambda: (
                kube.get(DCD, namespace, "demo-prefill") is None
                and kube.get("LeaderWorkerSet", namespace, "demo-prefill-0") is None
                and kube.get("Service", namespace, "demo-prefill") is None
            ),
            deadline=DEADLINE,
            what="the prefill DCD, LeaderWorkerSet and Service to go",
        )
        # The status write trails the deletes of the same reconcile: wait for it, then check
        # that the graph stayed Ready and nothing kept was written.
        eventually(
            lambda: (
                set(kube.get(DGD, namespace, "demo")["status"]["components"])
                == {"Frontend", "decode"}
            ),
            deadline=DEADLINE,
            what="status.components without prefill",
        )
        assert ready_reason(kube, namespace, "demo") == "all_resources_are_ready"
        assert _rvs(kube, namespace, kept) == before_rvs


def test_graph_without_main_container_fails_validation_and_deletes_nothing(
    control_plane, kube, namespace
):
    kube.create(
        graph(namespace, "bad", [component("frontend", "frontend"), component("decode", "decode")])
    )
    kube.create(graph(namespace, "good", [component("frontend", "frontend")]))
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        eventually(
            lambda: {"bad-frontend", "bad-decode", "good-frontend"} <= names(kube, DCD, namespace),
            deadline=DEADLINE,
            what="DCDs of both graphs",
        )
        before = {d["metadata"]["name"]: d["metadata"]["uid"] for d in kube.list(DCD, namespace)}

        def break_it(g: dict[str, Any]) -> None:
            g["spec"]["components"][1]["podTemplate"]["spec"]["containers"] = [
                {"name": "sidecar", "image": "busybox"}
            ]

        kube.edit_graph(namespace, "bad", break_it)
        eventually(
            lambda: ready_reason(kube, namespace, "bad") == "validation_failed",
            deadline=DEADLINE,
            what="validation_failed",
        )
        bad = kube.get(DGD, namespace, "bad")
        assert bad["status"]["state"] == "failed"
        assert condition(bad, "Ready")["message"] == (
            'spec.components[1].podTemplate: a container named "main" with a non-empty image '
            "is required"
        )
        eventually(
            lambda: len(events_for(kube, namespace, "bad", "ValidationFailed")) == 1,
            deadline=DEADLINE,
            what="one ValidationFailed event",
        )
        assert "spec.components[1].podTemplate" in agent.logs()

        # The agent keeps reconciling the other graphs: a change to "good" converges.
        kube.edit_graph(namespace, "good", lambda g: g["spec"]["components"][0].update(replicas=2))
        eventually(
            lambda: kube.get("Deployment", namespace, "good-frontend")["spec"]["replicas"] == 2,
            deadline=DEADLINE,
            what="the good graph to converge",
        )
        after = {d["metadata"]["name"]: d["metadata"]["uid"] for d in kube.list(DCD, namespace)}
        assert after == before  # nothing deleted, nothing replaced
        assert kube.get("Deployment", namespace, "bad-decode") is not None
        assert len(events_for(kube, namespace, "bad", "ValidationFailed")) == 1


def test_foreign_metadata_survives_reconciles(control_plane, kube, namespace):
    kube.create(example_graph(namespace))
    keeper = kube.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "keeper", "namespace": namespace},
        }
    )
    foreign_ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "keeper",
        "uid": keeper["metadata"]["uid"],
    }
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        become_ready(kube, namespace, "demo", deadline=DEADLINE)
        for kind in ("Deployment", "Service"):
            live = kube.get(kind, namespace, "demo-decode")
            refs = [*live["metadata"]["ownerReferences"], foreign_ref]
            kube.merge(
                kind,
                namespace,
                "demo-decode",
                {
                    "metadata": {
                        "labels": {"team": "ops"},
                        "annotations": {"note": "keep me"},
                        "ownerReferences": refs,
                    }
                },
                manager="someone-else",
            )
        # A graph label change makes the agent re-apply both objects' metadata.
        kube.edit_graph(namespace, "demo", lambda g: g["spec"].update(labels={"release": "r2"}))

        def reapplied() -> bool:
            return all(
                kube.get(kind, namespace, "demo-decode")["metadata"]["labels"].get("release")
                == "r2"
                for kind in ("Deployment", "Service")
            )

        eventually(reapplied, deadline=DEADLINE, what="the Deployment and Service to be re-applied")
        for kind in ("Deployment", "Service"):
            meta = kube.get(kind, namespace, "demo-decode")["metadata"]
            assert meta["labels"]["team"] == "ops", kind
            assert meta["annotations"]["note"] == "keep me", kind
            assert foreign_ref["uid"] in {r["uid"] for r in meta["ownerReferences"]}, kind
            assert _controller({"metadata": meta})["kind"] == DCD


def test_deleting_a_graph_deletes_what_it_owned_and_nothing_else(control_plane, kube, namespace):
    kube.create(example_graph(namespace, "gone"))
    kube.create(graph(namespace, "stays", [component("frontend", "frontend")]))
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "mine", "namespace": namespace},
        }
    )
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: (
                {"gone-prefill-0"} <= names(kube, "LeaderWorkerSet", namespace)
                and {"gone-decode", "stays-frontend"} <= names(kube, "Deployment", namespace)
            ),
            deadline=DEADLINE,
            what="both graphs deployed",
        )
        survivors = {
            kind: {n for n in names(kube, kind, namespace) if not n.startswith("gone-")}
            for kind in (
                DCD,
                "Deployment",
                "Service",
                "ServiceAccount",
                "Role",
                "RoleBinding",
                "ConfigMap",
            )
        }
        kube.delete(DGD, namespace, "gone")

        def leftovers() -> list[str]:
            return [
                f"{kind}/{n}"
                for kind in (
                    DCD,
                    "Deployment",
                    "LeaderWorkerSet",
                    "Service",
                    "ServiceAccount",
                    "Role",
                    "RoleBinding",
                )
                for n in names(kube, kind, namespace)
                if n.startswith("gone-")
            ]

        def all_gone() -> bool:
            return not leftovers()

        try:
            eventually(
                all_gone, deadline=DEADLINE, what="garbage collection of the graph's objects"
            )
        except AssertionError as err:
            detail = [
                (k, kube.get(k.split("/")[0], namespace, k.split("/")[1])["metadata"])
                for k in leftovers()
            ]
            raise AssertionError(f"{err}; left: {detail}") from None
        for kind, kept in survivors.items():
            assert kept <= names(kube, kind, namespace), kind


def test_model_service_is_co_owned_and_left_by_each_owner(control_plane, kube, namespace):
    model = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
    for name in ("x", "y"):
        kube.create(graph(namespace, name, [component("decode", "decode", **model)]))
    svc = "dynamo-model-fb68f5a6"

    def owners() -> dict[str, bool]:
        live = kube.get("Service", namespace, svc)
        if live is None:
            return {}
        refs = live["metadata"].get("ownerReferences", [])
        return {r["name"]: bool(r.get("controller")) for r in refs}

    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: set(owners()) == {"x-decode", "y-decode"},
            deadline=DEADLINE,
            what="both DCDs to co-own the model Service",
        )
        assert sum(owners().values()) == 1
        live = kube.get("Service", namespace, svc)
        assert live["metadata"]["annotations"] == {
            "nvidia.com/dynamo-base-model": "Qwen/Qwen3-0.6B"
        }
        assert live["spec"]["clusterIP"] == "None"

        def drop_model(g: dict[str, Any]) -> None:
            g["spec"]["components"][0].pop("modelRef")

        kube.edit_graph(namespace, "y", drop_model)
        eventually(
            lambda: owners() == {"x-decode": True},
            deadline=DEADLINE,
            what="y to leave and x to control the model Service",
        )
        kube.edit_graph(namespace, "x", drop_model)
        eventually(
            lambda: kube.get("Service", namespace, svc) is None,
            deadline=DEADLINE,
            what="the last owner to delete the model Service",
        )


def test_a_serving_graph_stays_ready_while_others_join_its_model_service(
    control_plane, kube, namespace
):
    """Co-owners joining a model Service at once take turns on it (docs/ownership.md §4): each
    join costs at most one refused write (409), and no serving graph or component reports a
    conflict as a failure (docs/retries.md). A co-owner whose item is in place asks nothing when another joins
    (docs/write-protocol.md §1): no dry run of a Service in all the joins."""
    model = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
    kube.create(graph(namespace, "serving", [component("decode", "decode", **model)]))
    joiners = [f"j{i}" for i in range(12)]

    def owners() -> set[str]:
        live = kube.get("Service", namespace, "dynamo-model-fb68f5a6") or {"metadata": {}}
        return {r["name"] for r in live["metadata"].get("ownerReferences", [])}

    def first(obj: dict[str, Any], type_: str) -> tuple[str, str]:
        got = condition(obj, type_)
        return got.get("status", ""), got.get("message", "")

    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        become_ready(kube, namespace, "serving", deadline=DEADLINE)
        asked = agent.scrape().requests(resource="services", dry_run="true")
        with (
            FieldWatch(kube, DGD, namespace, "serving", lambda o: first(o, "Ready")) as ready,
            FieldWatch(
                kube, DCD, namespace, "serving-decode", lambda o: first(o, "Available")
            ) as available,
        ):
            for name in joiners:
                kube.create(graph(namespace, name, [component("decode", "decode", **model)]))
            eventually(
                lambda: owners() == {f"{n}-decode" for n in ["serving", *joiners]},
                deadline=DEADLINE,
                what="every graph's DCD co-owning the model Service",
            )
            become_ready(kube, namespace, joiners[-1], deadline=DEADLINE)
        metrics = agent.scrape()
        assert metrics.requests(resource="services", dry_run="true") == asked
        # Each join costs at most one refused write (docs/ownership.md §4, the turns).
        refused = metrics.sum(
            "syncagent_api_requests_total", resource="services", code="409", dry_run="false"
        )
        print(f"{len(joiners)} joins: {refused:.0f} refused writes to the model Service")
        assert refused <= len(joiners)
        assert {status for status, _ in ready.values()} == {"True"}, ready.values()
        assert {status for status, _ in available.values()} == {"True"}, available.values()
