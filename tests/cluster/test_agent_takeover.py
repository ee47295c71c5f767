"""The agent takes over objects the upstream Dynamo operator (or kubectl) last wrote.

An object written through Update operations by the upstream operator (controller-runtime's
``manager``) keeps those entries until someone merges them: fields we stop setting would then
linger forever. The agent merges them into its own managers before it adopts or applies.
"""

from __future__ import annotations

from typing import Any

from tests.cluster.test_agent_support import Kube, component, eventually, graph, running_agent

UPSTREAM = "manager"


def _managers(obj: dict[str, Any] | None) -> set[str]:
    return {m["manager"] for m in ((obj or {}).get("metadata") or {}).get("managedFields") or ()}


def test_agent_takes_over_fields_the_upstream_operator_wrote(client, namespace, control_plane):
    kube = Kube(client)
    kube.create(graph(namespace, "legacy", [component("Frontend", "frontend")]))

    def deployment() -> dict[str, Any] | None:
        return kube.get("Deployment", namespace, "legacy-frontend")

    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(deployment, deadline=60, what="the Frontend Deployment")

    # What the upstream operator leaves behind: Update entries, and a field we never set.
    kube.merge(
        "Deployment",
        namespace,
        "legacy-frontend",
        {"metadata": {"labels": {"upstream-only": "x"}}, "spec": {"revisionHistoryLimit": 3}},
        manager=UPSTREAM,
    )
    assert UPSTREAM in _managers(deployment())

    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:

        def taken_over() -> bool:
            live = deployment()
            return UPSTREAM not in _managers(live) and "upstream-only" not in (live or {}).get(
                "metadata", {}
            ).get("labels", {})

        eventually(taken_over, deadline=60, what="no field left to the upstream operator")
        assert "took over field ownership" in agent.logs()

    live = deployment()
    assert live is not None
    assert {m for m in _managers(live) if not m.startswith("syncagent/")} <= {"test-kubelet"}
    # A field we own now and do not set is gone; the server default takes its place.
    assert live["spec"]["revisionHistoryLimit"] == 10
