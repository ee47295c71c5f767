"""The workload controllers the cluster tier does not run, played by the tests (no tests here).

There is no kubelet and no Deployment/LeaderWorkerSet controller in the cluster tier: these
helpers write the ready status those controllers would write. Drive them from the polling
helper's ``step`` (``eventually(check, step=..., ...)``) so that each try sees their effect.
"""

from __future__ import annotations

from typing import Any

from tests.support.kube import DCD, LWS, Kube, controller, ready_reason
from tests.support.polling import eventually

# A convergence driven by the fake controllers takes a few reconciles of the agent's; generous
# for a shared 2-core machine.
DEADLINE = 90.0

NOW = "2026-01-01T00:00:00Z"


def become_ready(kube: Kube, ns: str, name: str, *, deadline: float = 60.0) -> None:
    """Simulate workload readiness until the graph reports Ready (all resources ready)."""

    def ready() -> bool:
        simulate_ready(kube, ns)
        return ready_reason(kube, ns, name) == "all_resources_are_ready"

    eventually(ready, deadline=deadline, what=f"{name} to become Ready")


def simulate_ready(kube: Kube, ns: str) -> int:
    """Write a ready status on every Deployment and LeaderWorkerSet whose status is behind
    (there is no kubelet and no workload controller in this tier). Returns how many."""
    count = 0
    for kind, status_of, progress in (
        ("Deployment", _deployment_ready, "replicas"),
        ("LeaderWorkerSet", _lws_ready, "readyReplicas"),
    ):
        for obj in kube.list(kind, ns):
            meta, replicas = obj["metadata"], obj["spec"].get("replicas", 1)
            live = obj.get("status", {})
            if (
                live.get("observedGeneration") == meta["generation"]
                and live.get(progress) == replicas
            ):
                continue
            status = status_of(meta["generation"], replicas)
            kube.merge(
                kind, ns, meta["name"], {"status": status}, sub="status", manager="test-kubelet"
            )
            count += 1
    return count


def _deployment_ready(generation: int, replicas: int) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "simulated",
                "lastUpdateTime": NOW,
                "lastTransitionTime": NOW,
            }
        ],
    }


def _lws_ready(generation: int, replicas: int) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "readyReplicas": replicas,
        "updatedReplicas": replicas,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "AllGroupsReady",
                "message": "simulated",
                "lastTransitionTime": NOW,
            }
        ],
    }


def owned_by_dcd(obj: dict[str, Any]) -> bool:
    return controller(obj).get("kind") == DCD


def simulate_dcd_ready(kube: Kube, ns: str) -> None:
    """Ready status on every Deployment / LeaderWorkerSet a DCD controls (never DS children)."""
    for kind in ("Deployment", LWS):
        for obj in kube.list(kind, ns):
            # (an object without spec: an ownership-only apply that raced a delete re-created
            # it as a stub; garbage collection removes it with its deleted owner)
            if not owned_by_dcd(obj) or obj["metadata"].get("deletionTimestamp"):
                continue
            if "spec" not in obj:
                continue
            meta, replicas = obj["metadata"], obj["spec"].get("replicas", 1)
            status: dict[str, Any] = {
                "observedGeneration": meta["generation"],
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "Ready",
                        "message": "simulated",
                        "lastTransitionTime": NOW,
                        **({"lastUpdateTime": NOW} if kind == "Deployment" else {}),
                    }
                ],
            }
            if kind == "Deployment":
                status["availableReplicas"] = replicas
            current = obj.get("status") or {}
            if (
                current.get("observedGeneration") == meta["generation"]
                and current.get("readyReplicas") == replicas
            ):
                continue
            kube.merge(
                kind, ns, meta["name"], {"status": status}, sub="status", manager="test-kubelet"
            )
