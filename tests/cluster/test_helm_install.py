"""`helm install` of the chart onto the test server. No kubelets run here, so these tests check
the objects, not pods."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from lightkube import ApiError, Client
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import Service, ServiceAccount
from lightkube.resources.rbac_authorization_v1 import (
    ClusterRole,
    ClusterRoleBinding,
    Role,
    RoleBinding,
)
from lightkube.types import PatchType

from syncagent.devcluster import ControlPlane
from tests.support.helm import CHART, DGD, Helm, graph
from tests.support.history import APISERVICE
from tests.support.kube import Kube

APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"

OUR_CRDS = tuple(
    yaml.safe_load(path.read_text())["metadata"]["name"]
    for path in sorted((CHART / "files" / "crds").glob("*.yaml"))
)


@pytest.fixture
def helm(control_plane: ControlPlane, tmp_path: Path) -> Helm:
    return Helm(control_plane, tmp_path)


@pytest.fixture
def release(helm: Helm, namespace: str) -> Iterator[str]:
    """A release name unique to this test (its ClusterRoles are cluster-scoped)."""
    yield namespace
    status = json.loads(helm("list", "-n", namespace, "-o", "json"))
    if any(r["name"] == namespace for r in status):
        helm.uninstall(namespace, namespace)


def test_chart_installs_onto_the_test_server(
    helm: Helm, release: str, namespace: str, client: Client, kube: Kube
) -> None:
    out = helm.install(release, namespace, "crds.install=false")
    full = f"{release}-syncagent"
    assert f"kubectl -n {namespace} rollout status deployment/{full}" in out  # NOTES

    deployment = client.get(Deployment, full, namespace=namespace)
    pod = deployment.spec.template.spec
    assert pod.serviceAccountName == full
    assert pod.securityContext.runAsNonRoot is True
    assert pod.securityContext.seccompProfile.type == "RuntimeDefault"
    agent = pod.containers[0]
    assert agent.securityContext.readOnlyRootFilesystem is True
    assert agent.securityContext.capabilities.drop == ["ALL"]
    assert agent.args[0] == "run"
    assert f"--leader-election-namespace={namespace}" in agent.args

    account = client.get(ServiceAccount, full, namespace=namespace)
    assert account.metadata.labels["app.kubernetes.io/instance"] == release
    service = client.get(Service, f"{full}-metrics", namespace=namespace)
    assert service.spec.ports[0].name == "metrics"
    history = client.get(Service, f"{full}-history", namespace=namespace)
    assert [p.name for p in history.spec.ports] == ["history"]
    view = client.get(ClusterRole, f"{full}-history-view")
    assert view.rules[0].resources == ["ownershiphistories"]
    # The API server took the APIService (its caBundle valid); the pod runs on no node here.
    api = kube.request("GET", f"{APISERVICES}/{APISERVICE}")
    assert api["spec"]["service"] == {
        "name": f"{full}-history",
        "namespace": namespace,
        "port": 443,
    }
    assert f"kubectl get apiservice {APISERVICE}" in out  # NOTES
    role = client.get(Role, f"{full}-leader-election", namespace=namespace)
    assert role.rules[0].resources == ["leases"]
    client.get(RoleBinding, f"{full}-leader-election", namespace=namespace)
    for name in (full, f"{full}-namespaced"):
        client.get(ClusterRole, name)
        binding = client.get(ClusterRoleBinding, name)
        assert [(s.name, s.namespace) for s in binding.subjects] == [(full, namespace)]

    status = json.loads(helm("status", release, "-n", namespace, "-o", "json"))
    assert status["info"]["status"] == "deployed"

    helm.uninstall(release, namespace)
    names = [a["metadata"]["name"] for a in kube.request("GET", APISERVICES)["items"]]
    assert APISERVICE not in names
    for kind in (ClusterRole, ClusterRoleBinding):
        with pytest.raises(ApiError) as gone:
            client.get(kind, full)
        assert gone.value.status.code == 404


def test_chart_owns_the_crds_and_uninstall_keeps_them(
    helm: Helm, release: str, namespace: str, client: Client
) -> None:
    # The test server installed our CRDs already; the chart adopts them, as it would after a
    # `syncagent crds | kubectl apply` install.
    assert "dynamographdeployments.nvidia.com" in OUR_CRDS
    before = {name: client.get(CustomResourceDefinition, name) for name in OUR_CRDS}
    try:
        out = helm.install(release, namespace, extra=("--take-ownership",))
        plurals = ", ".join(sorted(name.split(".")[0] for name in OUR_CRDS))
        assert f"\n\nsyncagent's CRDs ({plurals}) are managed by this release." in out  # NOTES
        for name in OUR_CRDS:
            meta = client.get(CustomResourceDefinition, name).metadata
            assert meta.annotations["meta.helm.sh/release-name"] == release
            assert meta.annotations["helm.sh/resource-policy"] == "keep"
            assert meta.labels["app.kubernetes.io/managed-by"] == "Helm"
        client.create(DGD.from_dict(graph(namespace, "survivor")))

        out = helm("uninstall", release, "-n", namespace)
        assert "kept due to the resource policy" in out
        for name in OUR_CRDS:
            crd = client.get(CustomResourceDefinition, name)
            assert crd.metadata.deletionTimestamp is None
            assert crd.metadata.uid == before[name].metadata.uid
        assert client.get(DGD, "survivor", namespace=namespace).metadata.name == "survivor"
    finally:
        _forget_helm(client, before)


def _forget_helm(client: Client, before: dict[str, CustomResourceDefinition]) -> None:
    """Put the shared CRDs' labels and annotations back as the test server had them."""
    for name, crd in before.items():
        live = client.get(CustomResourceDefinition, name).metadata
        labels = {k: None for k in live.labels or {} if k not in (crd.metadata.labels or {})}
        annotations = {
            k: None for k in live.annotations or {} if k not in (crd.metadata.annotations or {})
        }
        client.patch(
            CustomResourceDefinition,
            name,
            {"metadata": {"labels": labels, "annotations": annotations}},
            patch_type=PatchType.MERGE,
        )
