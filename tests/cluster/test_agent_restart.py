"""Restart on the Component pathway (lifecycle.md §2), driven through the running agent.

A sequential restart annotates one component at a time and moves on only when that component's
DCD is done (observed its generation and Available=True); the workloads here are made ready by
writing their status, as there is no kubelet in this tier.
"""

from __future__ import annotations

from typing import Any

from tests.support.agent import running_agent
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import component, graph
from tests.support.kube import Kube
from tests.support.polling import eventually

RESTART_AT = "nvidia.com/restartAt"
DEADLINE = 60


def _restart_at(kube: Kube, ns: str, name: str) -> str | None:
    deployment = kube.get("Deployment", ns, name) or {}
    template = deployment.get("spec", {}).get("template", {})
    return (template.get("metadata", {}).get("annotations") or {}).get(RESTART_AT)


def _restart_status(kube: Kube, ns: str) -> dict[str, Any]:
    return ((kube.get("DynamoGraphDeployment", ns, "rs") or {}).get("status") or {}).get(
        "restart"
    ) or {}


def _after_ready(kube: Kube, ns: str) -> dict[str, Any]:
    """Make the rolled workloads ready (a kubelet's part), then read the restart status."""
    simulate_ready(kube, ns)
    return _restart_status(kube, ns)


def _ready(kube: Kube, ns: str) -> bool:
    simulate_ready(kube, ns)
    dgd = kube.get("DynamoGraphDeployment", ns, "rs") or {}
    return (dgd.get("status") or {}).get("state") == "successful"


def test_sequential_restart_rolls_one_component_at_a_time(kube, namespace, control_plane):
    kube.create(
        graph(namespace, "rs", [component("Frontend", "frontend"), component("decode", "decode")])
    )
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(lambda: _ready(kube, namespace), deadline=DEADLINE, what="the graph ready")

        def request(dgd: dict[str, Any]) -> None:
            dgd["spec"]["restart"] = {"id": "r1", "strategy": {"type": "Sequential"}}

        kube.edit_graph(namespace, "rs", request)
        # Byte order: "Frontend" < "decode"; only the first carries the id while it restarts.
        eventually(
            lambda: (
                _restart_status(kube, namespace).get("inProgress") == ["Frontend"]
                and _restart_at(kube, namespace, "rs-frontend") == "r1"
            ),
            deadline=DEADLINE,
            what="Frontend restarting first",
        )
        assert _restart_at(kube, namespace, "rs-decode") is None
        assert _restart_status(kube, namespace)["phase"] == "Restarting"

        eventually(
            lambda: _after_ready(kube, namespace).get("inProgress") == ["decode"],
            deadline=DEADLINE,
            what="decode next, once Frontend is done",
        )
        # The DCD carries the id now; its own reconcile rolls the Deployment.
        eventually(
            lambda: _restart_at(kube, namespace, "rs-decode") == "r1",
            deadline=DEADLINE,
            what="decode's Deployment annotated",
        )

        eventually(
            lambda: _after_ready(kube, namespace).get("phase") == "Completed",
            deadline=DEADLINE,
            what="the restart completed",
        )
        done = _restart_status(kube, namespace)
        assert done["observedID"] == "r1"
        assert not done.get("inProgress")
        assert _restart_at(kube, namespace, "rs-frontend") == "r1"
