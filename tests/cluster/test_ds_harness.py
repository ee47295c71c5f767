"""Helpers for the DS / Grove / migration cluster tests (no tests here).

The agent runs as a subprocess (``test_agent_support``); :class:`FakeDsController` plays the DS
controller; :func:`simulate_dcd_ready` plays the LWS/Deployment controllers for DCD workloads
only; :class:`ServingRecorder` watches the graph's objects and checks, on every event, that every
watched component has a Service selecting a ready workload.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

import orjson
from test_agent_support import (
    NOW,
    PATHS,
    Kube,
    component,
    condition,
    eventually,
)

PATHS.update(
    {
        "DisaggregatedSet": "/apis/disaggregatedset.x-k8s.io/v1/namespaces/{ns}/disaggregatedsets",
        "PodCliqueSet": "/apis/grove.io/v1alpha1/namespaces/{ns}/podcliquesets",
        "PodClique": "/apis/grove.io/v1alpha1/namespaces/{ns}/podcliques",
        "PodCliqueScalingGroup": "/apis/grove.io/v1alpha1/namespaces/{ns}/podcliquescalinggroups",
        "DynamoCheckpoint": "/apis/nvidia.com/v1alpha1/namespaces/{ns}/dynamocheckpoints",
    }
)

DEADLINE = 90.0
DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"
DS = "DisaggregatedSet"
LWS = "LeaderWorkerSet"
ENABLE_DS = "nvidia.com/enable-disaggregatedset"
ENABLE_GROVE = "nvidia.com/enable-grove"


def ds_components(**extra: Any) -> list[dict[str, Any]]:
    """Frontend + multinode decode + multinode prefill (disaggregatedset.md example 1)."""
    return [
        component("Frontend", "frontend"),
        component("decode", "decode", multinode=True, **extra),
        component("prefill", "prefill", multinode=True, **extra),
    ]


def ds_graph(ns: str, name: str, components: list[dict[str, Any]], **annotations: str) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": DGD,
        "metadata": meta,
        "spec": {"backendFramework": "vllm", "components": copy.deepcopy(components)},
    }


def names(kube: Kube, kind: str, ns: str) -> set[str]:
    return {o["metadata"]["name"] for o in kube.list(kind, ns)}


def controller(obj: dict[str, Any] | None) -> dict[str, Any]:
    refs = [
        r
        for r in ((obj or {}).get("metadata") or {}).get("ownerReferences", [])
        if r.get("controller")
    ]
    return refs[0] if len(refs) == 1 else {}


def ready_reason(kube: Kube, ns: str, name: str) -> str:
    return condition(kube.get(DGD, ns, name), "Ready").get("reason", "")


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


def until(
    check: Callable[[], Any], *, step: Callable[[], None], what: str, deadline: float = DEADLINE
) -> Any:
    """Run ``step`` (fake controllers) and poll ``check`` until it holds."""

    def probe() -> Any:
        step()
        return check()

    return eventually(probe, deadline=deadline, what=what)


# -- the serving recorder ------------------------------------------------------------------------


class ServingRecorder:
    """Watches LeaderWorkerSets and Services of a namespace (list + watch streams) and checks
    after every event that each component in ``components`` has its Service ``<dgd>-<c>``
    selecting at least one ready LeaderWorkerSet (leader template labels match the selector).
    Violations are kept with the state that caused them."""

    def __init__(self, kube: Kube, ns: str, graph: str, components: list[str]) -> None:
        self.kube, self.ns, self.graph, self.components = kube, ns, graph, components
        self.objects: dict[str, dict[str, dict[str, Any]]] = {LWS: {}, "Service": {}}
        self.violations: list[str] = []
        self.events = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> ServingRecorder:
        for kind in (LWS, "Service"):
            listed = self.kube.request("GET", self.kube.path(kind, self.ns))
            for obj in listed["items"]:
                self.objects[kind][obj["metadata"]["name"]] = obj
            rv = listed["metadata"]["resourceVersion"]
            thread = threading.Thread(target=self._watch, args=(kind, rv), daemon=True)
            thread.start()
            self._threads.append(thread)
        with self._lock:
            self._check("initial state")
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        # Watches end within their 5 s server timeout; no thread may outlive the test.
        for thread in self._threads:
            thread.join(timeout=30)
        assert not any(t.is_alive() for t in self._threads), "a recorder watch did not stop"

    def _watch(self, kind: str, rv: str) -> None:
        own = self.kube.separate()
        try:
            self._stream(own, kind, rv)
        finally:
            own.http.close()

    def _stream(self, kube: Kube, kind: str, rv: str) -> None:
        path = kube.path(kind, self.ns)
        while not self._stop.is_set():
            try:
                with kube.http.stream(
                    "GET", path, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}
                ) as response:
                    for line in response.iter_lines():
                        if self._stop.is_set():
                            return
                        if not line:
                            continue
                        event = orjson.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":
                            return
                        rv = obj["metadata"]["resourceVersion"]
                        with self._lock:
                            if event["type"] == "DELETED":
                                self.objects[kind].pop(obj["metadata"]["name"], None)
                            else:
                                self.objects[kind][obj["metadata"]["name"]] = obj
                            self.events += 1
                            self._check(f"{event['type']} {kind} {obj['metadata']['name']}")
            except Exception:
                if self._stop.is_set():
                    return

    def _check(self, cause: str) -> None:
        for c in self.components:
            svc = self.objects["Service"].get(f"{self.graph}-{c.lower()}")
            if svc is None:
                self.violations.append(f"{cause}: Service of {c} missing")
                continue
            selector = svc["spec"].get("selector") or {}
            if not any(_serves(lws, selector) for lws in self.objects[LWS].values()):
                self.violations.append(
                    f"{cause}: no ready workload selected by {c}'s Service {selector}"
                )


def _serves(lws: dict[str, Any], selector: dict[str, str]) -> bool:
    if lws["metadata"].get("deletionTimestamp"):
        return False
    status = lws.get("status") or {}
    if int(status.get("readyReplicas") or 0) < 1:
        return False
    template = (
        lws["spec"]["leaderWorkerTemplate"].get("leaderTemplate")
        or lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    )
    labels = (template.get("metadata") or {}).get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())
