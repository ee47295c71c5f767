"""The agent takes over what the upstream Dynamo operator wrote, and nothing else.

An object written through Update operations by the upstream operator (controller-runtime's
``manager``) keeps those entries until someone merges them: fields we stop setting would then
linger forever. The agent merges what the operator demonstrably wrote (content of the kinds we
render, ``nvidia.com/`` labels, references to our kinds, status of graphs and components) into
its own managers before it applies. ``manager`` is also the LeaderWorkerSet controller's name:
the status it writes on an LWS, and labels of any other prefix, stay with it.
"""

from __future__ import annotations

from typing import Any

from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.polling import eventually

UPSTREAM = "manager"
DEADLINE = 60.0


def _managers(obj: dict[str, Any] | None) -> set[str]:
    return {m["manager"] for m in ((obj or {}).get("metadata") or {}).get("managedFields") or ()}


def _entry(obj: dict[str, Any], manager: str, subresource: str = "") -> dict[str, Any] | None:
    for entry in obj["metadata"].get("managedFields") or ():
        if (entry["manager"], entry.get("subresource", "")) == (manager, subresource):
            return entry["fieldsV1"]
    return None


def test_agent_takes_over_fields_the_upstream_operator_wrote(kube, namespace, control_plane):
    kube.create(graph(namespace, "legacy", [component("Frontend", "frontend")]))

    def deployment() -> dict[str, Any] | None:
        return kube.get("Deployment", namespace, "legacy-frontend")

    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(deployment, deadline=DEADLINE, what="the Frontend Deployment")

    # What the upstream operator leaves behind: Update entries, and fields we never set; and a
    # label of another prefix under the same manager name (another controller's, say).
    kube.merge(
        "Deployment",
        namespace,
        "legacy-frontend",
        {
            "metadata": {"labels": {"nvidia.com/upstream-only": "x", "team": "upstream"}},
            "spec": {"revisionHistoryLimit": 3},
        },
        manager=UPSTREAM,
    )
    kube.merge(
        "DynamoComponentDeployment",
        namespace,
        "legacy-frontend",
        {"spec": {"sharedMemorySize": "1Gi"}},
        manager=UPSTREAM,
    )

    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:

        def taken_over() -> bool:
            live = deployment() or {}
            dcd = kube.get("DynamoComponentDeployment", namespace, "legacy-frontend") or {}
            return "nvidia.com/upstream-only" not in live["metadata"].get(
                "labels", {}
            ) and "sharedMemorySize" not in dcd.get("spec", {})

        eventually(taken_over, deadline=DEADLINE, what="the upstream operator's fields to go")
        assert "took over field ownership" in agent.logs()

    live = deployment()
    assert live is not None
    # A field we own now and do not set is gone; the server default takes its place.
    assert live["spec"]["revisionHistoryLimit"] == 10
    # The label of another prefix stays, owned by the same entry, which owns nothing else.
    assert live["metadata"]["labels"]["team"] == "upstream"
    assert _entry(live, UPSTREAM) == {"f:metadata": {"f:labels": {"f:team": {}}}}
    dcd = kube.get("DynamoComponentDeployment", namespace, "legacy-frontend")
    assert UPSTREAM not in _managers(dcd)


def test_lws_status_written_by_manager_survives_our_reconciles(kube, namespace, control_plane):
    """The LWS controller writes LWS status as ``manager`` (an Update on /status)."""
    kube.create(graph(namespace, "mn", [component("decode", "decode", nodes=2)]))
    name = "mn-decode-0"
    status = {
        "observedGeneration": 1,
        "replicas": 1,
        "readyReplicas": 1,
        "updatedReplicas": 1,
        "hpaPodSelector": "leaderworkerset.sigs.k8s.io/name=mn-decode-0",
    }
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: kube.get("LeaderWorkerSet", namespace, name),
            deadline=DEADLINE,
            what="the LeaderWorkerSet",
        )
        kube.merge(
            "LeaderWorkerSet", namespace, name, {"status": status}, sub="status", manager=UPSTREAM
        )
        before = kube.get("LeaderWorkerSet", namespace, name)
        written = _entry(before, UPSTREAM, "status")
        assert written is not None
        # A graph change makes the agent rewrite the LWS (labels on it and its templates).
        kube.edit_graph(namespace, "mn", lambda g: g["spec"].update(labels={"release": "r2"}))

        def rewritten() -> dict[str, Any] | None:
            lws = kube.get("LeaderWorkerSet", namespace, name) or {}
            return lws if lws["metadata"].get("labels", {}).get("release") == "r2" else None

        after = eventually(rewritten, deadline=DEADLINE, what="the agent to rewrite the LWS")
    assert after["metadata"]["generation"] > before["metadata"]["generation"]
    assert {k: after["status"][k] for k in status} == status
    assert _entry(after, UPSTREAM, "status") == written


