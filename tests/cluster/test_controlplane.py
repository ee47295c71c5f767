"""The test control plane is a real Kubernetes API server with the pinned CRDs and the GC."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from lightkube import ApiError, Client
from lightkube.generic_resource import create_namespaced_resource
from lightkube.models.meta_v1 import ObjectMeta, OwnerReference
from lightkube.resources.core_v1 import ConfigMap, Namespace

from syncagent.devcluster import ControlPlane, versions
from tests.support.polling import eventually
from tests.support.signals import with_default_sigint

DisaggregatedSet = create_namespaced_resource(
    "disaggregatedset.x-k8s.io", "v1", "DisaggregatedSet", "disaggregatedsets"
)


def role(name: str, *, replicas: int | None = None) -> dict:
    spec: dict = {
        "leaderWorkerTemplate": {
            "size": 2,
            "workerTemplate": {
                "spec": {"containers": [{"name": "main", "image": "registry.example/worker:1"}]}
            },
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"name": name, "spec": spec}


def ds(name: str, roles: list[dict]) -> dict:
    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": name},
        "spec": {"roles": roles},
    }


def test_server_is_the_pinned_kubernetes(control_plane: ControlPlane) -> None:
    assert control_plane.version == versions.KUBERNETES
    print(f"kube-apiserver {control_plane.version}")


@pytest.mark.lws("v0.9.0")
def test_disaggregatedset_comes_back_with_crd_defaults(client: Client, namespace: str) -> None:
    obj = DisaggregatedSet.from_dict(ds("two-roles", [role("prefill"), role("decode")]))
    applied = client.apply(obj, namespace=namespace, field_manager="test")
    roles = applied.to_dict()["spec"]["roles"]
    assert [r["spec"]["startupPolicy"] for r in roles] == ["LeaderCreated", "LeaderCreated"]
    assert [r["spec"]["replicas"] for r in roles] == [1, 1]


@pytest.mark.lws("v0.9.0")
def test_eleven_roles_hit_the_max_items_rule(client: Client, namespace: str) -> None:
    obj = DisaggregatedSet.from_dict(ds("eleven", [role(f"r{i}") for i in range(11)]))
    with pytest.raises(ApiError) as err:
        client.apply(obj, namespace=namespace, field_manager="test")
    assert err.value.status.code == 422
    assert "must have at most 10 items" in err.value.status.message


@pytest.mark.lws("v0.9.0")
def test_mixed_zero_and_positive_replicas_fail_the_cel_rule(client: Client, namespace: str) -> None:
    obj = DisaggregatedSet.from_dict(
        ds("mixed", [role("prefill", replicas=0), role("decode", replicas=2)])
    )
    with pytest.raises(ApiError) as err:
        client.apply(obj, namespace=namespace, field_manager="test")
    assert err.value.status.code == 422
    assert (
        "replicas must be zero for all roles or non-zero for all roles" in err.value.status.message
    )


@pytest.mark.lws("v0.10.0")
def test_v0_10_0_serves_the_role_scaler_crd(client: Client, namespace: str) -> None:
    obj = DisaggregatedSet.from_dict(ds("ten", [role("prefill"), role("decode")]))
    applied = client.apply(obj, namespace=namespace, field_manager="test")
    assert applied.metadata.uid
    scalers = client.list(
        create_namespaced_resource(
            "disaggregatedset.x-k8s.io",
            "v1",
            "DisaggregatedSetRoleScaler",
            "disaggregatedsetrolescalers",
        ),
        namespace=namespace,
    )
    assert list(scalers) == []


def _owner_ref(owner: object, api_version: str, kind: str) -> OwnerReference:
    meta = owner.metadata  # type: ignore[attr-defined]
    return OwnerReference(
        apiVersion=api_version,
        kind=kind,
        name=meta.name,
        uid=meta.uid,
        controller=True,
        blockOwnerDeletion=True,
    )


def test_deleting_an_owner_cascades_to_its_dependents(client: Client, namespace: str) -> None:
    owner = client.create(ConfigMap(metadata=ObjectMeta(name="owner")), namespace=namespace)
    cr_owner = client.apply(
        DisaggregatedSet.from_dict(ds("cr-owner", [role("a"), role("b")])),
        namespace=namespace,
        field_manager="test",
    )
    for name, ref in (
        ("dep-of-configmap", _owner_ref(owner, "v1", "ConfigMap")),
        ("dep-of-ds", _owner_ref(cr_owner, "disaggregatedset.x-k8s.io/v1", "DisaggregatedSet")),
    ):
        client.create(
            ConfigMap(metadata=ObjectMeta(name=name, ownerReferences=[ref])), namespace=namespace
        )
    client.delete(ConfigMap, "owner", namespace=namespace)
    client.delete(DisaggregatedSet, "cr-owner", namespace=namespace)
    eventually(
        lambda: _gone(client, "dep-of-configmap", namespace),
        deadline=60.0,
        what="GC of dep-of-configmap",
    )
    eventually(lambda: _gone(client, "dep-of-ds", namespace), deadline=60.0, what="GC of dep-of-ds")


def test_namespaces_finish_deleting(client: Client) -> None:
    client.create(Namespace(metadata=ObjectMeta(name="finishes-deleting")))
    client.create(ConfigMap(metadata=ObjectMeta(name="x")), namespace="finishes-deleting")
    client.delete(Namespace, "finishes-deleting")
    eventually(
        lambda: _ns_gone(client, "finishes-deleting"), deadline=60.0, what="namespace deletion"
    )


def _gone(client: Client, name: str, namespace: str) -> bool:
    try:
        client.get(ConfigMap, name, namespace=namespace)
    except ApiError as err:
        return err.status.code == 404
    return False


def _ns_gone(client: Client, name: str) -> bool:
    try:
        client.get(Namespace, name)
    except ApiError as err:
        return err.status.code == 404
    return False


_STARTER = textwrap.dedent(
    """
    import time
    from syncagent.devcluster import ControlPlane
    with ControlPlane() as cp:
        print(" ".join(map(str, cp.pids)), flush=True)
        time.sleep(3600)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_interrupted_run_leaves_no_process_behind(sig: signal.Signals, tmp_path: Path) -> None:
    # The interrupt under test must reach the child whatever this run inherited.
    proc = subprocess.Popen(
        with_default_sigint([sys.executable, "-c", _STARTER]),
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 3
        assert all(_running(pid) for pid in pids)
        proc.send_signal(sig)
        proc.wait(timeout=60)
        eventually(
            lambda: not any(_running(pid) for pid in pids),
            deadline=60.0,
            what=f"children gone after {sig.name}",
        )
    finally:
        # A failed run must not leave its control plane behind (SIGKILL takes the children:
        # the sigkill case proves it).
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"
