"""Issue 26 items 4 and 5 on a real API server: the chart's opt-in graph policy (a
ValidatingAdmissionPolicy) refuses graphs and components whose pod templates ask for
privileged containers, host namespaces or hostPath volumes, where the release reconciles
(tests/cluster/test_graph_policy.py tries every Pod Security control); and
the chart's optional PodDisruptionBudget, anti-affinity and NetworkPolicy, with its grace
period, are accepted by the API server as rendered."""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from syncagent.devcluster import ControlPlane
from syncagent.runtime.leader import LeaseConfig
from syncagent.runtime.manager import ManagerOptions
from tests.cluster.support.graph_policy import refusal
from tests.support.graphs import component, graph
from tests.support.helm import Helm
from tests.support.kube import ApiFailure, Kube
from tests.support.polling import eventually

DEADLINE = 60.0
GUARDS = (
    "crds.install=false",
    "replicaCount=2",
    "podAntiAffinity=hard",
    "podDisruptionBudget.enabled=true",
    "networkPolicy.enabled=true",
)


@dataclass(frozen=True)
class Release:
    name: str
    watched: str
    other: str


@contextlib.contextmanager
def _namespaces(client: Client, *names: str) -> Iterator[None]:
    for name in names:
        client.create(Namespace(metadata=ObjectMeta(name=name, labels={"syncagent-test": "1"})))
    try:
        yield
    finally:
        for name in names:
            client.delete(Namespace, name)


@contextlib.contextmanager
def _release(
    control_plane: ControlPlane, client: Client, tmp_path: Path, *sets: str
) -> Iterator[Release]:
    base = f"g-{uuid.uuid4().hex[:8]}"
    release = Release(base, f"{base}-a", f"{base}-b")
    with _namespaces(client, release.name, release.watched, release.other):
        helm = Helm(control_plane, tmp_path)
        helm.install(release.name, release.name, f"watchNamespaces={{{release.watched}}}", *sets)
        try:
            yield release
        finally:
            helm.uninstall(release.name, release.name)


@pytest.fixture
def guarded(control_plane: ControlPlane, client: Client, tmp_path: Path) -> Iterator[Release]:
    with _release(control_plane, client, tmp_path, *GUARDS, "graphPolicy.enabled=true") as r:
        yield r


def _main(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["components"][0]["podTemplate"]["spec"]


def _privileged(spec: dict[str, Any]) -> None:
    spec["containers"][0]["securityContext"] = {"privileged": True}


def _host_network(spec: dict[str, Any]) -> None:
    spec["hostNetwork"] = True


def _host_pid(spec: dict[str, Any]) -> None:
    spec["hostPID"] = True


def _host_path(spec: dict[str, Any]) -> None:
    spec["volumes"] = [{"name": "root", "hostPath": {"path": "/"}}]


def _privileged_init(spec: dict[str, Any]) -> None:
    spec["initContainers"] = [
        {"name": "init", "image": "busybox", "securityContext": {"privileged": True}}
    ]


def _bad_graph(ns: str, name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = graph(ns, name, [component("Frontend", "frontend")])
    change(_main(doc))
    return doc


# Each refusal names the component's field (tests/cluster/test_graph_policy.py tries every
# Pod Security control).
_FIELD = "spec.components[Frontend].podTemplate.spec."
CASES = [
    (_privileged, _FIELD + "containers[*].securityContext.privileged"),
    (_privileged_init, _FIELD + "containers[*].securityContext.privileged"),
    (_host_network, _FIELD + "hostNetwork asks for a host namespace"),
    (_host_pid, _FIELD + "hostPID asks for a host namespace"),
    (_host_path, _FIELD + "volumes[*].hostPath mounts a hostPath volume"),
]


def test_graph_policy_refuses_escapes_to_the_node_with_a_clear_message(
    guarded: Release, kube: Kube
) -> None:
    ns = guarded.watched
    # A policy starts to act a moment after it is stored: wait for the first refusal.
    first = _bad_graph(ns, "g0", _privileged)
    eventually(lambda: refusal(kube, first), deadline=DEADLINE, what="the policy to act")
    for i, (change, text) in enumerate(CASES):
        name = f"g{i}"
        message = refusal(kube, _bad_graph(ns, name, change))
        assert message is not None, f"{change.__name__}: admitted"
        assert f"DynamoGraphDeployment/{ns}/{name}: {text}" in message, message
        assert "syncagent graph policy" in message
    clean = graph(ns, "clean", [component("Frontend", "frontend")])
    assert refusal(kube, clean) is None
    # An edit that adds an escape is refused too; the graph stays as it was.
    kube.create(clean)
    edited = copy.deepcopy(kube.get("DynamoGraphDeployment", ns, "clean"))
    _host_path(_main(edited))
    with pytest.raises(ApiFailure, match="hostPath"):
        kube.update(edited)


def test_graph_policy_covers_standalone_components_only_where_the_release_reconciles(
    guarded: Release, kube: Kube
) -> None:
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "c", "namespace": guarded.watched},
        "spec": {"backendFramework": "vllm", **component("Frontend", "frontend")},
    }
    _host_path(dcd["spec"]["podTemplate"]["spec"])
    message = eventually(lambda: refusal(kube, dcd), deadline=DEADLINE, what="the refusal")
    assert f"DynamoComponentDeployment/{guarded.watched}/c: spec.podTemplate.spec.volumes" in (
        message
    )
    # The binding covers the watched namespaces only.
    assert refusal(kube, _bad_graph(guarded.other, "g", _privileged)) is None


def test_without_the_graph_policy_privileged_graphs_are_admitted(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path
) -> None:
    with _release(control_plane, client, tmp_path, "crds.install=false") as release:
        assert refusal(kube, _bad_graph(release.watched, "g", _privileged)) is None
        assert refusal(kube, _bad_graph(release.watched, "h", _host_path)) is None


def test_pod_habits_are_accepted_by_the_api_server(guarded: Release, kube: Kube) -> None:
    name = f"{guarded.name}-syncagent"
    pod = kube.get("Deployment", guarded.name, name)["spec"]["template"]["spec"]
    drain = ManagerOptions.__dataclass_fields__["shutdown_grace"].default
    release = LeaseConfig.__dataclass_fields__["retry_period"].default
    assert pod["terminationGracePeriodSeconds"] > drain + release
    (term,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"]["app.kubernetes.io/instance"] == guarded.name
    budget = kube.request(
        "GET", f"/apis/policy/v1/namespaces/{guarded.name}/poddisruptionbudgets/{name}"
    )
    assert budget["spec"]["maxUnavailable"] == 1
    assert budget["spec"]["selector"]["matchLabels"] == term["labelSelector"]["matchLabels"]
    policy = kube.request(
        "GET", f"/apis/networking.k8s.io/v1/namespaces/{guarded.name}/networkpolicies/{name}"
    )
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert [p["port"] for e in policy["spec"]["egress"] for p in e["ports"]] == [443, 6443]