def test_an_object_the_agent_deletes_loses_the_operators_finalizer_first(
    kube, namespace, control_plane
):
    """Upstream's operator finalizes its DCDs (``nvidia.com/finalizer``). One the agent deletes
    without applying it again (a removed component here; upstream's worker-hash DCD on a
    takeover) must not wait for ever for an operator that no longer runs."""
    kube.create(
        graph(namespace, "fin", [component("Frontend", "frontend"), component("decode", "decode")])
    )
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: kube.get("DynamoComponentDeployment", namespace, "fin-decode"),
            deadline=DEADLINE,
            what="the decode DCD",
        )
    # While no agent runs: the operator's finalizer, and the component gone from the graph.
    kube.merge(
        "DynamoComponentDeployment",
        namespace,
        "fin-decode",
        {"metadata": {"finalizers": ["nvidia.com/finalizer"]}},
        manager=UPSTREAM,
    )

    def drop_decode(g: dict[str, Any]) -> None:
        g["spec"]["components"] = [c for c in g["spec"]["components"] if c["name"] != "decode"]

    kube.edit_graph(namespace, "fin", drop_decode)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: kube.get("DynamoComponentDeployment", namespace, "fin-decode") is None,
            deadline=DEADLINE,
            what="the removed component's DCD gone, finalizer and all",
        )
        assert kube.get("DynamoComponentDeployment", namespace, "fin-frontend") is not None


def test_a_graph_the_operator_served_has_its_status_taken_and_can_be_deleted(
    kube, namespace, control_plane
):
    """Upstream's operator writes a graph's status through Update on /status and puts its
    finalizer on the graph. The agent takes the status entry into ``syncagent/graph-status``
    (fields we do not write go), leaves the graph's metadata alone while it serves it, and
    removes the operator's finalizer once the graph is being deleted: otherwise a graph taken
    over could never be deleted."""
    kube.create(graph(namespace, "old", [component("Frontend", "frontend")]))
    kube.merge(
        "DynamoGraphDeployment",
        namespace,
        "old",
        {"metadata": {"finalizers": ["nvidia.com/finalizer", "example.com/keep"]}},
        manager=UPSTREAM,
    )
    upstream_status = {"state": "successful", "placement": {"state": "Placed", "score": 1}}
    kube.merge(
        "DynamoGraphDeployment",
        namespace,
        "old",
        {"status": upstream_status},
        sub="status",
        manager=UPSTREAM,
    )

    def taken() -> dict[str, Any] | None:
        live = kube.get("DynamoGraphDeployment", namespace, "old") or {}
        return live if _entry(live, UPSTREAM, "status") is None and live.get("status") else None

    with running_agent(control_plane.kubeconfig, namespace=namespace):
        live = eventually(taken, deadline=DEADLINE, what="the operator's status entry taken")
        assert "placement" not in live["status"]  # ours now, and we do not write it
        assert _entry(live, "syncagent/graph-status", "status") is not None
        assert live["metadata"]["finalizers"] == ["nvidia.com/finalizer", "example.com/keep"]

        kube.delete("DynamoGraphDeployment", namespace, "old")

        def released() -> list[str] | None:
            live = kube.get("DynamoGraphDeployment", namespace, "old") or {}
            left = live.get("metadata", {}).get("finalizers")
            return left if left == ["example.com/keep"] else None

        eventually(released, deadline=DEADLINE, what="the operator's finalizer released")
    kube.merge("DynamoGraphDeployment", namespace, "old", {"metadata": {"finalizers": None}})
    eventually(
        lambda: kube.get("DynamoGraphDeployment", namespace, "old") is None,
        deadline=DEADLINE,
        what="the graph gone once its other finalizer is removed",
    )
