"""What a graph's serving objects look like, for the upstream-operator scenarios (no tests here).

Objects are followed by controller reference (graph -> DCDs -> Deployments -> ReplicaSets ->
pods), never by name, because upstream and syncagent name worker objects differently
(docs/parity.md D1).
"""

from __future__ import annotations

from typing import Any

from tests.e2e.support.observe import pod_ready, pods
from tests.support.kube import DCD, DGD, Kube, condition, controller

REVISION = "deployment.kubernetes.io/revision"


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


def identities(found: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """``kind/name`` -> uid (ReplicaSets also their revision): what a takeover must keep."""
    out = {}
    for kind, items in found.items():
        for item in items:
            meta = item["metadata"]
            revision = (meta.get("annotations") or {}).get(REVISION)
            suffix = f" rev {revision}" if kind == "replicasets" else ""
            out[f"{kind}/{meta['name']}"] = meta["uid"] + suffix
    return out


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Every object gone, new or with another uid/revision, one line each."""
    out = [f"gone: {k} ({v})" for k, v in sorted(before.items()) if k not in after]
    out += [f"new: {k} ({v})" for k, v in sorted(after.items()) if k not in before]
    out += [
        f"replaced: {k} ({before[k]} -> {after[k]})"
        for k in sorted(before)
        if k in after and before[k] != after[k]
    ]
    return out


def _state(kind: str, item: dict[str, Any]) -> str:
    meta, status = item["metadata"], item.get("status") or {}
    if kind == "graph":
        return str(condition(item, "Ready").get("status"))
    if kind == "dcds":
        ending = (
            f" deleting, finalizers {meta.get('finalizers')}"
            if meta.get("deletionTimestamp")
            else ""
        )
        return f"{condition(item, 'Available').get('status')}{ending}"
    if kind == "deployments":
        return f"{status.get('readyReplicas')}/{item['spec']['replicas']} ready"
    if kind == "replicasets":
        return f"rev {(meta.get('annotations') or {}).get(REVISION)}"
    return "Ready" if pod_ready(item) else str(status.get("phase"))


def describe(found: dict[str, list[dict[str, Any]]]) -> str:
    """One line per object: what a wait that timed out last saw."""
    return "\n  ".join(
        f"{kind}/{i['metadata']['name']} {i['metadata']['uid'][:8]} {_state(kind, i)}"
        for kind, items in found.items()
        for i in items
    )
