"""Coexistence on the Component pathway, with the real kubectl (docs/ownership.md).

What users add beside our fields with ``kubectl label``, ``kubectl annotate`` and ``kubectl
patch`` survives reconciles that rewrite the objects (DCDs, Deployment, LeaderWorkerSet,
component Services, the co-owned model Service); what they change of our fields (``kubectl
scale``, ``kubectl edit`` of the image, ``kubectl patch`` of a Service field) is put back and
raised as a ``ForcedConflict`` event.
"""

from __future__ import annotations

from typing import Any

from syncagent.ssa import blame
from tests.cluster.support.coexistence import (
    Target,
    add_foreign_metadata,
    check_foreign_metadata,
    keeper,
    labels_of,
)
from tests.support.agent import running_agent
from tests.support.fake_workloads import become_ready, simulate_ready
from tests.support.graphs import component, graph
from tests.support.kube import Kube, events_for
from tests.support.polling import eventually

DEADLINE = 60.0
MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
MODEL_SERVICE = "dynamo-model-fb68f5a6"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
EXTRA = {"name": "TEAM_TRACE", "value": "1"}


def _components(**model: Any) -> list[dict[str, Any]]:
    return [
        component("Frontend", "frontend"),
        component("decode", "decode", nodes=2, **model),
    ]


def _release(kube: Kube, ns: str, target: Target) -> str | None:
    """The graph's ``spec.labels`` value as the object carries it: on a DCD's pod template (a
    DCD's own labels are the component's, as upstream's; docs/parity.md), else on the object."""
    if target.kind != "DynamoComponentDeployment":
        return labels_of(kube, ns, target).get("release")
    spec = (kube.get(target.kind, ns, target.name) or {}).get("spec") or {}
    return ((spec.get("podTemplate") or {}).get("metadata") or {}).get("labels", {}).get("release")


def _owners(kube: Kube, ns: str, name: str) -> set[str]:
    svc = kube.get("Service", ns, name) or {"metadata": {}}
    return {r["name"] for r in svc["metadata"].get("ownerReferences") or ()}


def test_kubectl_labels_annotations_and_owners_survive_rewrites(
    control_plane, kube, namespace, kubectl
):
    owner = keeper(kube, namespace)
    kube.create(graph(namespace, "co", _components(**MODEL)))
    rewritten = [
        Target("DynamoComponentDeployment", "co-frontend"),
        Target("DynamoComponentDeployment", "co-decode"),
        Target("Deployment", "co-frontend"),
        Target("LeaderWorkerSet", "co-decode-0"),
        Target("Service", "co-frontend"),
        Target("Service", "co-decode"),
    ]
    model_service = Target("Service", MODEL_SERVICE)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        become_ready(kube, namespace, "co")
        add_foreign_metadata(kubectl, [*rewritten, model_service], owner)
        # An extra list item beside ours: an env var in our container (strategic merge by name).
        extra = {"spec": {"template": {"spec": {"containers": [{"name": "main", "env": [EXTRA]}]}}}}
        kubectl.patch("deployments.apps/co-frontend", extra, type="strategic")
        # Rewrites: a graph label reaches every component object (a DCD through its pod
        # template); a second graph with the same model joins the model Service as a co-owner
        # (its ownership passes), then leaves it.
        kube.edit_graph(namespace, "co", lambda g: g["spec"].update(labels={"release": "r2"}))
        kube.create(graph(namespace, "co2", [component("decode", "decode", **MODEL)]))

        def all_rewritten() -> bool:
            simulate_ready(kube, namespace)
            relabelled = all(_release(kube, namespace, t) == "r2" for t in rewritten)
            return relabelled and "co2-decode" in _owners(kube, namespace, MODEL_SERVICE)

        eventually(all_rewritten, deadline=DEADLINE, what="the agent to rewrite every object")
        check_foreign_metadata(
            kube, namespace, [*rewritten, model_service], owner["metadata"]["uid"]
        )

        def drop_model(g: dict[str, Any]) -> None:
            g["spec"]["components"][0].pop("modelRef")

        env = kube.get("Deployment", namespace, "co-frontend")["spec"]["template"]["spec"]
        assert EXTRA in env["containers"][0]["env"]
        kube.edit_graph(namespace, "co2", drop_model)
        eventually(
            lambda: _owners(kube, namespace, MODEL_SERVICE) == {"co-decode", "keeper"},
            deadline=DEADLINE,
            what="co2 to leave the model Service",
        )
        check_foreign_metadata(
            kube, namespace, [*rewritten, model_service], owner["metadata"]["uid"]
        )


def test_kubectl_hand_edits_of_our_fields_are_put_back(control_plane, kube, namespace, kubectl):
    kube.create(graph(namespace, "he", _components(**MODEL)))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        become_ready(kube, namespace, "he")
        kubectl.scale("deployments.apps/he-frontend", 3)
        kubectl.scale("leaderworkersets.leaderworkerset.x-k8s.io/he-decode-0", 2)
        kubectl.edit(
            "deployments.apps/he-frontend", f"s#image: {IMAGE}#image: example.com/other:1#"
        )
        kubectl.patch(f"services/{MODEL_SERVICE}", {"spec": {"publishNotReadyAddresses": True}})

        def put_back() -> bool:
            dep = kube.get("Deployment", namespace, "he-frontend")
            lws = kube.get("LeaderWorkerSet", namespace, "he-decode-0")
            svc = kube.get("Service", namespace, MODEL_SERVICE)
            image = dep["spec"]["template"]["spec"]["containers"][0]["image"]
            return (
                dep["spec"]["replicas"] == 1
                and image == IMAGE
                and lws["spec"]["replicas"] == 1
                and not svc["spec"].get("publishNotReadyAddresses", False)
            )

        eventually(put_back, deadline=DEADLINE, what="the agent to put every hand edit back")
        wanted = (  # (object, what was taken from whom), both in one event
            ("Deployment/{ns}/he-frontend:", ".spec.replicas from 'kubectl'"),
            ("LeaderWorkerSet/{ns}/he-decode-0:", ".spec.replicas from 'kubectl'"),
            ("Deployment/{ns}/he-frontend:", "image from 'kubectl-edit'"),
            (f"Service/{{ns}}/{MODEL_SERVICE}:", "publishNotReadyAddresses from 'kubectl-patch'"),
        )

        def raised() -> bool:
            # Events follow each reconcile's status write: they may trail the put-back a little.
            forced = [
                e["message"]
                for dcd in ("he-frontend", "he-decode")
                for e in events_for(kube, namespace, dcd, "ForcedConflict")
            ]
            return all(
                any(m.startswith(subject.format(ns=namespace)) and what in m for m in forced)
                for subject, what in wanted
            )

        eventually(raised, deadline=DEADLINE, what="a ForcedConflict event for every hand edit")
    # The fields are ours alone again: the next hand edit conflicts the same way.
    owners = blame(kube.get("Deployment", namespace, "he-frontend"))
    for path in (".spec.replicas", ".spec.template.spec.containers[name=main].image"):
        assert {o.manager for o in owners[path]} == {"syncagent/workloads"}, path
    owners = blame(kube.get("Service", namespace, MODEL_SERVICE))
    assert {o.manager for o in owners[".spec.publishNotReadyAddresses"]} == {"syncagent/services"}
