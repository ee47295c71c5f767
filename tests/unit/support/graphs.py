"""Graphs and child objects shared by the DisaggregatedSet / Grove unit tests (no tests here)."""

from __future__ import annotations

import copy
from typing import Any

IMAGE = "registry.example/vllm-runtime:1"


def worker(name: str, ctype: str, *, nodes: int = 2, **extra: Any) -> dict[str, Any]:
    component: dict[str, Any] = {
        "name": name,
        "type": ctype,
        "podTemplate": {
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": IMAGE,
                        "command": ["python3", "-m", "dynamo.vllm"],
                        "args": ["--model", "Qwen/Qwen3-0.6B"],
                    }
                ]
            }
        },
    }
    if nodes > 1:
        component["multinode"] = {"nodeCount": nodes}
    return {**component, **extra}


def frontend(name: str = "Frontend") -> dict[str, Any]:
    return {
        "name": name,
        "type": "frontend",
        "replicas": 1,
        "podTemplate": {
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": IMAGE,
                        "command": ["python3", "-m", "dynamo.frontend"],
                    }
                ]
            }
        },
    }


def graph(
    name: str = "vllm-disagg",
    *,
    components: list[dict[str, Any]] | None = None,
    namespace: str = "ns",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    comps = components
    if comps is None:
        comps = [frontend(), worker("decode", "decode"), worker("prefill", "prefill")]
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": "uid-" + name,
            "generation": 1,
            "annotations": dict(annotations or {}),
        },
        "spec": {"components": copy.deepcopy(comps), **spec},
    }


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
