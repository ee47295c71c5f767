"""The built image's entrypoint as the chart runs it: the chart installed on the test control
plane, the agent container's command, args, env and security settings taken from the live
Deployment, the ServiceAccount token where Kubernetes mounts it, and a graph that converges.
No kubelet and no workload controllers run here: the test writes workload status."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Namespace

import syncagent
from syncagent.devcluster import ControlPlane
from tests.image.support.build import Built, index
from tests.image.support.container import Bundle, Container, Pod, unpack
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import example_graph
from tests.support.helm import Helm, ca_file
from tests.support.kube import Kube, ready_reason
from tests.support.polling import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.helm]
DEADLINE = 120.0
POD_NAME = "syncagent-7d9f8c6b5-x2x4z"


@pytest.fixture(scope="module")
def bundle(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return unpack(built.archive, syncagent.__version__, tmp_path_factory.mktemp("run"))


@pytest.fixture
def release(
    control_plane: ControlPlane, client: Client, namespace: str, tmp_path: Path
) -> Iterator[str]:
    """The chart, installed with its defaults except the watched namespace and free ports."""
    release_ns = f"{namespace}-sys"
    client.create(Namespace(metadata=ObjectMeta(name=release_ns, labels={"syncagent-test": "1"})))
    helm = Helm(control_plane, tmp_path)
    metrics, health, history = _free_ports(3)
    try:
        helm.install(
            release_ns,
            release_ns,
            "crds.install=false",  # the test control plane has them already
            f"watchNamespaces={{{namespace}}}",
            # The test server serves Grove's CRDs but runs no Grove operator: the Component
            # pathway, whose workloads the test can make ready.
            "capabilities.grove=false",
            f"metrics.port={metrics}",
            f"health.port={health}",
            f"history.port={history}",
        )
        try:
            yield release_ns
        finally:
            helm.uninstall(release_ns, release_ns)
    finally:
        client.delete(Namespace, release_ns)


def test_entrypoint_converges_a_graph_with_the_chart_service_account(
    built: Built,
    bundle: Bundle,
    control_plane: ControlPlane,
    client: Client,
    kube: Kube,
    namespace: str,
    release: str,
    tmp_path: Path,
) -> None:
    deployment = client.get(Deployment, f"{release}-syncagent", namespace=release).to_dict()
    pod_spec = deployment["spec"]["template"]["spec"]
    (container,) = pod_spec["containers"]
    # The chart's default image is the one this archive holds.
    (manifest,) = index(built.archive)["manifests"]
    assert container["image"] == manifest["annotations"]["io.containerd.image.name"]

    pod = _pod(control_plane, bundle, pod_spec, container, release)
    agent = Container(bundle, pod, log=tmp_path / "agent.log")
    try:
        health = _port(container, "health")
        eventually(
            lambda: _ready(agent, health), deadline=60, what="the container's agent to be ready"
        )
        # It is the image's entrypoint, chrooted into the unpacked image, as the chart's user.
        assert agent.root() == bundle.rootfs.resolve()
        assert agent.status()["Uid"].split() == ["65532"] * 4

        kube.create(example_graph(namespace))

        def converged() -> bool:
            simulate_ready(kube, namespace)
            return ready_reason(kube, namespace, "demo") == "all_resources_are_ready"

        try:
            eventually(converged, deadline=DEADLINE, what="the graph to become Ready")
        except AssertionError as err:
            raise AssertionError(f"{err}\nagent log:\n{agent.logs()[-6000:]}") from None
        lease = client.get(Lease, "syncagent", namespace=release)
        assert (lease.spec.holderIdentity or "").startswith(f"{POD_NAME}_")
    finally:
        code = agent.stop()
    logs = agent.logs()
    assert code == 0, f"the agent did not stop cleanly on SIGTERM ({code}):\n{logs[-4000:]}"
    denied = [line for line in logs.splitlines() if "forbidden" in line.lower()]
    assert not denied, "the chart's RBAC denied requests:\n" + "\n".join(denied[:20])


def _pod(
    control_plane: ControlPlane,
    bundle: Bundle,
    pod_spec: dict[str, Any],
    container: dict[str, Any],
    release: str,
) -> Pod:
    """The process the kubelet would start: command replaces the entrypoint, args follow."""
    host, port = control_plane.server.removeprefix("https://").rsplit(":", 1)
    field = {"metadata.name": POD_NAME, "metadata.namespace": release}
    env = {
        **bundle.env(),
        "HOSTNAME": POD_NAME,
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
    }
    for var in container.get("env", []):
        ref = (var.get("valueFrom") or {}).get("fieldRef")
        env[var["name"]] = field[ref["fieldPath"]] if ref else var["value"]
    security = {**pod_spec.get("securityContext", {}), **container.get("securityContext", {})}
    account = pod_spec["serviceAccountName"]
    return Pod(
        argv=[
            *(container.get("command") or bundle.runtime["process"]["args"]),
            *list(container.get("args", [])),
        ],
        env=env,
        uid=security["runAsUser"],
        gid=security["runAsGroup"],
        read_only_root=bool(security.get("readOnlyRootFilesystem")),
        service_account={
            "token": control_plane.token_for(namespace=release, service_account=account),
            "ca.crt": Path(ca_file(control_plane)).read_text(),
            "namespace": release,
        },
    )


def _port(container: dict[str, Any], name: str) -> int:
    return next(p["containerPort"] for p in container["ports"] if p["name"] == name)


def _ready(agent: Container, port: int) -> bool:
    if agent.proc.poll() is not None:
        raise AssertionError(
            f"the agent exited with {agent.proc.returncode}:\n{agent.logs()[-4000:]}"
        )
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def _free_ports(count: int) -> list[int]:
    sockets = [socket.create_server(("127.0.0.1", 0)) for _ in range(count)]
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports
