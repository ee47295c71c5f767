"""A DisaggregatedSet and its LeaderWorkerSets as the server holds them, for the unit tests of the
DisaggregatedSet pathway (no tests here; graphs: tests/support/graphs.py)."""

from __future__ import annotations

from typing import Any


def child(
    name: str,
    *,
    role: str,
    revision: str,
    f_hash: str | None,
    ds_uid: str = "ds-uid",
    replicas: int = 1,
    status: tuple[int, int, int] = (1, 1, 1),
    generation: int = 1,
    observed: int = 1,
    created: str = "2026-01-01T10:00:00Z",
    slice_index: int | None = None,
    owned: bool = True,
) -> dict[str, Any]:
    labels = {
        "disaggregatedset.x-k8s.io/name": "ds",
        "disaggregatedset.x-k8s.io/role": role,
        "disaggregatedset.x-k8s.io/revision": revision,
    }
    if slice_index is not None:
        labels["disaggregatedset.x-k8s.io/slice"] = str(slice_index)
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "generation": generation,
        "creationTimestamp": created,
        "labels": labels,
    }
    if f_hash is not None:
        meta["annotations"] = {"nvidia.com/dynamo-ds-template-hash": f_hash}
    if owned:
        meta["ownerReferences"] = [
            {
                "apiVersion": "disaggregatedset.x-k8s.io/v1",
                "kind": "DisaggregatedSet",
                "name": "ds",
                "uid": ds_uid,
                "controller": True,
            }
        ]
    r, u, y = status
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": meta,
        "spec": {"replicas": replicas},
        "status": {
            "observedGeneration": observed,
            "replicas": r,
            "updatedReplicas": u,
            "readyReplicas": y,
        },
    }


def ds_object(*, generation: int = 1, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "ds", "namespace": "ns", "uid": "ds-uid", "generation": generation},
        "spec": {"roles": []},
        "status": status or {},
    }
