"""What the real Grove operator made of a graph's PodCliqueSet (no tests here).

Objects are followed by controller reference, never by name: PodCliqueSet -> PodCliqueScalingGroups
and PodCliques -> PodCliques (of a scaling group) -> pods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.e2e.support.observe import pod_ready
from tests.support.kube import Kube, controller

PCS = "PodCliqueSet"
PCLQ = "PodClique"
PCSG = "PodCliqueScalingGroup"
# The agent serves Grove graphs only where Grove is available; here it is.
GROVE_ON = ("--capability", "grove=auto")
KWOK_NODE_PREFIX = "kwok-gpu-"


@dataclass(frozen=True, slots=True)
class GroveFamily:
    pcs: dict[str, Any]
    groups: list[dict[str, Any]]
    cliques: list[dict[str, Any]]
    pods: list[dict[str, Any]]

    def pods_of(self, clique: str) -> list[dict[str, Any]]:
        """Pods whose PodClique's name ends with ``-clique`` (any replica, any group)."""
        owners = {
            c["metadata"]["uid"]
            for c in self.cliques
            if c["metadata"]["name"].endswith(f"-{clique}")
        }
        return [p for p in self.pods if controller(p).get("uid") in owners]


def _controlled_by(
    items: list[dict[str, Any]], owners: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    uids = {o["metadata"]["uid"] for o in owners}
    return [i for i in items if controller(i).get("uid") in uids]


def family(kube: Kube, ns: str, name: str) -> GroveFamily | None:
    pcs = kube.get(PCS, ns, name)
    if pcs is None:
        return None
    groups = _controlled_by(kube.list(PCSG, ns), [pcs])
    cliques = _controlled_by(kube.list(PCLQ, ns), [pcs, *groups])
    pods = _controlled_by(kube.request("GET", kube.path("Pod", ns))["items"], cliques)
    return GroveFamily(pcs, groups, cliques, pods)


def served(kube: Kube, ns: str, name: str, *, pods: int) -> GroveFamily | None:
    """The family once exactly ``pods`` pods are Ready on kwok nodes, every clique at its
    replicas; ``None`` before."""
    found = family(kube, ns, name)
    if found is None or len(found.pods) != pods:
        return None
    if not all(pod_ready(p) for p in found.pods):
        return None
    if not all(p["spec"].get("nodeName", "").startswith(KWOK_NODE_PREFIX) for p in found.pods):
        return None
    ready = all(
        (c.get("status") or {}).get("readyReplicas") == c["spec"]["replicas"] for c in found.cliques
    )
    return found if ready else None


def status_writers(obj: dict[str, Any]) -> set[str]:
    return {
        m["manager"]
        for m in obj["metadata"].get("managedFields") or []
        if m.get("subresource") == "status"
    }
