"""Sparse desired objects for the SSA cluster tests (no tests here).

Every object is the minimum the real CRD schema accepts; the server fills in its defaults.
"""

from __future__ import annotations

from typing import Any

IMAGE = "registry.example/app:1"


def meta(name: str, namespace: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, **extra}


def pod_spec(image: str = IMAGE) -> dict[str, Any]:
    return {"containers": [{"name": "main", "image": image, "ports": [{"containerPort": 8000}]}]}


def deployment(
    namespace: str,
    name: str = "web",
    *,
    replicas: int = 2,
    labels: dict[str, str] | None = None,
    selector: dict[str, str] | None = None,
    image: str = IMAGE,
) -> dict[str, Any]:
    selector = selector or {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, namespace, labels=labels or {"app": name}),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": selector}, "spec": pod_spec(image)},
        },
    }


def service(namespace: str, name: str = "web", *, labels: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, namespace, labels=labels or {"app": name}),
        "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 8000}]},
    }


def lws_spec(*, replicas: int = 1) -> dict[str, Any]:
    return {
        "replicas": replicas,
        "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": pod_spec()}},
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0},
        },
        "networkConfig": {"subdomainPolicy": "Shared"},
    }


def leaderworkerset(namespace: str, name: str = "lws") -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": meta(name, namespace),
        "spec": lws_spec(),
    }


def disaggregatedset(namespace: str, name: str = "ds") -> dict[str, Any]:
    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": meta(name, namespace),
        "spec": {"roles": [{"name": role, "spec": lws_spec()} for role in ("prefill", "decode")]},
    }


def podcliqueset(namespace: str, name: str = "pcs") -> dict[str, Any]:
    clique = {
        "name": "worker",
        "spec": {"roleName": "worker", "replicas": 1, "podSpec": pod_spec()},
    }
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": meta(name, namespace),
        "spec": {"replicas": 1, "template": {"cliques": [clique]}},
    }


def configmap(namespace: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name, namespace)}


def refs_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])
