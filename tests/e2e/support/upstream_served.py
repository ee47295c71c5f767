"""Whether upstream's operator serves a graph, for the test that runs it (no tests here).

Objects are followed by controller reference (graph -> DCDs -> Deployments -> ReplicaSets ->
pods), never by name. The takeover scenarios follow every owner reference instead
(``takeover.py``).
"""

from __future__ import annotations

from typing import Any

from tests.e2e.support.observe import pod_ready, pods
from tests.support.kube import DCD, DGD, Kube, condition, controller


def served_grove(kube: Kube) -> list[str]:
    """``kind/version`` of every grove.io resource the cluster serves."""
    group = kube.request("GET", "/apis/grove.io")
    out = []
    for version in group["versions"]:
        found = kube.request("GET", f"/apis/{version['groupVersion']}")
        resources = [r for r in found["resources"] if "/" not in r["name"]]
        out += [f"{r['kind']}/{version['version']}" for r in resources]
    return sorted(out)


def owned(items: list[dict[str, Any]], owners: list[dict[str, Any]]) -> list[dict[str, Any]]:
    uids = {o["metadata"]["uid"] for o in owners}
    return [i for i in items if controller(i).get("uid") in uids]


def graph_objects(kube: Kube, ns: str, name: str) -> dict[str, list[dict[str, Any]]]:
    """The graph's DCDs, their Deployments, those Deployments' ReplicaSets and their pods."""
    dgd = kube.get(DGD, ns, name)
    dcds = owned(kube.list(DCD, ns), [dgd] if dgd else [])
    deployments = owned(kube.list("Deployment", ns), dcds)
    replica_sets = kube.request("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets")["items"]
    sets = owned(replica_sets, deployments)
    return {
        "graph": [dgd] if dgd else [],
        "dcds": dcds,
        "deployments": deployments,
        "replicasets": sets,
        "pods": owned(pods(kube, ns), sets),
    }


def served(
    kube: Kube, ns: str, name: str, *, graph_ready: bool = True
) -> dict[str, list[dict[str, Any]]] | None:
    """:func:`graph_objects` once every pod the Deployments want is Ready, no other pod is
    left, the DCDs are Available and (``graph_ready``) the graph Ready: the verdict of whichever
    controller serves it."""
    found = graph_objects(kube, ns, name)
    dcds, deployments = found["dcds"], found["deployments"]
    ready = [p for p in found["pods"] if pod_ready(p)]
    wanted = sum(d["spec"]["replicas"] for d in deployments)
    if len(dcds) < 2 or len(deployments) < len(dcds) or len(ready) != wanted:
        return None
    if len(ready) != len(found["pods"]):  # a pod still going or coming
        return None
    if not all(condition(d, "Available").get("status") == "True" for d in dcds):
        return None
    if graph_ready and condition(found["graph"][0], "Ready").get("status") != "True":
        return None
    return found
