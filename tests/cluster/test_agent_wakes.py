"""What wakes the agent: a change to a graph's or a component's status alone reconciles nothing
(disaggregatedset.md §6.3: a DGD is re-queued on create, delete, a ``generation`` change or an
annotation change), so the agent's own status writes do not cost it a reconcile each.

Read from the agent's debug log (one ``reconciled`` line per reconcile), with the API server's
watch order as the clock: status writes to graph ``a`` and to the component of graph ``c`` are
sent before a spec change of graph ``b``, so a reconcile they woke would have been queued ahead
of ``b``'s. A component's status is its graph's business, though: ``c`` itself is woken.
"""

from __future__ import annotations

from typing import Any

from tests.support.agent import Agent, reconciled, running_agent
from tests.support.fake_workloads import become_ready
from tests.support.graphs import component, first_replicas, graph
from tests.support.kube import DCD, DGD, Kube
from tests.support.polling import eventually

DEADLINE = 60.0
APPLY = "application/apply-patch+yaml"


def _reconciled(agent: Agent, since: int) -> list[tuple[str, str]]:
    """(controller, key) of every reconcile logged after character ``since`` of the log."""
    return [(e["controller"], e["key"]) for e in reconciled(agent.logs()[since:])]


def _probe_condition(kube: Kube, kind: str, ns: str, name: str) -> None:
    """Someone else's condition in ``status``, by a server-side apply of their own."""
    body: dict[str, Any] = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": kind,
        "metadata": {"name": name, "namespace": ns},
        "status": {
            "conditions": [
                {
                    "type": "example.com/Probed",
                    "status": "True",
                    "reason": "Probed",
                    "message": "a health checker's own condition",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        },
    }
    kube.request(
        "PATCH", kube.path(kind, ns, name, "status"), body, content_type=APPLY, fieldManager="probe"
    )


def _scale(kube: Kube, ns: str, name: str, replicas: int) -> int:
    return kube.edit_graph(ns, name, first_replicas(replicas))["metadata"]["generation"]


def _observed(kube: Kube, ns: str, name: str, generation: int) -> bool:
    graph_ = kube.get(DGD, ns, name) or {}
    return (graph_.get("status") or {}).get("observedGeneration") == generation


def test_a_status_change_alone_wakes_neither_graph_nor_component(control_plane, kube, namespace):
    for name in ("a", "b", "c"):
        kube.create(graph(namespace, name, [component("frontend", "frontend")]))
    with running_agent(
        control_plane.kubeconfig, "--log-level", "debug", namespace=namespace
    ) as agent:
        for name in ("a", "b", "c"):
            become_ready(kube, namespace, name)
        # Anything still due for "a" or "c" (a child's change re-queues its graph within a 1 s
        # window) is due before anything this change of "b" brings about, and ran by b's Ready.
        _scale(kube, namespace, "b", 2)
        become_ready(kube, namespace, "b")

        mark = len(agent.logs())
        _probe_condition(kube, DGD, namespace, "a")
        _probe_condition(kube, DCD, namespace, "c-frontend")
        generation = _scale(kube, namespace, "b", 3)
        eventually(
            lambda: _observed(kube, namespace, "b", generation),
            deadline=DEADLINE,
            what="b's new generation observed",
        )
        become_ready(kube, namespace, "b")
        eventually(
            lambda: ("dgd", f"{namespace}/c") in _reconciled(agent, mark),
            deadline=DEADLINE,
            what="graph c woken by its component's status",
        )

        woken = _reconciled(agent, mark)
        assert ("dgd", f"{namespace}/b") in woken
        assert ("dcd", f"{namespace}/b-frontend") in woken
        quiet = {("dgd", "a"), ("dcd", "a-frontend"), ("dcd", "c-frontend")}
        assert [w for w in woken if (w[0], w[1].split("/")[1]) in quiet] == [], woken
        # the writes were made and kept: they were status changes, and nobody undid them
        for kind, name in ((DGD, "a"), (DCD, "c-frontend")):
            types = {c["type"] for c in kube.get(kind, namespace, name)["status"]["conditions"]}
            assert "example.com/Probed" in types
