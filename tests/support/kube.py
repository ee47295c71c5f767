"""Raw JSON requests to the API server, and reading what they return (no tests here).

:class:`Kube` sends JSON through the admin lightkube client's connection and raises
:class:`ApiFailure` on an HTTP error, so a test sees exactly what the server answered. The
``kube`` fixture (``tests/conftest.py``) is one bound to the test's control plane.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
import orjson
from lightkube import Client

DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"
DS = "DisaggregatedSet"
LWS = "LeaderWorkerSet"

_NVIDIA = "/apis/nvidia.com/v1beta1/namespaces/{ns}"
_GROVE = "/apis/grove.io/v1alpha1/namespaces/{ns}"
PATHS = {
    DGD: _NVIDIA + "/dynamographdeployments",
    DCD: _NVIDIA + "/dynamocomponentdeployments",
    "DynamoGraphDeploymentScalingAdapter": _NVIDIA + "/dynamographdeploymentscalingadapters",
    "DynamoCheckpoint": "/apis/nvidia.com/v1alpha1/namespaces/{ns}/dynamocheckpoints",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets",
    "StatefulSet": "/apis/apps/v1/namespaces/{ns}/statefulsets",
    "ControllerRevision": "/apis/apps/v1/namespaces/{ns}/controllerrevisions",
    LWS: "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{ns}/leaderworkersets",
    DS: "/apis/disaggregatedset.x-k8s.io/v1/namespaces/{ns}/disaggregatedsets",
    "PodCliqueSet": _GROVE + "/podcliquesets",
    "PodClique": _GROVE + "/podcliques",
    "PodCliqueScalingGroup": _GROVE + "/podcliquescalinggroups",
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "Service": "/api/v1/namespaces/{ns}/services",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Event": "/api/v1/namespaces/{ns}/events",
    "EndpointSlice": "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "Lease": "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
}


# The test's own requests: not what is under test, so a loaded machine (a chaos loop beside the
# cluster tier, load 30 on 2 cores) must not fail them at lightkube's 10 s default.
TEST_TIMEOUT = httpx2.Timeout(60.0)


class ApiFailure(Exception):
    def __init__(self, code: int, body: Any) -> None:
        super().__init__(f"HTTP {code}: {body}")
        self.code = code
        self.body = body


class Kube:
    """JSON requests through the admin lightkube client's HTTP connection."""

    def __init__(self, client: Any) -> None:
        self.http = client._client._client
        self.config = client._client.config

    def separate(self) -> Kube:
        """Another Kube on its own connections: for a thread, since one connection must never
        be read by two threads at once."""
        return Kube(Client(config=self.config, timeout=TEST_TIMEOUT))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        **params: str,
    ) -> Any:
        content = orjson.dumps(body) if body is not None else None
        response = self.http.request(
            method, path, content=content, headers={"Content-Type": content_type}, params=params
        )
        data = response.json() if response.content else None
        if response.status_code >= 400:
            raise ApiFailure(response.status_code, data)
        return data

    def path(self, kind: str, ns: str, name: str = "", sub: str = "") -> str:
        base = PATHS[kind].format(ns=ns)
        return "/".join(p for p in (base, name, sub) if p)

    def get(self, kind: str, ns: str, name: str) -> dict[str, Any] | None:
        try:
            return self.request("GET", self.path(kind, ns, name))
        except ApiFailure as err:
            if err.code == 404:
                return None
            raise

    def list(self, kind: str, ns: str) -> list[dict[str, Any]]:
        return self.request("GET", self.path(kind, ns))["items"]

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        ns = obj["metadata"]["namespace"]
        return self.request("POST", self.path(obj["kind"], ns), obj)

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        return self.request("PUT", self.path(obj["kind"], meta["namespace"], meta["name"]), obj)

    def merge(
        self,
        kind: str,
        ns: str,
        name: str,
        patch: dict[str, Any],
        *,
        sub: str = "",
        manager: str = "test-user",
    ) -> dict[str, Any]:
        return self.request(
            "PATCH",
            self.path(kind, ns, name, sub),
            patch,
            content_type="application/merge-patch+json",
            fieldManager=manager,
        )

    def delete(self, kind: str, ns: str, name: str) -> None:
        self.request("DELETE", self.path(kind, ns, name))

    def edit_graph(
        self, ns: str, name: str, change: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        """GET, change, PUT; retried on a write conflict (the agent writes status)."""
        for _ in range(20):
            graph = self.get("DynamoGraphDeployment", ns, name)
            assert graph is not None
            change(graph)
            try:
                return self.update(graph)
            except ApiFailure as err:
                if err.code != 409:
                    raise
        raise AssertionError(f"could not update DynamoGraphDeployment {ns}/{name}")


# -- reading objects -----------------------------------------------------------------------------


def names(kube: Kube, kind: str, ns: str) -> set[str]:
    return {o["metadata"]["name"] for o in kube.list(kind, ns)}


def controller(obj: dict[str, Any] | None) -> dict[str, Any]:
    """The one controller reference of ``obj``, or ``{}`` when it has none (or several)."""
    refs = [
        r
        for r in ((obj or {}).get("metadata") or {}).get("ownerReferences", [])
        if r.get("controller")
    ]
    return refs[0] if len(refs) == 1 else {}


def condition(obj: dict[str, Any] | None, type_: str) -> dict[str, Any]:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == type_:
            return cond
    return {}


def ready_reason(kube: Kube, ns: str, name: str) -> str:
    return condition(kube.get(DGD, ns, name), "Ready").get("reason", "")


def error_events(kube: Kube, ns: str) -> list[str]:
    """``Kind/name Reason: message`` of every reconcile error or ownership refusal event."""
    return [
        f"{e['involvedObject']['kind']}/{e['involvedObject']['name']} {e['reason']}: {e['message']}"
        for e in kube.list("Event", ns)
        if e["reason"] in ("ReconcileError", "OwnershipConflict")
    ]


def events_for(kube: Kube, ns: str, name: str, reason: str) -> list[dict[str, Any]]:
    return [
        e
        for e in kube.list("Event", ns)
        if e.get("involvedObject", {}).get("name") == name and e.get("reason") == reason
    ]


def main_of(template: dict[str, Any]) -> dict[str, Any]:
    """The ``main`` container of a pod template."""
    return next(c for c in template["spec"]["containers"] if c["name"] == "main")


def service_selector(kube: Kube, ns: str, name: str) -> dict[str, str]:
    """The selector of Service ``name``; empty while it does not exist."""
    return (kube.get("Service", ns, name) or {}).get("spec", {}).get("selector", {})
