"""managedFields snapshots of one Deployment, for the ownership history's unit tests (no tests
here)."""

from __future__ import annotations

from typing import Any

OURS = "syncagent/workloads"
REPLICAS = {"f:spec": {"f:replicas": {}}}
IMAGE = {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"main"}': {}}}}}}


def ours(name: str) -> bool:
    return name.startswith("syncagent/")


def entry(manager: str, fields: dict[str, Any], *, op: str = "Apply", sub: str = "") -> dict:
    out = {"manager": manager, "operation": op, "apiVersion": "apps/v1", "fieldsV1": fields}
    if sub:
        out["subresource"] = sub
    return out


def deployment(replicas: int, *entries: dict, rv: str = "1", uid: str = "u1") -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "ns",
            "uid": uid,
            "resourceVersion": rv,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"team": "a"},
            "managedFields": list(entries),
        },
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "main"}]}}},
    }


def merged(*sets: dict) -> dict:
    out: dict = {}
    for s in sets:
        for k, v in s.items():
            out[k] = merged(out.get(k, {}), v) if v else v
    return out


def scaled_away() -> tuple[dict, dict]:
    """Our manager held replicas and the container; kubectl scale took replicas."""
    old = deployment(2, entry(OURS, merged(REPLICAS, IMAGE)), rv="1")
    new = deployment(
        5,
        entry(OURS, IMAGE),
        entry("kubectl-scale", REPLICAS, op="Update", sub="scale"),
        rv="2",
    )
    return old, new
